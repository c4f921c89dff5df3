/** Unique id of this build, set by vite.config.ts (also written to dist/build-info.json). */
declare const __FLOTILLA_BUILD_ID__: string;

/**
 * The catalogue's sections that the pages before sign-in need (lib/i18n.ts), imported by name
 * from a separate instance of locales/en.json so that the bundle keeps only those.
 */
declare module "*/locales/en.json?public" {
  type Catalogue = typeof import("./locales/en.json");
  export const app: Catalogue["app"];
  export const banners: Catalogue["banners"];
  export const bootstrap: Catalogue["bootstrap"];
  export const captcha: Catalogue["captcha"];
  export const changelog: Catalogue["changelog"];
  export const cli_login: Catalogue["cli_login"];
  export const confirm: Catalogue["confirm"];
  export const error_page: Catalogue["error_page"];
  export const errors: Catalogue["errors"];
  export const form: Catalogue["form"];
  export const login: Catalogue["login"];
  export const nav: Catalogue["nav"];
  export const not_found: Catalogue["not_found"];
  export const password_reset: Catalogue["password_reset"];
  export const profile: Catalogue["profile"];
  export const reauth: Catalogue["reauth"];
  export const saml: Catalogue["saml"];
  export const signup: Catalogue["signup"];
  export const social: Catalogue["social"];
  export const status_page: Catalogue["status_page"];
  export const two_factor: Catalogue["two_factor"];
  export const verify_email: Catalogue["verify_email"];
}
