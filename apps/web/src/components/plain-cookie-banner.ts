import { h } from "../lib/dom.ts";
import { t } from "../lib/i18n.ts";
import { getPreference, setPreference } from "../lib/preferences.ts";
import { button, checkbox } from "./plain-ui.ts";
import "./plain-cookie-banner.css";

/**
 * The cookie banner (spec 1 §2.5): essential cookies (required, always on) and analytics
 * (optional). Asked once per browser; the answer is kept as `flotilla.cookieConsent`. Plain
 * elements, so the login page shows it before React loads; the app mounts the same banner
 * (cookie-banner.tsx).
 *
 * A bar at the bottom of the page's column, in the flow (not floating over it): the page above
 * gets shorter while it is shown, so it never covers a form's buttons (issue 17).
 */
export const cookieConsentNeeded = () => !getPreference("cookieConsent");

export function renderCookieBanner(): HTMLElement {
  const analytics = checkbox(t("banners.cookies_analytics"));
  const answer = (consent: "essentials" | "analytics") => {
    setPreference("cookieConsent", consent);
    banner.remove();
  };
  const banner = h(
    "section",
    { class: "fl-cookie-banner", role: "region", "aria-label": t("banners.cookies_title") },
    h("p", { class: "fl-cookie-banner-text" }, t("banners.cookies")),
    h(
      "div",
      { class: "fl-cookie-banner-choices" },
      checkbox(t("banners.cookies_essentials"), { checked: true, disabled: true }).root,
      analytics.root,
      h(
        "div",
        { class: "fl-cookie-banner-buttons" },
        button(
          { size: "small" },
          { onclick: () => answer(analytics.input.checked ? "analytics" : "essentials") },
          t("banners.cookies_save"),
        ),
        button(
          { variant: "contained", size: "small" },
          { onclick: () => answer("analytics") },
          t("banners.cookies_accept_all"),
        ),
      ),
    ),
  );
  return banner;
}
