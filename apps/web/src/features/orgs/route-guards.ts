import { notFound } from "@tanstack/react-router";
import { type RouterContext, routeData } from "../../route-kit.ts";
import { getSessionState } from "../auth/session.ts";

/**
 * A guard for an organization's page that only some roles may open (the audit log and webhook
 * pages, docs/audit-and-webhooks.md): anyone else gets the not-found page, as the server answers
 * them 403/404.
 */
export function orgPermissionGuard(action: "read_audit_log" | "manage_webhooks") {
  return async ({ params, context }: { params: { orgId: string }; context: RouterContext }) => {
    const session = await getSessionState(context.queryClient, context.sdk);
    if (session.kind !== "signed-in") return;
    const { loadMyOrgRole, organizationCan } = await routeData();
    let role: Awaited<ReturnType<typeof loadMyOrgRole>>;
    try {
      role = await loadMyOrgRole(context.queryClient, context.sdk, Number(params.orgId), session.user.id);
    } catch {
      // A failed lookup is the page's to report; no verdict on a guess.
      return;
    }
    if (!organizationCan(role ?? undefined, "organization", action)) throw notFound();
  };
}
