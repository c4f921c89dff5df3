import { useRouter } from "@tanstack/react-router";
import { useEffect, useRef } from "react";
import { reportResourceNotFound } from "./toasts.ts";

/**
 * Pages that show one object (a fleet, a device, a release…) look it up; when the lookup returns
 * nothing, the "Resource not found" toast appears and the browser navigates back (spec 2 §8
 * Other, spec 3 §8). "Back" means back within the dashboard: when the page was opened directly
 * (no earlier dashboard entry in this tab) it goes to `/` instead, replacing the dead address so
 * that Back does not return to it. See README "Lookups" for how pages use it.
 */

/** A lookup "returns nothing" when its answer is undefined or null (pine's `get` of a missing id). */
export const isMissing = (value: unknown): value is undefined | null => value === undefined || value === null;

export type LookupState = "pending" | "found" | "missing" | "failed";

/** Where a lookup stands, from a query's status and data (a failed request is not "missing"). */
export function lookupState(query: { status: "pending" | "success" | "error"; data: unknown }): LookupState {
  if (query.status === "pending") return "pending";
  if (query.status === "error") return "failed";
  return isMissing(query.data) ? "missing" : "found";
}

export type LeaveAction = "back" | "home";

/** Back when the tab has an earlier dashboard entry, otherwise home. */
export const leaveAction = (canGoBack: boolean): LeaveAction => (canGoBack ? "back" : "home");

export interface LeaveTarget {
  canGoBack(): boolean;
  back(): void;
  home(): void;
}

/** Toast, then leave. Returns where it went. */
export function leaveMissingResource(target: LeaveTarget, notify: () => void = reportResourceNotFound): LeaveAction {
  notify();
  const action = leaveAction(target.canGoBack());
  if (action === "back") target.back();
  else target.home();
  return action;
}

/** The router as a LeaveTarget: its history knows whether an earlier entry is the dashboard's. */
export function routerLeaveTarget(router: {
  history: { canGoBack(): boolean; back(): void };
  navigate(options: { to: "/"; replace: true }): unknown;
}): LeaveTarget {
  return {
    canGoBack: () => router.history.canGoBack(),
    back: () => router.history.back(),
    home: () => void router.navigate({ to: "/", replace: true }),
  };
}

/**
 * For a page built on one lookup query: returns the object once found; when the lookup comes
 * back empty it shows the toast and leaves (once per missing lookup).
 *
 *   const fleet = useLookup(useQuery(fleetQuery(sdk, slug)));
 *   if (!fleet) return <PagePending />;
 */
export function useLookup<T>(query: {
  status: "pending" | "success" | "error";
  data: T | null | undefined;
}): T | undefined {
  const router = useRouter();
  const state = lookupState(query);
  const left = useRef(false);
  useEffect(() => {
    if (state !== "missing") {
      left.current = false;
      return;
    }
    if (left.current) return;
    left.current = true;
    leaveMissingResource(routerLeaveTarget(router));
  }, [state, router]);
  return state === "found" ? (query.data as T) : undefined;
}
