import { APP_VERSION } from "@flotilla/domain";
import { h, icon } from "../lib/dom.ts";
import { t } from "../lib/i18n.ts";
import { ICONS, wordmark } from "./plain-ui.ts";
import "./plain-auth-frame.css";

/**
 * The frame of the signed-out pages (login, sign-up, two-factor, password reset) as plain
 * elements: the login page renders before React loads, and the React pages put their parts into
 * the same frame (auth-frame.tsx). The product's promise on the left (wide screens), one focused
 * form on the right. The parts are empty elements to fill: an empty subtitle or footer is not shown.
 */
export interface AuthFrameParts {
  frame: HTMLElement;
  title: HTMLHeadingElement;
  subtitle: HTMLElement;
  body: HTMLElement;
  footer: HTMLElement;
}

export function renderAuthFrame(): AuthFrameParts {
  const points = (["watch", "release", "team"] as const).map((point) =>
    h("li", {}, icon(ICONS.checkCircleOutline), h("span", {}, t(`login.side_points.${point}`))),
  );
  const title = h("h1");
  const subtitle = h("div", { class: "fl-auth-subtitle" });
  const body = h("div");
  const footer = h("div", { class: "fl-auth-footer" });
  const frame = h(
    "div",
    { class: "fl-auth" },
    h(
      "div",
      { class: "fl-auth-side" },
      wordmark(),
      h(
        "div",
        {},
        h("p", { class: "fl-auth-side-title" }, t("login.side_title")),
        h("ul", { class: "fl-auth-points" }, ...points),
      ),
      h("p", { class: "fl-auth-side-footer" }, `${t("app.tagline")} · ${t("app.version", { version: APP_VERSION })}`),
    ),
    h(
      "div",
      { class: "fl-auth-main" },
      h(
        "div",
        { class: "fl-auth-column" },
        h("div", { class: "fl-auth-narrow-mark" }, wordmark()),
        h("header", { class: "fl-auth-header" }, title, subtitle),
        body,
        footer,
      ),
    ),
  );
  return { frame, title, subtitle, body, footer };
}
