import { type AnyRoute, createRoute, redirect } from "@tanstack/react-router";
import { t } from "../../lib/i18n.ts";
import { setPreference } from "../../lib/preferences.ts";
import { requireNumericId } from "../../lib/route-id.ts";
import { showToast } from "../../lib/toasts.ts";
import type { loadOrganization } from "../../route-data.ts";
import { page, type RouterContext, routeData } from "../../route-kit.ts";
import type { VerifiedRoute } from "../../router.tsx";
import { orgAuditRoute } from "../audit/routes.tsx";
import { orgBillingRoutes } from "../billing/routes.tsx";
import { orgWebhooksRoute } from "../webhooks/routes.tsx";
import { myOrganizationCan } from "./route-guards.ts";

const orgPages = () => import("./org-pages.tsx");
const members = () => import("./members-pages.tsx");
const teams = () => import("./teams-pages.tsx");
const invitationPage = () => import("./invitation-page.tsx");

/**
 * A frozen organization (spec 3 §2 Billing, §8): outside its billing page, a user with billing
 * access goes to the billing page ("update billing details"), anyone else to `/orgs` ("please
 * reach its administrators").
 */
async function frozenOrganizationGuard(context: RouterContext, orgId: number, pathname: string, preload: boolean) {
  const billing = `/orgs/${orgId}/billing`;
  if (pathname === billing || pathname.startsWith(`${billing}/`)) return;
  const canBill = (await myOrganizationCan(context, orgId, "access_billing")) ?? false;
  if (canBill) {
    if (!preload) showToast("error", t("errors.organization_is_frozen_update_billing_details"));
    throw redirect({ href: billing, replace: true });
  }
  if (!preload) showToast("error", t("errors.organization_is_frozen_please_reach_administrators"));
  throw redirect({ to: "/orgs", replace: true });
}

const orgsListRoute = (verified: VerifiedRoute) =>
  createRoute({
    getParentRoute: () => verified,
    path: "/orgs",
    staticData: { crumb: "nav.organizations" },
  });

/**
 * `/orgs/{orgId}/…` (spec 3 §2): a non-numeric id shows "invalid id passed in url" and goes up;
 * an organization that is not there (or not the caller's) is "Resource not found" and `/orgs`,
 * as a missing fleet goes to `/fleets`.
 */
const organizationRoute = (orgs: ReturnType<typeof orgsListRoute>) =>
  createRoute({
    getParentRoute: () => orgs,
    path: "$orgId",
    staticData: { crumbObject: "org" },
    beforeLoad: async ({ params, location, context, preload }) => {
      const id = requireNumericId(params.orgId, location.pathname.replace(/(\/orgs\/[^/]+).*$/, "$1"));
      let org: Awaited<ReturnType<typeof loadOrganization>>;
      try {
        org = await (await routeData()).loadOrganization(context.queryClient, context.sdk, id);
      } catch {
        // A failed lookup (network, server) is the page's to report; no redirect on a guess.
        return;
      }
      if (!org) {
        showToast("error", t("errors.resource_not_found"));
        throw redirect({ to: "/orgs", replace: true });
      }
      // The organization the user works in: the create-fleet dialog starts with it.
      if (!preload) setPreference("lastOrganization", org.id);
      if (org.is_frozen) await frozenOrganizationGuard(context, org.id, location.pathname, preload);
    },
    component: page(() => import("../billing/past-due.tsx"), "OrgLayout"),
  });

/** The `/orgs/{orgId}` route, the parent of the organization's pages in other features. */
export type OrgRoute = ReturnType<typeof organizationRoute>;

/** `/orgs/{orgId}/members/…`: the members and one member's summary, teams and access. */
function memberRoutes(org: OrgRoute) {
  const membersRoute = createRoute({
    getParentRoute: () => org,
    path: "members",
    staticData: { crumb: "nav.members" },
  });
  const memberRoute = createRoute({
    getParentRoute: () => membersRoute,
    path: "$memberId",
    staticData: { crumbObject: "member" },
    beforeLoad: ({ params, location }) => {
      requireNumericId(params.memberId, location.pathname.replace(/(\/members\/[^/]+).*$/, "$1"));
    },
  });
  return membersRoute.addChildren([
    createRoute({ getParentRoute: () => membersRoute, path: "/", component: page(members, "MembersPage") }),
    memberRoute.addChildren([
      createRoute({ getParentRoute: () => memberRoute, path: "/", component: page(members, "MemberPage") }),
      createRoute({
        getParentRoute: () => memberRoute,
        path: "teams",
        staticData: { crumb: "nav.teams" },
        component: page(members, "MemberTeamsPage"),
      }),
      createRoute({
        getParentRoute: () => memberRoute,
        path: "fleets",
        staticData: { crumb: "nav.fleets" },
        component: page(members, "MemberFleetsPage"),
      }),
      createRoute({
        getParentRoute: () => memberRoute,
        path: "apps",
        staticData: { crumb: "nav.apps" },
        component: page(members, "MemberAppsPage"),
      }),
      createRoute({
        getParentRoute: () => memberRoute,
        path: "blocks",
        staticData: { crumb: "nav.blocks" },
        component: page(members, "MemberBlocksPage"),
      }),
    ]),
  ]);
}

