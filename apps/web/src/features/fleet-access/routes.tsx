import { createRoute } from "@tanstack/react-router";
import { page } from "../../route-kit.ts";
import type { FleetRoute } from "../fleets/routes.tsx";

const fleetPages = () => import("./fleet-pages.tsx");

/** A fleet's (app's, block's) `…/members` and `…/teams`: who has access, at which role. */
export function fleetAccessRoutes(base: FleetRoute) {
  return [
    createRoute({
      getParentRoute: () => base,
      path: "members",
      staticData: { crumb: "nav.members" },
      component: page(fleetPages, "FleetMembersPage"),
    }),
    createRoute({
      getParentRoute: () => base,
      path: "teams",
      staticData: { crumb: "nav.teams" },
      component: page(fleetPages, "FleetTeamsPage"),
    }),
  ];
}
