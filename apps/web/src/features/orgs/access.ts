import {
  allows,
  FLEET_MEMBERSHIP_ROLES,
  FLEET_ROLE_PERMISSIONS,
  type FleetRole,
  fleetRoleRefusal,
  ORGANIZATION_ROLE_PERMISSIONS,
  type OrganizationRole,
  strongestRole,
} from "@flotilla/domain";

/**
 * What the signed-in user may do, read from the same permission tables the server enforces
 * (packages/domain permissions.ts): the organization role from the user's organization
 * membership, fleet roles from the fleet's `user_access_roles` (the caller's fleet_access rows).
 */
export type ApplicationClass = "fleet" | "app" | "block";

/** Organization permissions of a role; no membership (e.g. a platform administrator looking in) ⇒ none. */
export function organizationCan(role: OrganizationRole | undefined, resource: string, action: string): boolean {
  if (!role) return false;
  return allows(ORGANIZATION_ROLE_PERMISSIONS[role], resource, action);
}

/** The role a user holds on a fleet: the strongest of their fleet_access rows ("member" when none). */
export function fleetRoleOf(roles: readonly string[]): FleetRole | "member" {
  const known = roles.filter((role): role is FleetRole =>
    (["observer", "safe-operator", "operator", "safe-developer", "developer", "administrator"] as string[]).includes(
      role,
    ),
  );
  return strongestRole(known) ?? "member";
}

export function fleetCan(role: FleetRole | "member", resource: string, action: string): boolean {
  return allows(FLEET_ROLE_PERMISSIONS[role], resource, action);
}

/** Organization-level actions on one organization (spec 3 §6). */
export interface OrganizationAbilities {
  rename: boolean;
  manageMembers: boolean;
  manageTeams: boolean;
  accessBilling: boolean;
  createFleets: boolean;
  /** Only the sole administrator sees "Delete organization". */
  delete: boolean;
  /** Everyone else sees "Leave organization"; the last administrator cannot leave. */
  leave: "allowed" | "last_admin" | "hidden";
}

export function organizationAbilities(
  role: OrganizationRole | undefined,
  administratorCount: number,
): OrganizationAbilities {
  const soleAdmin = role === "administrator" && administratorCount === 1;
  return {
    rename: organizationCan(role, "organization", "update"),
    manageMembers: organizationCan(role, "organization_membership", "all"),
    manageTeams: organizationCan(role, "team", "all"),
    accessBilling: organizationCan(role, "organization", "access_billing"),
    createFleets: organizationCan(role, "application", "create"),
    delete: soleAdmin && organizationCan(role, "organization", "delete"),
    leave: !role ? "hidden" : soleAdmin ? "last_admin" : "allowed",
  };
}

/** May this membership be removed or demoted? Not when it is the last administrator's. */
export function isLastAdministrator(role: OrganizationRole | undefined, administratorCount: number): boolean {
  return role === "administrator" && administratorCount <= 1;
}

/** Monthly price per member of each fleet role in dollars (spec 2 §6, spec 3 §6). */
export const ROLE_PRICES: Readonly<Record<FleetRole, number>> = {
  observer: 0,
  "safe-operator": 29,
  operator: 29,
  "safe-developer": 49,
  developer: 49,
  administrator: 49,
};

export const DEFAULT_FLEET_ROLE: FleetRole = "developer";

/** What the organization's plan allows in the role pickers: a paid plan, and the features it provides. */
export type PlanAccess = { paidPlan: boolean; planFeatures: readonly string[] };
/** Until the plan is known (or when it cannot be read): the free plan, which provides no limited roles. */
export const FREE_PLAN_ACCESS: PlanAccess = { paidPlan: false, planFeatures: [] };

export interface RoleOption {
  role: FleetRole;
  price: number;
  /** Why it cannot be picked: paid-only on a free plan. Operator roles outside fleets are left out. */
  disabled?: "paid_only_role";
}

/**
 * The roles a fleet role picker offers (spec 2 §6 "Other rules", spec 1 §6.2): operator roles only
 * for fleets, limited (safe-) roles only where allowed and when the plan provides them (on a paid
 * plan; on a free plan they show disabled with the other paid-only roles), paid-only roles
 * disabled on free plans.
 */
export function fleetRoleOptions(
  context: PlanAccess & { applicationClass: ApplicationClass; limitedRolesAllowed?: boolean },
): RoleOption[] {
  const out: RoleOption[] = [];
  for (const role of FLEET_MEMBERSHIP_ROLES) {
    if (role.startsWith("safe-") && context.limitedRolesAllowed === false) continue;
    const refusal = fleetRoleRefusal(role, context);
    if (refusal === "operator_role_fleets_only" || refusal === "limited_roles_not_in_plan") continue;
    out.push({ role, price: ROLE_PRICES[role], ...(refusal ? { disabled: refusal } : {}) });
  }
  return out;
}

/** A plausible email address (the server checks it again). */
export function isValidEmail(value: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value.trim());
}
