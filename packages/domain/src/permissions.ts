/**
 * Roles and what they may do (spec 1 §6, spec 2 §6, shared/notes/spec-decisions.md 1–3, 8, 9).
 * One table, read by the server's data engine (which enforces it) and by the dashboard (which
 * hides and disables what the server would refuse). Permissions are `resource.action`; `all`
 * covers every action on the resource. Fleet permissions hold for the fleet the role is on and
 * everything in it (its devices, releases, variables, tags, keys).
 */

export const FLEET_ROLES = [
  "observer",
  "safe-operator",
  "operator",
  "safe-developer",
  "developer",
  "administrator",
] as const;
export type FleetRole = (typeof FLEET_ROLES)[number];

/** Roles a fleet membership or a team's fleet access can carry (administrator comes from the organization). */
export const FLEET_MEMBERSHIP_ROLES = ["observer", "safe-operator", "operator", "safe-developer", "developer"] as const;

export const ORGANIZATION_ROLES = ["administrator", "member"] as const;
export type OrganizationRole = (typeof ORGANIZATION_ROLES)[number];

/** Ranking order, strongest first (spec 2 §6). */
export const ROLE_RANKING = [
  "balena_admin",
  "support_agent",
  "administrator",
  "developer",
  "safe-developer",
  "operator",
  "safe-operator",
  "observer",
  "member",
] as const;
export type AnyRole = (typeof ROLE_RANKING)[number];

/**
 * The global roles (spec 1 §3: "global roles platform administrator and support_agent, added from
 * the user's global flags"): `balena_admin` is the platform administrator. A session token carries
 * them as the permissions `admin.home` and `support.home`.
 */
export const GLOBAL_ROLES = ["support_agent", "balena_admin"] as const;
export type GlobalRole = (typeof GLOBAL_ROLES)[number];
export const GLOBAL_ROLE_PERMISSION: Readonly<Record<GlobalRole, string>> = {
  balena_admin: "admin.home",
  support_agent: "support.home",
};
export const isGlobalRole = (value: unknown): value is GlobalRole =>
  typeof value === "string" && (GLOBAL_ROLES as readonly string[]).includes(value);

/** A user as Admin → Users lists them (`GET /admin/v1/users`). */
export interface AdminUser {
  id: number;
  username: string;
  email: string | null;
  is_verified: boolean;
  created_at: string;
  /** The last successful sign-in the audit log holds (password, SAML, social); null: none kept. */
  last_sign_in_at: string | null;
  global_roles: GlobalRole[];
}

/** One page of Admin → Users, with how many users hold each global role. */
export interface AdminUsersPage {
  users: AdminUser[];
  total: number;
  role_counts: Record<GlobalRole, number>;
}

/** Seat roles of an organization's members, strongest first (spec 3 §3). */
export const SEAT_ROLES = ROLE_RANKING.filter(
  (role): role is Exclude<AnyRole, "balena_admin" | "support_agent"> =>
    role !== "balena_admin" && role !== "support_agent",
);

/** Roles free accounts cannot give (spec 2 §6 "Other rules"). */
export const PAID_ONLY_ROLES: readonly FleetRole[] = ["safe-developer", "operator", "safe-operator"];

/** What every role on a fleet may read: the fleet and what is in it (variables and keys excepted). */
const READ_FLEET = [
  "application.read",
  "application_tag.read",
  "application_environment_variable.read",
  "service.read",
  "service_label.read",
  "service_environment_variable.read",
  "device.read",
  "device_tag.read",
  "device_environment_variable.read",
  "device_service_environment_variable.read",
  "service_install.read",
  "image_install.read",
  "release.read",
  "release_tag.read",
  "release_asset.read",
  "image.read",
  "release_image.read",
  "image_label.read",
  "image_environment_variable.read",
  "user_application_membership.read",
  "team_application_access.read",
  "application_invite.read",
  "release_policy.read",
  "rollout.read",
  "rollout_wave.read",
  "rollout_device.read",
] as const;

const SAFE_OPERATOR = [
  ...READ_FLEET,
  "api_key.all",
  "device.create",
  "device.update",
  "device.access_diagnostics",
  "device.ssh",
  "device.ssh-host",
  "device.actions-proxy-hup",
  "device_environment_variable.all",
  "device_service_environment_variable.all",
  "device_tag.all",
] as const;

const OPERATOR = [
  ...SAFE_OPERATOR,
  "application.deactivate-device",
  "device.delete",
  "device.move",
  "device_config_variable.all",
  "device.supervisor-proxy-write",
  "device.actions-proxy-supervisorupgrade",
] as const;

const SAFE_DEVELOPER = [
  ...OPERATOR.filter((p) => p !== "device.delete"),
  "application.push",
  "application_config_variable.read",
  "application_tag.all",
  "application_environment_variable.all",
  "build_environment_variable.all",
  "service.create",
  "service_environment_variable.all",
  "service_label.all",
  "release.create",
  "release.update",
  "release_tag.read",
  "release_tag.create",
  "release_tag.update",
  "release_asset.all",
  "image.create",
  "image.update",
  "release_image.create",
  // balena deploy writes the composition's labels and environment of each image it creates.
  "image_label.create",
  "image_environment_variable.create",
  "device_log.delete",
  "user_application_membership.delete",
] as const;

