import { type Child, h, icon, type Props, uniqueId } from "../lib/dom.ts";
import { getPreference } from "../lib/preferences.ts";
import "./plain-ui.css";

/**
 * MUI's components as plain elements (plain-ui.css has their look), for the pages that render
 * before React and MUI load: the login page and the cookie banner. Same roles, labels and
 * descriptions as MUI gives them, so people and tests find them the same way.
 */

export const ICONS = {
  errorOutline:
    "M11 15h2v2h-2zm0-8h2v6h-2zm.99-5C6.47 2 2 6.48 2 12s4.47 10 9.99 10C17.52 22 22 17.52 22 12S17.52 2 11.99 2zM12 20c-4.42 0-8-3.58-8-8s3.58-8 8-8 8 3.58 8 8-3.58 8-8 8z",
  visibility:
    "M12 4.5C7 4.5 2.73 7.61 1 12c1.73 4.39 6 7.5 11 7.5s9.27-3.11 11-7.5c-1.73-4.39-6-7.5-11-7.5M12 17c-2.76 0-5-2.24-5-5s2.24-5 5-5 5 2.24 5 5-2.24 5-5 5m0-8c-1.66 0-3 1.34-3 3s1.34 3 3 3 3-1.34 3-3-1.34-3-3-3",
  visibilityOff:
    "M12 7c2.76 0 5 2.24 5 5 0 .65-.13 1.26-.36 1.83l2.92 2.92c1.51-1.26 2.7-2.89 3.43-4.75-1.73-4.39-6-7.5-11-7.5-1.4 0-2.74.25-3.98.7l2.16 2.16C10.74 7.13 11.35 7 12 7M2 4.27l2.28 2.28.46.46C3.08 8.3 1.78 10.02 1 12c1.73 4.39 6 7.5 11 7.5 1.55 0 3.03-.3 4.38-.84l.42.42L19.73 22 21 20.73 3.27 3zM7.53 9.8l1.55 1.55c-.05.21-.08.43-.08.65 0 1.66 1.34 3 3 3 .22 0 .44-.03.65-.08l1.55 1.55c-.67.33-1.41.53-2.2.53-2.76 0-5-2.24-5-5 0-.79.2-1.53.53-2.2m4.31-.78 3.15 3.15.02-.16c0-1.66-1.34-3-3-3z",
  checkCircleOutline:
    "M12 2C6.48 2 2 6.48 2 12s4.48 10 10 10 10-4.48 10-10S17.52 2 12 2m0 18c-4.41 0-8-3.59-8-8s3.59-8 8-8 8 3.59 8 8-3.59 8-8 8m4.59-12.42L10 14.17l-2.59-2.58L6 13l4 4 8-8z",
  checkBox:
    "M19 3H5c-1.11 0-2 .9-2 2v14c0 1.1.89 2 2 2h14c1.11 0 2-.9 2-2V5c0-1.1-.89-2-2-2zm-9 14l-5-5 1.41-1.41L10 14.17l7.59-7.59L19 8l-9 9z",
  checkBoxBlank: "M19 5v14H5V5h14m0-2H5c-1.1 0-2 .9-2 2v14c0 1.1.9 2 2 2h14c1.1 0 2-.9 2-2V5c0-1.1-.9-2-2-2z",
} as const;

/** Gives `host` the theme's colours for the stored colour mode (or `mode`), as the app's ThemeProvider. */
export function plainRoot<T extends HTMLElement>(host: T, mode = getPreference("colorMode")): T {
  host.classList.add("fl-ui");
  host.dataset.colorMode = mode;
  return host;
}

export interface PlainField {
  root: HTMLDivElement;
  input: HTMLInputElement;
  /** Shows `text` under the field as an error (undefined: the helper text again). */
  setError(text: string | undefined): void;
}

/** An outlined text field with a floating label tied to its input, and a helper or error text under it. */
export function textField(options: {
  label: string;
  name: string;
  type?: string;
  autocomplete?: string;
  required?: boolean;
  helper?: string;
  input?: Props;
  adornment?: Node;
}): PlainField {
  const id = uniqueId(options.name);
  const helperId = `${id}-helper`;
  const input = h("input", {
    id,
    class: "fl-field-input",
    name: options.name,
    type: options.type ?? "text",
    autocomplete: options.autocomplete,
    required: options.required,
    // A blank placeholder lets the CSS see an empty field (:placeholder-shown), for the label.
    placeholder: " ",
    "aria-describedby": options.helper ? helperId : undefined,
    ...options.input,
  });
  const helper = h("p", { id: helperId, class: "fl-field-helper" }, options.helper ?? "");
  const root = h(
    "div",
    { class: "fl-field" },
    h("label", { class: "fl-field-label", for: id }, options.label),
    h(
      "div",
      { class: "fl-field-box" },
      input,
      options.adornment ? h("div", { class: "fl-adornment" }, options.adornment) : null,
      h(
        "fieldset",
        { class: "fl-field-outline", "aria-hidden": "true" },
        h("legend", {}, h("span", {}, options.label)),
      ),
    ),
    helper,
  );
  return {
    root,
    input,
    setError(text) {
      root.toggleAttribute("data-error", Boolean(text));
      helper.textContent = text ?? options.helper ?? "";
      if (text) {
        input.setAttribute("aria-invalid", "true");
        input.setAttribute("aria-describedby", helperId);
      } else {
        input.removeAttribute("aria-invalid");
        if (!options.helper) input.removeAttribute("aria-describedby");
      }
    },
  };
}

