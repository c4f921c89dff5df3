import { createRoute, redirect } from "@tanstack/react-router";
import { t } from "../../lib/i18n.ts";
import { showToast } from "../../lib/toasts.ts";
import { page, type RouterContext } from "../../route-kit.ts";
import { myOrganizationCan } from "../orgs/route-guards.ts";
import type { OrgRoute } from "../orgs/routes.tsx";
import { billingSearch } from "./search.ts";

/**
 * The billing pages' guard: only with organization.access_billing (the permission table of
 * packages/domain), otherwise `/` (spec 1 §2.2; spec 3 §2 Organizations).
 */
async function billingAccessGuard({
  params,
  context,
  preload,
}: {
  params: { orgId: string };
  context: RouterContext;
  preload?: boolean;
}) {
  if ((await myOrganizationCan(context, Number(params.orgId), "access_billing")) === false) {
    // Non-administrators are told whom to ask (spec 3 §6).
    if (!preload) showToast("info", t("billing.administrators_only"));
    throw redirect({ to: "/", replace: true });
  }
}

/** An organization's billing pages (spec 3 §2 Billing): billing access only; reachable when frozen. */
export function orgBillingRoutes(org: OrgRoute) {
  return [
    createRoute({
      getParentRoute: () => org,
      path: "billing",
      staticData: { crumb: "nav.billing" },
      validateSearch: billingSearch,
      beforeLoad: billingAccessGuard,
      component: page(() => import("./billing-page.tsx"), "BillingPage"),
    }),
    /** `/orgs/{orgId}/credits` (spec 3 §4 Credits). */
    createRoute({
      getParentRoute: () => org,
      path: "credits",
      staticData: { crumb: "nav.credits" },
      beforeLoad: billingAccessGuard,
      component: page(() => import("./credits-page.tsx"), "CreditsPage"),
    }),
  ];
}
