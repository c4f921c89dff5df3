import { initReactI18next } from "react-i18next";
import { i18n, loadFullCatalogue } from "./lib/i18n.ts";

// Unit tests translate any key: the whole catalogue, as on a signed-in page.
await loadFullCatalogue();
// Components rendered by tests translate through the same instance, as in the app (app.tsx).
initReactI18next.init(i18n);