/** A password field with the show/hide button at its end. */
export function passwordField(options: {
  label: string;
  name: string;
  autocomplete: string;
  showLabel: string;
  hideLabel: string;
}): PlainField {
  const toggle = h("button", { type: "button", class: "fl-icon-button", "aria-label": options.showLabel });
  const field = textField({ ...options, type: "password", required: true, adornment: toggle });
  const show = (shown: boolean) => {
    field.input.type = shown ? "text" : "password";
    toggle.setAttribute("aria-label", shown ? options.hideLabel : options.showLabel);
    toggle.replaceChildren(icon(shown ? ICONS.visibilityOff : ICONS.visibility));
  };
  show(false);
  toggle.addEventListener("click", () => show(field.input.type === "password"));
  return field;
}

export type ButtonLook = { variant?: "contained" | "outlined" | "text"; size?: "small" | "large"; full?: boolean };

const buttonClass = ({ variant = "text", size, full }: ButtonLook) =>
  ["fl-button", `fl-button-${variant}`, size ? `fl-button-${size}` : "", full ? "fl-button-full" : ""]
    .filter(Boolean)
    .join(" ");

export const button = (look: ButtonLook, props: Props, ...children: Child[]) =>
  h("button", { type: "button", ...props, class: buttonClass(look) }, ...children);

/** A link that looks like a button (MUI's Button with an anchor). */
export const buttonLink = (look: ButtonLook, href: string, ...children: Child[]) =>
  h("a", { href, class: buttonClass(look) }, ...children);

export const link = (href: string, text: string, className = "") =>
  h("a", { href, class: `fl-link ${className}`.trim() }, text);

/** An error message, announced (role="alert"). */
export const errorAlert = (text: string) =>
  h(
    "div",
    { class: "fl-alert", role: "alert" },
    icon(ICONS.errorOutline),
    h("div", { class: "fl-alert-message" }, text),
  );

/** A horizontal rule with a word in its middle ("or"). */
export const divider = (text: string) =>
  h("div", { class: "fl-divider", role: "separator" }, h("span", { class: "fl-divider-text" }, text));

/** A small checkbox with its label. */
export function checkbox(label: string, props: Props = {}): { root: HTMLLabelElement; input: HTMLInputElement } {
  const input = h("input", { type: "checkbox", ...props });
  const root = h(
    "label",
    { class: "fl-check" },
    h(
      "span",
      { class: "fl-check-box" },
      input,
      icon(ICONS.checkBox, "fl-icon fl-check-on"),
      icon(ICONS.checkBoxBlank, "fl-icon fl-check-off"),
    ),
    h("span", { class: "fl-check-label" }, label),
  );
  return { root, input };
}

const SVG = "http://www.w3.org/2000/svg";

/** The Flotilla wordmark at 28 px (components/logo.tsx): the sail on an indigo tile, and the name. */
export function wordmark(): HTMLSpanElement {
  const svg = document.createElementNS(SVG, "svg");
  const attributes = { width: 28, height: 28, viewBox: "0 0 32 32", "aria-hidden": "true", focusable: "false" };
  for (const [name, value] of Object.entries(attributes)) svg.setAttribute(name, String(value));
  const tile = document.createElementNS(SVG, "rect");
  for (const [name, value] of Object.entries({ width: 32, height: 32, rx: 7, fill: "#4f46e5" })) {
    tile.setAttribute(name, String(value));
  }
  const sail = document.createElementNS(SVG, "path");
  sail.setAttribute("d", "M7 20.5 16 8l9 12.5h-7.2V24h-3.6v-3.5z");
  sail.setAttribute("fill", "#fff");
  svg.append(tile, sail);
  return h("span", { class: "fl-wordmark" }, svg, h("span", { class: "fl-wordmark-name" }, "Flotilla"));
}
