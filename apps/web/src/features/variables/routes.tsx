import { createRoute } from "@tanstack/react-router";
import { page } from "../../route-kit.ts";
import type { DeviceRoute } from "../devices/routes.tsx";
import type { FleetRoute } from "../fleets/routes.tsx";

const variablePages = () => import("./pages.tsx");

/** A fleet's `…/envvars` and `…/config`. */
export function fleetVariableRoutes(base: FleetRoute) {
  return [
    createRoute({
      getParentRoute: () => base,
      path: "envvars",
      staticData: { crumb: "nav.envvars" },
      component: page(variablePages, "FleetEnvVarsPage"),
    }),
    createRoute({
      getParentRoute: () => base,
      path: "config",
      staticData: { crumb: "nav.config" },
      component: page(variablePages, "FleetConfigPage"),
    }),
  ];
}

/** A device's `…/envvars` and `…/config`. */
export function deviceVariableRoutes(device: DeviceRoute) {
  return [
    createRoute({
      getParentRoute: () => device,
      path: "envvars",
      staticData: { crumb: "nav.envvars" },
      component: page(variablePages, "DeviceEnvVarsPage"),
    }),
    createRoute({
      getParentRoute: () => device,
      path: "config",
      staticData: { crumb: "nav.config" },
      component: page(variablePages, "DeviceConfigPage"),
    }),
  ];
}
