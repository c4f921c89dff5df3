import i18next, { type i18n as I18n } from "i18next";
import { initReactI18next } from "react-i18next";
import en from "../locales/en.json";

export const defaultNS = "translation";
export const resources = { en: { translation: en } } as const;

/**
 * The one i18next instance with the English catalogue (the spec's keyed texts). Initialised
 * synchronously at import, so plain modules (errors.ts) and tests can translate right away.
 */
export const i18n: I18n = i18next.createInstance();

void i18n.use(initReactI18next).init({
  lng: "en",
  fallbackLng: "en",
  defaultNS,
  resources,
  initAsync: false,
  // React escapes text itself; error texts are plain strings shown as text, never as HTML.
  interpolation: { escapeValue: false },
});

export const t = i18n.t.bind(i18n);
