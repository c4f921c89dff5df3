import { notFound } from "@tanstack/react-router";
import { type RouterContext, routeData } from "../../route-kit.ts";
import { getSessionState } from "../auth/session.ts";

type OrganizationAction = "access_billing" | "read_audit_log" | "manage_webhooks";

/**
 * Whether the signed-in user's role in the organization allows the action (the permission table
 * of packages/domain); undefined when that is not known (signed out, or a failed lookup, which is
 * the page's to report: no verdict on a guess).
 */
export async function myOrganizationCan(
  context: RouterContext,
  orgId: number,
  action: OrganizationAction,
): Promise<boolean | undefined> {
  const session = await getSessionState(context.queryClient, context.sdk);
  if (session.kind !== "signed-in") return undefined;
  const { loadMyOrgRole, organizationCan } = await routeData();
  let role: Awaited<ReturnType<typeof loadMyOrgRole>>;
  try {
    role = await loadMyOrgRole(context.queryClient, context.sdk, orgId, session.user.id);
  } catch {
    return undefined;
  }
  return organizationCan(role ?? undefined, "organization", action);
}

/**
 * A guard for an organization's page that only some roles may open (the audit log and webhook
 * pages, docs/audit-and-webhooks.md): anyone else gets the not-found page, as the server answers
 * them 403/404.
 */
export function orgPermissionGuard(action: OrganizationAction) {
  return async ({ params, context }: { params: { orgId: string }; context: RouterContext }) => {
    if ((await myOrganizationCan(context, Number(params.orgId), action)) === false) throw notFound();
  };
}