/** `/orgs/{orgId}/teams/…`: the teams and one team's summary, members and access. */
function teamRoutes(org: OrgRoute) {
  const teamsRoute = createRoute({
    getParentRoute: () => org,
    path: "teams",
    staticData: { crumb: "nav.teams" },
  });
  const teamRoute = createRoute({
    getParentRoute: () => teamsRoute,
    path: "$teamId",
    staticData: { crumbObject: "team" },
    beforeLoad: ({ params, location }) => {
      requireNumericId(params.teamId, location.pathname.replace(/(\/teams\/[^/]+).*$/, "$1"));
    },
  });
  return teamsRoute.addChildren([
    createRoute({ getParentRoute: () => teamsRoute, path: "/", component: page(teams, "TeamsPage") }),
    teamRoute.addChildren([
      createRoute({ getParentRoute: () => teamRoute, path: "/", component: page(teams, "TeamPage") }),
      createRoute({
        getParentRoute: () => teamRoute,
        path: "members",
        staticData: { crumb: "nav.members" },
        component: page(teams, "TeamMembersPage"),
      }),
      createRoute({
        getParentRoute: () => teamRoute,
        path: "fleets",
        staticData: { crumb: "nav.fleets" },
        component: page(teams, "TeamFleetsPage"),
      }),
      createRoute({
        getParentRoute: () => teamRoute,
        path: "apps",
        staticData: { crumb: "nav.apps" },
        component: page(teams, "TeamAppsPage"),
      }),
      createRoute({
        getParentRoute: () => teamRoute,
        path: "blocks",
        staticData: { crumb: "nav.blocks" },
        component: page(teams, "TeamBlocksPage"),
      }),
    ]),
  ]);
}

/** `/orgs` and each organization's pages (spec 3 §2). */
export function orgsRoutes(verified: VerifiedRoute) {
  const orgsRoute = orgsListRoute(verified);
  const orgRoute = organizationRoute(orgsRoute);
  return orgsRoute.addChildren([
    createRoute({
      getParentRoute: () => orgsRoute,
      path: "/",
      component: page(() => import("./orgs-page.tsx"), "OrgsPage"),
    }),
    orgRoute.addChildren([
      createRoute({ getParentRoute: () => orgRoute, path: "/", component: page(orgPages, "OrgSummaryPage") }),
      createRoute({
        getParentRoute: () => orgRoute,
        path: "fleets",
        staticData: { crumb: "nav.fleets" },
        component: page(orgPages, "OrgFleetsPage"),
      }),
      createRoute({
        getParentRoute: () => orgRoute,
        path: "apps",
        staticData: { crumb: "nav.apps" },
        component: page(orgPages, "OrgAppsPage"),
      }),
      createRoute({
        getParentRoute: () => orgRoute,
        path: "blocks",
        staticData: { crumb: "nav.blocks" },
        component: page(orgPages, "OrgBlocksPage"),
      }),
      ...orgBillingRoutes(orgRoute),
      // Typed as bare routes, as the releases and rollouts: the route tree's type is at its limit.
      orgAuditRoute(orgRoute) as unknown as AnyRoute,
      orgWebhooksRoute(orgRoute) as unknown as AnyRoute,
      memberRoutes(orgRoute),
      teamRoutes(orgRoute),
    ]),
  ]);
}

/** Invitation links (spec 1 §2.1): signed-out visitors log in (or sign up) and come back here. */
export function invitationRoutes(verified: VerifiedRoute) {
  return [
    createRoute({
      getParentRoute: () => verified,
      path: "/organization/invitation/$token",
      component: page(invitationPage, "OrganizationInvitationPage"),
    }),
    createRoute({
      getParentRoute: () => verified,
      path: "/invitation/$token",
      component: page(invitationPage, "FleetInvitationPage"),
    }),
  ];
}
