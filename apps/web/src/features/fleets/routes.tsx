import { createRoute, redirect } from "@tanstack/react-router";
import { t } from "../../lib/i18n.ts";
import { setPreference } from "../../lib/preferences.ts";
import { requireNumericId } from "../../lib/route-id.ts";
import { showToast } from "../../lib/toasts.ts";
import { notFoundToast, page, type RouterContext, routeData } from "../../route-kit.ts";
import type { VerifiedRoute } from "../../router.tsx";
import { commandRoutes } from "../commands/routes.tsx";
import { fleetDeviceRoutes } from "../devices/routes.tsx";
import type { Fleet, fleetAbilities } from "../fleet-access/data.ts";
import { fleetAccessRoutes } from "../fleet-access/routes.tsx";
import { releaseRoutes } from "../releases/routes.tsx";
import { rolloutRoutes } from "../rollouts/routes.tsx";
import { fleetVariableRoutes } from "../variables/routes.tsx";

/**
 * `/fleets`, `/apps` and `/blocks` (spec 2 §2): the three classes of application share one set of
 * detail pages, with the pages only a fleet has.
 */

type ClassPrefix = "fleets" | "apps" | "blocks";
/** The pages only a fleet has (spec 2 §2). */
const FLEET_ONLY_PAGES = ["devices", "envvars", "config", "api-keys"] as const;
const CLASS_PREFIX: Record<Fleet["is_of__class"], ClassPrefix> = { fleet: "fleets", app: "apps", block: "blocks" };

/**
 * The guards of spec 2 §2 for `/{fleets|apps|blocks}/{id}/…`: a missing fleet → `/fleets` (with
 * "Fleet not found: {id}"), a frozen organization → `/orgs/{orgId}`, a path whose class prefix is
 * not the application's → the same path under the right prefix.
 */
