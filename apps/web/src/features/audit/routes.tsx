import { createRoute, notFound } from "@tanstack/react-router";
import { page } from "../../route-kit.ts";
import type { VerifiedRoute } from "../../router.tsx";
import { getSessionState } from "../auth/session.ts";
import { isAdmin } from "../auth/token.ts";
import { orgPermissionGuard } from "../orgs/route-guards.ts";
import type { OrgRoute } from "../orgs/routes.tsx";

const auditPage = () => import("./audit-page.tsx");

/** `/orgs/{orgId}/audit`: the organization's audit log, for its administrators. */
export const orgAuditRoute = (org: OrgRoute) =>
  createRoute({
    getParentRoute: () => org,
    path: "audit",
    staticData: { crumb: "nav.audit_log" },
    beforeLoad: orgPermissionGuard("read_audit_log"),
    component: page(auditPage, "AuditLogPage"),
  });

/** `/audit`: every organization's audit log, for platform administrators; anybody else gets the not-found page. */
export const platformAuditRoute = (verified: VerifiedRoute) =>
  createRoute({
    getParentRoute: () => verified,
    path: "/audit",
    beforeLoad: async ({ context }) => {
      const session = await getSessionState(context.queryClient, context.sdk);
      if (session.kind !== "signed-in" || !isAdmin(session.claims)) throw notFound();
    },
    component: page(auditPage, "PlatformAuditLogPage"),
  });
