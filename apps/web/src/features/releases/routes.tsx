import { createRoute, redirect } from "@tanstack/react-router";
import { t } from "../../lib/i18n.ts";
import { requireNumericId } from "../../lib/route-id.ts";
import { showToast } from "../../lib/toasts.ts";
import type { loadRelease } from "../../route-data.ts";
import { page, routeData } from "../../route-kit.ts";
import type { FleetRoute } from "../fleets/routes.tsx";

const releasePages = {
  list: () => import("./list-page.tsx"),
  summary: () => import("./summary-page.tsx"),
  settings: () => import("./settings-page.tsx"),
};

/** A fleet's `…/releases/…` pages (spec 2 §2): the list, a release's summary and its settings. */
export function releaseRoutes(base: FleetRoute) {
  const releases = createRoute({
    getParentRoute: () => base,
    path: "releases",
    staticData: { crumb: "nav.releases" },
  });
  /**
   * `…/releases/{releaseId}` (spec 2 §2): a non-numeric id shows "invalid id passed in url" and
   * goes up to the list; a release the fleet does not have is "Release not found: {release}".
   */
  const release = createRoute({
    getParentRoute: () => releases,
    path: "$releaseId",
    staticData: { crumbObject: "release" },
    beforeLoad: async ({ params, location, context }) => {
      const list = location.pathname.replace(/(\/releases)\/.*$/, "$1");
      const data = await routeData();
      // A commit prefix names the release when it is unique in the fleet (spec 2 §8).
      if (data.isCommitPrefix(params.releaseId)) {
        const found = await data
          .resolveCommitPrefix(context.sdk, Number(params.fleetId), params.releaseId)
          .catch(() => undefined);
        if (typeof found === "number") {
          throw redirect({
            href: location.href.replace(`/releases/${params.releaseId}`, `/releases/${found}`),
            replace: true,
          });
        }
        showToast(
          "error",
          found === "ambiguous"
            ? t("errors.release_ambiguous")
            : t("errors.release_not_found", { release: params.releaseId }),
        );
        throw redirect({ href: list, replace: true });
      }
      const releaseId = requireNumericId(params.releaseId, `${list}/${params.releaseId}`);
      let found: Awaited<ReturnType<typeof loadRelease>>;
      try {
        found = await (await routeData()).loadRelease(
          context.queryClient,
          context.sdk,
          Number(params.fleetId),
          releaseId,
        );
      } catch {
        return;
      }
      if (!found) {
        showToast("error", t("errors.release_not_found", { release: params.releaseId }));
        throw redirect({ href: list, replace: true });
      }
    },
  });
  // Typed as the bare "releases" route: the full subtree, three times over, makes the route
  // tree's type too large for tsc to emit. Release links are built as strings anyway.
  return releases.addChildren([
    createRoute({ getParentRoute: () => releases, path: "/", component: page(releasePages.list, "FleetReleasesPage") }),
    release.addChildren([
      createRoute({
        getParentRoute: () => release,
        path: "/",
        component: page(releasePages.summary, "ReleaseSummaryPage"),
      }),
      createRoute({
        getParentRoute: () => release,
        path: "settings",
        staticData: { crumb: "nav.settings" },
        // Release settings need resin.release.update, else `/` (spec 1 §2.2).
        beforeLoad: async ({ params, context }) => {
          const { loadFleet, releaseAbilities } = await routeData();
          const fleet = await loadFleet(context.queryClient, context.sdk, Number(params.fleetId)).catch(
            () => undefined,
          );
          if (fleet && !releaseAbilities(fleet.user_access_roles).update) throw redirect({ to: "/", replace: true });
        },
        component: page(releasePages.settings, "ReleaseSettingsPage"),
      }),
    ]),
  ]) as unknown as typeof releases;
}
