import { type ComponentType, type LazyExoticComponent, lazy } from "react";
import { withChunkTimeout } from "./chunk.ts";

/**
 * A component of a module loaded when it first renders (a dialog, a drawer: not on the page's
 * first load), within the chunk timeout; render it under a Suspense.
 */
// biome-ignore lint/suspicious/noExplicitAny: any props, as React's own lazy() takes.
export function lazyComponent<M extends { [P in K]: ComponentType<any> }, K extends keyof M>(
  load: () => Promise<M>,
  name: K,
): LazyExoticComponent<M[K]> {
  return lazy(() => withChunkTimeout(load()).then((module) => ({ default: module[name] })));
}
