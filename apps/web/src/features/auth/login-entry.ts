import { APP_VERSION } from "@flotilla/domain";
import { cookieConsentNeeded, renderCookieBanner } from "../../components/plain-cookie-banner.ts";
import { plainRoot } from "../../components/plain-ui.ts";
import type { RuntimeConfig } from "../../lib/config.ts";
import { h } from "../../lib/dom.ts";
import { getPreference, setPreference } from "../../lib/preferences.ts";
import { loginSearch } from "./login.ts";
import { renderLoginPage } from "./login-page.ts";
import "./login-entry.css";

/**
 * The login page opened by a cold load of /login without a session (main.tsx): the page and the
 * cookie banner in the app's page column, with no React, MUI or router (issue performance-2: the
 * first page must be light). Signing in navigates the document, which starts the full app.
 */
export function startLoginEntry(container: HTMLElement, config: RuntimeConfig, warmUp?: () => void) {
  // A new browser records the running version, as the app's changelog dialog does.
  if (!getPreference("changelogVersion")) setPreference("changelogVersion", APP_VERSION);
  const page = h("div", { class: "fl-entry-page" });
  const root = plainRoot(h("div", { class: "fl-entry" }, page));
  if (cookieConsentNeeded()) root.append(renderCookieBanner());
  container.replaceChildren(root);
  renderLoginPage(page, { apiUrl: config.apiUrl, search: loginSearch(window.location.search), warmUp });
}
