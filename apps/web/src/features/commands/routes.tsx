import { type AnyRoute, createRoute } from "@tanstack/react-router";
import { requireNumericId } from "../../lib/route-id.ts";
import { page } from "../../route-kit.ts";
import type { FleetRoute } from "../fleets/routes.tsx";

/** A fleet's bulk commands (docs/bulk-commands.md): `…/commands` and `…/commands/{runId}`. */
export function commandRoutes(base: FleetRoute) {
  const commands = createRoute({
    getParentRoute: () => base,
    path: "commands",
    staticData: { crumb: "nav.commands" },
  });
  // Typed as a bare route, as the rollouts: the route tree's type is at its limit.
  return commands.addChildren([
    createRoute({
      getParentRoute: () => commands,
      path: "/",
      component: page(() => import("./list-page.tsx"), "FleetCommandsPage"),
    }),
    createRoute({
      getParentRoute: () => commands,
      path: "$runId",
      staticData: { crumb: "nav.command_run" },
      beforeLoad: ({ params, location }) => {
        requireNumericId(params.runId, location.pathname.replace(/\/commands\/.*$/, "/commands"));
      },
      component: page(() => import("./run-page.tsx"), "CommandRunPage"),
    }),
  ]) as unknown as AnyRoute;
}
