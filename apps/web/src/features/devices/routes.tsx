import { type AnyRoute, createRoute, redirect } from "@tanstack/react-router";
import { t } from "../../lib/i18n.ts";
import { showToast } from "../../lib/toasts.ts";
import type { loadDevice } from "../../route-data.ts";
import { notFoundToast, page, routeData } from "../../route-kit.ts";
import type { VerifiedRoute } from "../../router.tsx";
import type { FleetRoute } from "../fleets/routes.tsx";
import { deviceVariableRoutes } from "../variables/routes.tsx";

const devicePages = {
  summary: () => import("./summary-page.tsx"),
  actions: () => import("./actions-page.tsx"),
  settings: () => import("./settings-page.tsx"),
  location: () => import("./location-page.tsx"),
  diagnostics: () => import("./diagnostics-page.tsx"),
};

/** A fleet's `…/devices` (`?filter=`) and `…/logs`. */
export function fleetDeviceRoutes(base: FleetRoute) {
  return [
    createRoute({
      getParentRoute: () => base,
      path: "devices",
      staticData: { crumb: "nav.devices" },
      validateSearch: (search: Record<string, unknown>): { filter?: string } =>
        typeof search.filter === "string" && search.filter !== "" ? { filter: search.filter } : {},
      component: page(() => import("./devices-page.tsx"), "FleetDevicesPage"),
    }),
    // Typed loosely, as the rollouts: the route tree's type is at its limit.
    createRoute({
      getParentRoute: () => base,
      path: "logs",
      staticData: { crumb: "nav.logs" },
      component: page(() => import("./logs/fleet-logs-page.tsx"), "FleetLogsPage"),
    }) as unknown as AnyRoute,
  ];
}

/**
 * `/devices/{uuid}` (spec 2 §2): a missing device goes to `/` ("Device not found: {uuid}"), a
 * frozen one to its fleet.
 */
const deviceRoute = (verified: VerifiedRoute) =>
  createRoute({
    getParentRoute: () => verified,
    path: "/devices/$uuid",
    staticData: { crumbObject: "device" },
    beforeLoad: async ({ params, context, location }) => {
      let device: Awaited<ReturnType<typeof loadDevice>>;
      const data = await routeData();
      try {
        device = await data.loadDevice(context.queryClient, context.sdk, params.uuid);
      } catch {
        return;
      }
      if (!device) {
        // A short uuid names the device when it is unique (spec 2 §8 "Device is ambiguous: {device}").
        const found = await data.resolveShortUuid(context.sdk, params.uuid).catch(() => undefined);
        if (found === "ambiguous") {
          showToast("error", t("errors.device_ambiguous", { device: params.uuid }));
          throw redirect({ to: "/", replace: true });
        }
        if (found) {
          throw redirect({
            href: location.href.replace(`/devices/${params.uuid}`, `/devices/${found}`),
            replace: true,
          });
        }
        await notFoundToast(context, "device", t("errors.device_not_found", { device: params.uuid }), params.uuid);
        throw redirect({ to: "/", replace: true });
      }
      const fleetId = device.belongs_to__application[0]?.id;
      if (device.is_frozen && fleetId !== undefined) {
        throw redirect({ href: `/fleets/${fleetId}`, replace: true });
      }
    },
    // The organization's past-due banner above the device's pages (spec 3 §4).
    component: page(() => import("../billing/past-due.tsx"), "DeviceLayout"),
  });

/** The `/devices/{uuid}` route, the parent of the device's pages in other features. */
export type DeviceRoute = ReturnType<typeof deviceRoute>;

/** A device's pages: summary, variables, actions, settings (hidden for observers), location and diagnostics. */
export function deviceRoutes(verified: VerifiedRoute) {
  const device = deviceRoute(verified);
  return device.addChildren([
    createRoute({
      getParentRoute: () => device,
      path: "/",
      component: page(devicePages.summary, "DeviceSummaryPage"),
    }),
    ...deviceVariableRoutes(device),
    createRoute({
      getParentRoute: () => device,
      path: "actions",
      staticData: { crumb: "nav.actions" },
      component: page(devicePages.actions, "DeviceActionsPage"),
    }),
    createRoute({
      getParentRoute: () => device,
      path: "settings",
      staticData: { crumb: "nav.settings" },
      beforeLoad: async ({ params, context }) => {
        const { loadDevice, deviceAbilities } = await routeData();
        const found = await loadDevice(context.queryClient, context.sdk, params.uuid).catch(() => undefined);
        if (found && !deviceAbilities(found.belongs_to__application[0]?.user_access_roles).settings) {
          throw redirect({ to: "/", replace: true });
        }
      },
      component: page(devicePages.settings, "DeviceSettingsPage"),
    }),
    createRoute({
      getParentRoute: () => device,
      path: "location",
      staticData: { crumb: "nav.location" },
      component: page(devicePages.location, "DeviceLocationPage"),
    }),
    createRoute({
      getParentRoute: () => device,
      path: "diagnostics",
      staticData: { crumb: "nav.diagnostics" },
      // Without resin.device.access_diagnostics the page is not there (spec 1 §2.2).
      beforeLoad: async ({ params, context }) => {
        const { loadDevice, deviceAbilities } = await routeData();
        const found = await loadDevice(context.queryClient, context.sdk, params.uuid).catch(() => undefined);
        if (found && !deviceAbilities(found.belongs_to__application[0]?.user_access_roles).diagnostics) {
          throw redirect({ to: "/", replace: true });
        }
      },
      component: page(devicePages.diagnostics, "DeviceDiagnosticsPage"),
    }),
  ]);
}