async function guardFleet(
  context: RouterContext,
  id: number,
  pathname: string,
  preload = false,
): Promise<Fleet | undefined> {
  let fleet: Fleet | null;
  const data = await routeData();
  try {
    fleet = await data.loadFleet(context.queryClient, context.sdk, id);
  } catch {
    // A failed lookup (network, server) is the page's to report; no redirect on a guess.
    return undefined;
  }
  if (!fleet) {
    await notFoundToast(context, "fleet", t("errors.fleet_not_found", { application: id }), id);
    throw redirect({ to: "/fleets", replace: true });
  }
  const org = fleet.organization[0];
  // The organization the user works in (not one whose link was only hovered): create-fleet starts there.
  if (org && !preload) setPreference("lastOrganization", org.id);
  if (org?.is_frozen) throw redirect({ href: `/orgs/${org.id}`, replace: true });
  const prefix = CLASS_PREFIX[fleet.is_of__class];
  // Supervisor and OS release pages are reached through /apps/{appId}/releases/{releaseId} (spec 2 §2):
  // the host OS and supervisor fleets of the OS catalogue stay under /apps/.
  const osCatalogueRelease = data.isOsCatalogueFleet(fleet) && /^\/apps\/[^/]+\/releases(\/|$)/.test(pathname);
  if (!osCatalogueRelease && !pathname.startsWith(`/${prefix}/`)) {
    throw redirect({ href: pathname.replace(/^\/[a-z]+\//, `/${prefix}/`), replace: true });
  }
  return fleet;
}

function classRoutes(verified: VerifiedRoute) {
  return {
    fleets: createRoute({ getParentRoute: () => verified, path: "/fleets", staticData: { crumb: "nav.fleets" } }),
    apps: createRoute({ getParentRoute: () => verified, path: "/apps", staticData: { crumb: "nav.apps" } }),
    blocks: createRoute({ getParentRoute: () => verified, path: "/blocks", staticData: { crumb: "nav.blocks" } }),
  };
}
type ClassRoute = ReturnType<typeof classRoutes>[ClassPrefix];

const fleetRoute = (parent: ClassRoute) =>
  createRoute({
    getParentRoute: () => parent,
    path: "$fleetId",
    staticData: { crumbObject: "fleet" },
    beforeLoad: async ({ params, location, context, preload }) => {
      const id = requireNumericId(params.fleetId, location.pathname.replace(/^(\/[a-z]+\/[^/]+).*$/, "$1"));
      await guardFleet(context, id, location.pathname, preload);
    },
    // The organization's past-due banner above the fleet's pages (spec 3 §4).
    component: page(() => import("../billing/past-due.tsx"), "FleetLayout"),
  });

/** The `/{fleets|apps|blocks}/{fleetId}` route, the parent of the fleet's pages in other features. */
export type FleetRoute = ReturnType<typeof fleetRoute>;

/** A page that needs a fleet ability, else `/`. */
const gated =
  (check: (abilities: ReturnType<typeof fleetAbilities>) => boolean) =>
  async ({ params, context }: { params: { fleetId: string }; context: RouterContext }) => {
    const { loadFleet, fleetAbilities } = await routeData();
    const fleet = await loadFleet(context.queryClient, context.sdk, Number(params.fleetId)).catch(() => undefined);
    if (fleet && !check(fleetAbilities(fleet))) throw redirect({ to: "/", replace: true });
  };

/**
 * The fleet (app, block) detail routes (spec 2 §2): summary, settings (application.update, else
 * `/`), api-keys for fleets (api_key.read, else `/`), members and teams.
 */
function applicationRoutes(parent: ClassRoute, prefix: ClassPrefix) {
  const base = fleetRoute(parent);
  return base.addChildren([
    createRoute({
      getParentRoute: () => base,
      path: "/",
      component: page(() => import("./summary-page.tsx"), "FleetSummaryPage"),
    }),
    releaseRoutes(base),
    ...fleetAccessRoutes(base),
    createRoute({
      getParentRoute: () => base,
      path: "settings",
      staticData: { crumb: "nav.settings" },
      beforeLoad: gated((abilities) => abilities.update),
      component: page(() => import("./settings-page.tsx"), "FleetSettingsPage"),
    }),
    ...(prefix === "fleets"
      ? [
          ...fleetDeviceRoutes(base),
          rolloutRoutes(base),
          commandRoutes(base),
          ...fleetVariableRoutes(base),
          createRoute({
            getParentRoute: () => base,
            path: "api-keys",
            staticData: { crumb: "nav.api_keys" },
            beforeLoad: gated((abilities) => abilities.apiKeys),
            component: page(() => import("./api-keys-page.tsx"), "FleetApiKeysPage"),
          }),
        ]
      : // An app or a block has no devices, variables, configuration or API keys of its own:
        // those addresses are "Resource not found" and lead to its summary.
        FLEET_ONLY_PAGES.map((path) =>
          createRoute({
            getParentRoute: () => base,
            path,
            beforeLoad: ({ params }) => {
              showToast("error", t("errors.resource_not_found"));
              throw redirect({ href: `/${prefix}/${params.fleetId}`, replace: true });
            },
          }),
        )),
  ]);
}

/** The three lists, each with its detail pages. */
export function fleetsRoutes(verified: VerifiedRoute) {
  const { fleets, apps, blocks } = classRoutes(verified);
  return [
    fleets.addChildren([
      createRoute({
        getParentRoute: () => fleets,
        path: "/",
        component: page(() => import("./fleets-page.tsx"), "FleetsPage"),
      }),
      applicationRoutes(fleets, "fleets"),
    ]),
    apps.addChildren([
      createRoute({
        getParentRoute: () => apps,
        path: "/",
        component: page(() => import("../apps/apps-page.tsx"), "AppsPage"),
      }),
      applicationRoutes(apps, "apps"),
    ]),
    blocks.addChildren([
      createRoute({
        getParentRoute: () => blocks,
        path: "/",
        component: page(() => import("../blocks/blocks-page.tsx"), "BlocksPage"),
      }),
      applicationRoutes(blocks, "blocks"),
    ]),
  ];
}
