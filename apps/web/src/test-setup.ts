import { loadFullCatalogue } from "./lib/i18n.ts";

// Unit tests translate any key: the whole catalogue, as on a signed-in page.
await loadFullCatalogue();
