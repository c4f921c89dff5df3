import i18next, { type i18n as I18n } from "i18next";
// The sections the pages before sign-in use (login, sign-up, password reset, errors, banners…):
// named imports of the catalogue as its own module (`?public`; the whole file is imported below
// for the rest) keep only these in the first chunk (issue 17, first visit speed).
import {
  app,
  banners,
  bootstrap,
  captcha,
  changelog,
  cli_login,
  confirm,
  error_page,
  errors,
  form,
  login,
  nav,
  not_found,
  password_reset,
  profile,
  reauth,
  saml,
  signup,
  social,
  status_page,
  two_factor,
  verify_email,
} from "../locales/en.json?public";
import { withChunkTimeout } from "./chunk.ts";

export const defaultNS = "translation";

const publicSections = {
  app,
  banners,
  bootstrap,
  captcha,
  changelog,
  cli_login,
  confirm,
  error_page,
  errors,
  form,
  login,
  nav,
  not_found,
  password_reset,
  profile,
  reauth,
  saml,
  signup,
  social,
  status_page,
  two_factor,
  verify_email,
};

/**
 * The one i18next instance with the English catalogue (the spec's keyed texts). Initialised
 * synchronously at import with the sections of the pages before sign-in, so plain modules
 * (errors.ts) can translate right away; the rest (devices, fleets, releases…) is added by
 * `loadFullCatalogue`, which the signed-in routes wait for before they render. Free of React: the
 * login page renders before React loads; the app hands this instance to react-i18next when it starts.
 */
export const i18n: I18n = i18next.createInstance();

void i18n.init({
  lng: "en",
  fallbackLng: "en",
  defaultNS,
  resources: { en: { translation: publicSections } },
  initAsync: false,
  // React and the login page (textContent) escape text themselves; error texts are never HTML.
  interpolation: { escapeValue: false },
});

let full: Promise<void> | undefined;

/** Adds the whole catalogue (once); the signed-in routes' guard awaits it. */
export function loadFullCatalogue(): Promise<void> {
  full ??= withChunkTimeout(import("../locales/en.json")).then(
    (module) => {
      i18n.addResourceBundle("en", defaultNS, module.default, true, true);
    },
    (error: unknown) => {
      full = undefined;
      throw error;
    },
  );
  return full;
}

export const t = i18n.t.bind(i18n);
