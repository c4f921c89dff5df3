import { type AnyRoute, createRoute } from "@tanstack/react-router";
import { requireNumericId } from "../../lib/route-id.ts";
import { page } from "../../route-kit.ts";
import type { FleetRoute } from "../fleets/routes.tsx";

const rolloutPages = () => import("./rollout-page.tsx");

/** A fleet's `…/rollouts` and `…/rollouts/{rolloutId}`. */
export function rolloutRoutes(base: FleetRoute) {
  const rollouts = createRoute({
    getParentRoute: () => base,
    path: "rollouts",
    staticData: { crumb: "nav.rollouts" },
  });
  // Typed as a bare route, as the releases: the route tree's type is at its limit.
  return rollouts.addChildren([
    createRoute({ getParentRoute: () => rollouts, path: "/", component: page(rolloutPages, "FleetRolloutsPage") }),
    createRoute({
      getParentRoute: () => rollouts,
      path: "$rolloutId",
      staticData: { crumb: "nav.rollout" },
      beforeLoad: ({ params, location }) => {
        requireNumericId(params.rolloutId, location.pathname.replace(/\/rollouts\/.*$/, "/rollouts"));
      },
      component: page(rolloutPages, "RolloutPage"),
    }),
  ]) as unknown as AnyRoute;
}
