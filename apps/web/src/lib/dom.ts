/**
 * Plain DOM building for the pages that render before React loads (the login page, the cookie
 * banner): `h("a", { class: "x", href: "/y" }, "text")`. Attributes are set as given (`true`
 * sets an empty one, `false`/undefined none), `on…` functions become listeners, strings children
 * are text (never HTML).
 */
type Attribute = string | number | boolean | undefined;
type Listener = (event: Event) => void;
export type Props = Record<string, Attribute | Listener>;
export type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (typeof value === "function") node.addEventListener(key.slice(2).toLowerCase(), value);
    else if (value === true) node.setAttribute(key, "");
    else if (value !== false && value !== undefined) node.setAttribute(key, String(value));
  }
  node.append(
    ...children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false),
  );
  return node;
}

const SVG = "http://www.w3.org/2000/svg";

/** A 24×24 Material icon (the path of @mui/icons-material's), decorative. */
export function icon(path: string, className = "fl-icon"): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", className);
  const shape = document.createElementNS(SVG, "path");
  shape.setAttribute("d", path);
  svg.append(shape);
  return svg;
}

let lastId = 0;
/** An id unique in the page, for labels and descriptions. */
export const uniqueId = (prefix: string) => `${prefix}-${++lastId}`;
