import type { QueryClient } from "@tanstack/react-query";
import { lazyRouteComponent } from "@tanstack/react-router";
import { getSessionState } from "./features/auth/session.ts";
import { isSupportStaff } from "./features/auth/token.ts";
import { withChunkTimeout } from "./lib/chunk.ts";
import { t } from "./lib/i18n.ts";
import type { Sdk } from "./lib/sdk.ts";
import { showToast } from "./lib/toasts.ts";

/**
 * What every feature's route table (features/<feature>/routes.tsx) is built with: the router's
 * context, lazily loaded pages and the guards' data layer.
 */

export interface RouterContext {
  sdk: Sdk;
  queryClient: QueryClient;
}

/** The guards' data layer (route-data.ts), loaded by the first guard that needs it. */
export const routeData = () => withChunkTimeout(import("./route-data.ts"));

/** A page in its own lazily loaded chunk that gives up after 120 s (spec 1 §9). */
export const page = (load: () => Promise<Record<string, unknown>>, name: string) =>
  lazyRouteComponent(() => withChunkTimeout(load()), name);

export const redirectSearch = (search: Record<string, unknown>): { redirect?: string } =>
  typeof search.redirect === "string" ? { redirect: search.redirect } : {};

/** A search schema of optional string parameters. */
export const stringSearch =
  <K extends string>(...keys: K[]) =>
  (search: Record<string, unknown>): Partial<Record<K, string>> => {
    const out: Partial<Record<K, string>> = {};
    for (const key of keys) if (typeof search[key] === "string") out[key] = search[key];
    return out;
  };

/**
 * A fleet or device the viewer cannot load; platform staff are told why they may not see it (spec 2
 * §6 "Other rules": an error when an admin views one without support access).
 */
export async function notFoundToast(
  context: RouterContext,
  kind: "fleet" | "device",
  text: string,
  id: string | number,
) {
  const session = await getSessionState(context.queryClient, context.sdk).catch(() => undefined);
  const staff = session?.kind === "signed-in" && isSupportStaff(session.claims);
  showToast("error", staff ? t(`support_access_banner.not_found_${kind}`, { id }) : text);
}