const DEVELOPER = [
  ...SAFE_DEVELOPER,
  "device.all",
  "device_config_variable.all",
  "application.update",
  // Those who may pin the fleet's release set how it rolls out, and steer a rollout (docs/rollouts.md).
  "release_policy.all",
  "rollout.update",
  "application_config_variable.all",
  "release.all",
  "release_tag.all",
  "image.all",
  "release_image.all",
  "service.all",
] as const;

const ADMINISTRATOR = [
  ...DEVELOPER,
  "application.create",
  "application.delete",
  "application.transfer",
  "application.change-type",
  "user_application_membership.all",
  "team_application_access.all",
  "application_invite.all",
] as const;

export const FLEET_ROLE_PERMISSIONS: Readonly<Record<FleetRole | "member", readonly string[]>> = {
  member: [],
  observer: READ_FLEET,
  "safe-operator": SAFE_OPERATOR,
  operator: OPERATOR,
  "safe-developer": SAFE_DEVELOPER,
  developer: DEVELOPER,
  administrator: ADMINISTRATOR,
};

/** Global roles, on every fleet (spec 2 §6: support_agent and balena_admin). */
export const GLOBAL_ROLE_FLEET_PERMISSIONS: Readonly<Record<"support_agent" | "balena_admin", readonly string[]>> = {
  support_agent: ["device.access_diagnostics", "device.ssh", "device.ssh-host"],
  balena_admin: ["device.access_diagnostics", "device.ssh", "device.ssh-host"],
};

/**
 * Organization permission keys (spec 3 §6): administrators hold them all, members none.
 * `organization.delete` is further limited to a sole administrator (checked by the server).
 */
export const ORGANIZATION_ROLE_PERMISSIONS: Readonly<Record<OrganizationRole, readonly string[]>> = {
  administrator: [
    "application.create",
    "organization.update",
    "organization.delete",
    "organization.access_billing",
    "organization.read_audit_log",
    "organization.manage_webhooks",
    // The email domains the organization's identity providers may sign in (docs/identity.md).
    "organization.manage_domains",
    "organization_membership.all",
    "organization_membership_tag.all",
    "team.all",
    "team_membership.all",
    "team_application_access.create",
    "user_application_membership.create",
    // A user's own API keys need the administrator role in some organization (spec 1 §6.1).
    "user_api_key.create",
    // Creating an organization, too (spec 1 §6.2 table permissions; docs/decisions.md): every
    // account administers its personal organization; platform administrators may always.
    "organization.create",
  ],
  member: [],
};

/** Does this permission list allow `resource.action` (directly or through `resource.all`)? */
export function allows(permissions: readonly string[], resource: string, action: string): boolean {
  return permissions.includes(`${resource}.${action}`) || permissions.includes(`${resource}.all`);
}

/** The fleet roles that allow `resource.action`: what the server turns into a row filter. */
export function fleetRolesAllowing(resource: string, action: string): FleetRole[] {
  return FLEET_ROLES.filter((role) => allows(FLEET_ROLE_PERMISSIONS[role], resource, action));
}

/** The strongest of several roles (roles are merged: spec 1 §6.1). */
export function strongestRole<R extends AnyRole>(roles: readonly R[]): R | undefined {
  return [...roles].sort((a, b) => ROLE_RANKING.indexOf(a) - ROLE_RANKING.indexOf(b))[0];
}

/** Operator roles exist on fleets only, not on apps or blocks (spec 2 §6). */
export const OPERATOR_ONLY_FLEET_ROLES: readonly FleetRole[] = ["operator", "safe-operator"];

/** The limited (safe-) roles: a preview add-on, offered only on plans that provide SAFE_ROLES_FEATURE (spec 1 §6.2). */
export const LIMITED_FLEET_ROLES: readonly FleetRole[] = ["safe-developer", "safe-operator"];
/** The plan feature the limited roles are tied to (the catalogue's `plan__provides__feature` slug). */
export const SAFE_ROLES_FEATURE = "preview:safe-roles";

/**
 * Why a fleet role cannot be given here, or undefined when it can (spec 2 §6 "Other rules",
 * spec 1 §6.2): paid-only roles need a paid plan, the limited roles also a plan that provides
 * SAFE_ROLES_FEATURE (a paid legacy plan may not), operator roles a fleet (not an app or a block).
 * `planFeatures` are the slugs of the organization's plan's features.
 */
export function fleetRoleRefusal(
  role: string,
  context: { paidPlan: boolean; planFeatures: readonly string[]; applicationClass: "fleet" | "app" | "block" },
): "paid_only_role" | "operator_role_fleets_only" | "limited_roles_not_in_plan" | undefined {
  if (OPERATOR_ONLY_FLEET_ROLES.includes(role as FleetRole) && context.applicationClass !== "fleet") {
    return "operator_role_fleets_only";
  }
  if (PAID_ONLY_ROLES.includes(role as FleetRole) && !context.paidPlan) return "paid_only_role";
  if (LIMITED_FLEET_ROLES.includes(role as FleetRole) && !context.planFeatures.includes(SAFE_ROLES_FEATURE)) {
    return "limited_roles_not_in_plan";
  }
  return undefined;
}
