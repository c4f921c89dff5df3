import {
  type FleetRole,
  fleetRolesAllowing,
  GLOBAL_ROLE_FLEET_PERMISSIONS,
  OS_CATALOGUE_ORGANIZATION,
} from "@flotilla/domain";

/**
 * Turns the role tables of packages/domain into pinejs-style permission strings
 * (`resin.{resource}.{action}?{filter}` with `@__ACTOR_ID`), which the OData engine ANDs into
 * every query. Fleet permissions apply through the `fleet_access` view (organization
 * administrators, direct fleet members, team access); organization and personal resources have
 * their own filters below. Tenant isolation is these strings: nothing else grants access.
 */

/** From a fleet-scoped resource to its fleet: the navigation names, nearest first. */
const FLEET_PATHS: Readonly<Record<string, readonly string[]>> = {
  application: [],
  application_tag: ["application"],
  application_environment_variable: ["application"],
  build_environment_variable: ["application"],
  application_config_variable: ["application"],
  service: ["application"],
  service_label: ["service", "application"],
  service_environment_variable: ["service", "application"],
  device: ["belongs_to__application"],
  device_tag: ["device", "belongs_to__application"],
  device_environment_variable: ["device", "belongs_to__application"],
  device_config_variable: ["device", "belongs_to__application"],
  device_service_environment_variable: ["service_install", "device", "belongs_to__application"],
  image_install: ["device", "belongs_to__application"],
  service_install: ["device", "belongs_to__application"],
  release: ["belongs_to__application"],
  release_tag: ["release", "belongs_to__application"],
  release_asset: ["release", "belongs_to__application"],
  release_policy: ["application"],
  rollout: ["belongs_to__application"],
  rollout_wave: ["rollout", "belongs_to__application"],
  rollout_device: ["rollout", "belongs_to__application"],
  image: ["is_a_build_of__service", "application"],
  release_image: ["is_part_of__release", "belongs_to__application"],
  image_label: ["release_image", "is_part_of__release", "belongs_to__application"],
  image_environment_variable: ["release_image", "is_part_of__release", "belongs_to__application"],
  user_application_membership: ["is_member_of__application"],
  team_application_access: ["grants_access_to__application"],
  application_invite: ["is_invited_to__application"],
  // Provisioning keys belong to the fleet's actor.
  api_key: ["is_of__actor", "is_of__application"],
};

const quote = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** `a/any(x1:x1/b/any(x2:x2/… condition))` from a resource to its fleet. */
function throughPath(path: readonly string[], condition: (at: string) => string): string {
  const step = (index: number, at: string): string => {
    if (index === path.length) return condition(at);
    const variable = `p${index}`;
    return `${at}${path[index]}/any(${variable}:${step(index + 1, `${variable}/`)})`;
  };
  return step(0, "");
}

const fleetRoleFilter = (roles: readonly string[]) => (at: string) =>
  `${at}fleet_access/any(fa:fa/actor eq @__ACTOR_ID and fa/role in (${roles.map(quote).join(",")}))`;

const memberOf = (organization: string) =>
  `${organization}organization_membership/any(om:om/user/any(ou:ou/actor eq @__ACTOR_ID))`;
const adminOf = (organization: string) =>
  `${organization}organization_membership/any(om:om/user/any(ou:ou/actor eq @__ACTOR_ID) and om/organization_membership_role/any(omr:omr/name eq 'administrator'))`;

/** An identity provider is managed by the administrators of the organizations it authorizes (spec 3 §6). */
const idpAdminOf = (provider: string) =>
  `${provider}identity_provider_membership/any(ipm:ipm/organization/any(ipo:${adminOf("ipo/")}))`;

/** The caller created the identity provider, which has no organization yet. */
const idpCreatorWithoutOrganization = "(created_by__actor eq @__ACTOR_ID and identity_provider_membership/$count eq 0)";

/**
 * Writing an identity provider membership: the caller administers its organization, every
 * organization of the provider, and the team it grants access to (if any).
 */
const idpMembershipWrite =
  `organization/any(o:${adminOf("o/")})` +
  ` and is_authorized_by__identity_provider/any(i:i/identity_provider_membership/all(m:m/organization/any(mo:${adminOf("mo/")})))` +
  ` and (grants_access_to__team eq null or grants_access_to__team/any(t:t/belongs_to__organization/any(ot:${adminOf("ot/")})))`;

/** A public fleet of the system organization that owns the OS catalogue. */
const PUBLIC_FLEET = (at: string) =>
  `${at}is_public eq true and ${at}organization/any(po:po/handle eq '${OS_CATALOGUE_ORGANIZATION}')`;

/**
 * What anyone may read without a token, as on balena: the device-type catalogue (public types
 * only) and the public OS catalogue (migration 0013): host-OS and supervisor fleets of the system
 * organization, their releases and tags. Read only: nobody holds a role on them, so no write
 * grant reaches them; fleet lists ask for fleets the user holds a role on.
 */
export function guestPermissions(): string[] {
  return [
    ...["cpu_architecture", "device_family", "device_manufacturer", "application_type"].map((r) => `resin.${r}.read`),
    "resin.device_type.read?is_private eq false",
    "resin.device_type_alias.read?device_type/canAccess()",
    `resin.application.read?${PUBLIC_FLEET("")}`,
    `resin.application_tag.read?application/any(pa:${PUBLIC_FLEET("pa/")})`,
    `resin.release.read?belongs_to__application/any(pa:${PUBLIC_FLEET("pa/")})`,
    `resin.release_tag.read?release/any(pr:pr/belongs_to__application/any(pa:${PUBLIC_FLEET("pa/")}))`,
  ];
}

/** What every signed-in user holds, whatever their roles. */
function userPermissions(): string[] {
  const own = "actor eq @__ACTOR_ID";
  return [
    ...guestPermissions(),
    // A private device type only for the organizations given access to it.
    `resin.device_type.read?is_accessible_privately_by__organization/any(o:${memberOf("o/")})`,
    ...["application_membership_role", "organization_membership_role"].map((r) => `resin.${r}.read`),
    // Oneself, and the people one shares an organization with (member lists show them).
    `resin.actor.read?id eq @__ACTOR_ID`,
    `resin.user.read?${own}`,
    `resin.user.update?${own}`,
    // Deleting one's own account (spec 1 §4); the user hooks add freshness and the billing rules.
    `resin.user.delete?${own}`,
    `resin.user.read?organization_membership/any(m:m/is_member_of__organization/any(o:${memberOf("o/")}))`,
    `resin.user_public_key.all?user/any(u:u/${own})`,
    `resin.api_key.all?is_of__actor/any(a:a/id eq @__ACTOR_ID)`,
    `resin.fleet_access.read?${own}`,
    // Organizations: members read, administrators manage. Creating one needs the administrator
    // role in some organization (the organization hooks check it; docs/decisions.md), and the
    // creator becomes its administrator in the same transaction.
    "resin.organization.create",
    `resin.organization.read?${memberOf("")}`,
    `resin.organization.update?${adminOf("")}`,
    `resin.organization.delete?${adminOf("")}`,
    `resin.organization_membership.read?is_member_of__organization/any(o:${memberOf("o/")})`,
    // Administrators change roles and remove members; joining goes through an invitation.
    `resin.organization_membership.update?is_member_of__organization/any(o:${adminOf("o/")})`,
    // An administrator may demote themselves: the changed row (a member's) must pass the check
    // after the write, and a member who tried to promote themselves fails it.
    `resin.organization_membership.update?user/any(u:u/${own}) and organization_membership_role/any(r:r/name eq 'member')`,
    `resin.organization_membership.delete?is_member_of__organization/any(o:${adminOf("o/")})`,
    `resin.organization_membership.delete?user/any(u:u/${own})`,
    `resin.organization_membership_tag.all?organization_membership/any(m:m/is_member_of__organization/any(o:${adminOf("o/")}))`,
    `resin.organization_invite.all?is_invited_to__organization/any(o:${adminOf("o/")})`,
    // An invitee's email, for whoever may read one of their invitations.
    "resin.invitee.read?organization_invite/canAccess()",
    "resin.invitee.read?application_invite/canAccess()",
    `resin.team.read?belongs_to__organization/any(o:${memberOf("o/")})`,
    `resin.team.all?belongs_to__organization/any(o:${adminOf("o/")})`,
    `resin.team_membership.read?is_member_of__team/any(t:t/belongs_to__organization/any(o:${memberOf("o/")}))`,
    `resin.team_membership.all?is_member_of__team/any(t:t/belongs_to__organization/any(o:${adminOf("o/")}))`,
    // Fleets are created by organization administrators (decision 1).
    `resin.application.create?organization/any(o:${adminOf("o/")})`,
    `resin.organization_has_private_access_to_device_type.read?organization/any(o:${memberOf("o/")})`,
    // Sign-in methods of one's own (recovery codes without the code: only its hash is kept, outside the model).
    `resin.user_profile.read?is_of__user/any(u:u/${own})`,
    // The profiles of the people one shares an organization with, as their user rows (member
    // lists show their email: spec 2 §3 user_application_membership's user expansion).
    `resin.user_profile.read?is_of__user/any(u:u/organization_membership/any(m:m/is_member_of__organization/any(o:${memberOf("o/")})))`,
    `resin.social_service_account.read?belongs_to__user/any(u:u/${own})`,
    `resin.saml_account.read?belongs_to__user/any(u:u/${own})`,
    `resin.recovery_two_factor.read?belongs_to__user/any(u:u/${own})`,
    "resin.oauth_application.read",
    // Grants are made by POST /oauth/authorize; a user reads and revokes their own.
    `resin.oauth_application_authorization.read?belongs_to__user/any(u:u/${own})`,
    `resin.oauth_application_authorization.delete?belongs_to__user/any(u:u/${own})`,
    // The plan catalogue is public.
    ...["plan", "feature", "plan_feature", "plan_addon", "support_tier", "support_feature"].map(
      (r) => `resin.${r}.read`,
    ),
    // Plan and billing data only for organizations the user administers (spec 1 §6, spec 3 §1).
    `resin.subscription.read?is_for__organization/any(o:${adminOf("o/")})`,
    `resin.subscription_prepaid_addon.read?is_for__subscription/any(s:s/is_for__organization/any(o:${adminOf("o/")}))`,
    `resin.subscription_addon_discount.read?subscription/any(s:s/is_for__organization/any(o:${adminOf("o/")}))`,
    `resin.credit_bundle.read?belongs_to__organization/any(o:${adminOf("o/")})`,
    // Buying credits: the billing hook checks the plan and payment method, prices and charges it.
    `resin.credit_bundle.create?belongs_to__organization/any(o:${adminOf("o/")})`,
    `resin.organization_credit_notification.all?organization/any(o:${adminOf("o/")})`,
    // Identity providers, managed by the administrators of the organizations they authorize.
    // Anyone may try to create one: the hook wants an organization they administer on a plan with
    // SAML, and only the creator gives it its first organization. Adding an organization needs its
    // administrator, who must also administer every organization the provider already has: nobody
    // takes over a provider (and the SAML accounts it signs in) by adding an organization of theirs.
    "resin.identity_provider.create",
    // Its creator manages it until it has its first organization (an hour at most: hooks.ts).
    `resin.identity_provider.read?${idpAdminOf("")} or ${idpCreatorWithoutOrganization}`,
    `resin.identity_provider.update?${idpAdminOf("")} or ${idpCreatorWithoutOrganization}`,
    `resin.identity_provider.delete?${idpAdminOf("")} or ${idpCreatorWithoutOrganization}`,
    `resin.identity_provider_membership.read?is_authorized_by__identity_provider/any(i:${idpAdminOf("i/")})`,
    `resin.identity_provider_membership.delete?is_authorized_by__identity_provider/any(i:${idpAdminOf("i/")})`,
    `resin.identity_provider_membership.create?${idpMembershipWrite}`,
    `resin.identity_provider_membership.update?${idpMembershipWrite}`,
    `resin.saml_account.read?was_generated_by__identity_provider/any(i:${idpAdminOf("i/")})`,
    `resin.saml_account.delete?was_generated_by__identity_provider/any(i:${idpAdminOf("i/")})`,
  ];
}

/** The permission strings of a user with these global roles (`balena_admin`, `support_agent`). */
export function permissionsForUser(globalRoles: readonly string[] = []): string[] {
  const strings = userPermissions();
  for (const [resource, path] of Object.entries(FLEET_PATHS)) {
    for (const action of ["read", "create", "update", "delete"]) {
      const roles = fleetRolesAllowing(resource, action);
      if (roles.length > 0) strings.push(`resin.${resource}.${action}?${throughPath(path, fleetRoleFilter(roles))}`);
    }
  }
  // A device's keys are listed to those who may read the device (balena-sdk getDeviceApiKeysByDevice).
  const deviceReaders = fleetRolesFor("device.read").roles;
  strings.push(
    `resin.api_key.read?is_of__actor/any(a:a/is_of__device/any(d:d/belongs_to__application/any(f:${fleetRoleFilter(deviceReaders)("f/")})))`,
  );
  if (globalRoles.some(isSupportStaff)) strings.push(...supportAccessPermissions());
  if (globalRoles.includes("balena_admin")) {
    strings.push(
      "resin.organization.all",
      "resin.organization_membership.all",
      // spec 2 §6 "Fleet membership": developer and balena_admin can remove.
      "resin.user_application_membership.read",
      "resin.user_application_membership.delete",
      // The plan catalogue is edited by platform administrators (spec 3 §3 plans as data).
      "resin.plan.all",
      "resin.plan_feature.all",
      "resin.plan_addon.all",
      // OAuth applications are registered by platform administrators (spec 1 §3; docs/identity.md).
      "resin.oauth_application.all",
    );
  }
  return strings;
}

const isSupportStaff = (role: string) => role in GLOBAL_ROLE_FLEET_PERMISSIONS;

/** Support access (spec 2 §5 "Support access") is granted until a date, on a fleet or a device. */
export const SUPPORT_GRANTED = (at: string) => `${at}is_accessible_by_support_until__date gt now()`;

/**
 * Platform staff (support_agent, balena_admin) read a fleet and what belongs to it while the fleet
 * grants support access, and a device and what belongs to it while the device does; nothing once
 * it has expired. Their diagnostics and terminals follow the same grant (actions.ts `mayDo`).
 */
function supportAccessPermissions(): string[] {
  const strings: string[] = [];
  for (const [resource, path] of Object.entries(FLEET_PATHS)) {
    if (resource === "api_key" || resource === "user_application_membership") continue;
    strings.push(`resin.${resource}.read?${throughPath(path, SUPPORT_GRANTED)}`);
    const toDevice = resource === "device" ? 0 : path.indexOf("device") + 1;
    if (resource === "device" || toDevice > 0) {
      strings.push(`resin.${resource}.read?${throughPath(path.slice(0, toDevice), SUPPORT_GRANTED)}`);
    }
  }
  return strings;
}

/** The device whose key calls. */
const OWN_DEVICE = "actor eq @__ACTOR_ID";
/** From a fleet (`at` ends with `/` or is empty) to the calling device among its devices. */
const OWNS_CALLER = (at: string) => `${at}owns__device/any(od:od/${OWN_DEVICE})`;
/** A row hanging off the calling device through its `device` navigation. */
const OF_OWN_DEVICE = `device/any(d:d/${OWN_DEVICE})`;

/**
 * What a device key may do under /v7, as balena gives it to its Supervisor (open-balena-api's
 * device key role), scoped to the device itself and its fleet:
 * - its own row: read, and update (the device hooks keep the fields a device may write to the
 *   name, a preload pin and what it reports: features/devices/device-key-hooks.ts);
 * - its config and environment variables: read, create, update (environment variables also
 *   delete); its service variables likewise, created only on a service install of its own;
 * - its tags: read, create, update (`PATCH /device/v3/tags` writes through these);
 * - its service and image installs: read;
 * - its fleet, the fleet's services, releases, release images and images: read;
 * - the public catalogues anyone may read without a token.
 * Nothing of another device, fleet or organization: every filter goes through `@__ACTOR_ID`.
 * Frozen devices are refused by the write hooks (settings-hooks.ts), as for users.
 */
function deviceKeyPermissions(): string[] {
  const ofFleet = (resource: string) => throughPath(FLEET_PATHS[resource] ?? [], OWNS_CALLER);
  const ownServiceInstall = `service_install/any(si:si/device/any(sd:sd/${OWN_DEVICE}))`;
  return [
    ...guestPermissions(),
    `resin.device.read?${OWN_DEVICE}`,
    `resin.device.update?${OWN_DEVICE}`,
    ...["read", "create", "update"].map((action) => `resin.device_config_variable.${action}?${OF_OWN_DEVICE}`),
    ...["read", "create", "update", "delete"].map(
      (action) => `resin.device_environment_variable.${action}?${OF_OWN_DEVICE}`,
    ),
    ...["read", "create", "update"].map((action) => `resin.device_tag.${action}?${OF_OWN_DEVICE}`),
    `resin.service_install.read?${OF_OWN_DEVICE}`,
    `resin.image_install.read?${OF_OWN_DEVICE}`,
    // A service variable of its own, on a service of its own fleet (a service install's service
    // is one of the device's fleet when the install was made; the fleet check keeps it so after a move).
    ...["read", "create", "update", "delete"].map(
      (action) =>
        `resin.device_service_environment_variable.${action}?${ownServiceInstall} and service_install/any(sf:sf/installs__service/any(s:s/application/any(a:${OWNS_CALLER("a/")})))`,
    ),
    ...["application", "service", "release", "release_image", "image"].map(
      (resource) => `resin.${resource}.read?${ofFleet(resource)}`,
    ),
  ];
}

/**
 * What a fleet's or a device's own key may do under /v7 (docs/device-protocol.md
 * "Registration", "balenaOS devices"): a device what `deviceKeyPermissions` lists, a
 * provisioning key its fleet and the fleet's devices, so a device whose uuid is taken can find
 * its id for the key exchange. Nothing else.
 */
export function permissionsForKey(role: string | undefined): string[] {
  if (role === "device-api-key") return deviceKeyPermissions();
  if (role === "provisioning-api-key") {
    return [
      "resin.application.read?actor eq @__ACTOR_ID",
      "resin.device.read?belongs_to__application/any(a:a/actor eq @__ACTOR_ID)",
    ];
  }
  return [];
}

/** Roles on a fleet that allow a custom action (device.ssh, device.supervisor-proxy-write, …). */
export function fleetRolesFor(
  permission: string,
  globalRoles: readonly string[] = [],
): { roles: FleetRole[]; everywhere: boolean } {
  const [resource = "", action = ""] = permission.split(".");
  const roles = fleetRolesAllowing(resource, action);
  const everywhere = globalRoles.some((role) =>
    (GLOBAL_ROLE_FLEET_PERMISSIONS[role as keyof typeof GLOBAL_ROLE_FLEET_PERMISSIONS] ?? []).some(
      (p) => p === permission || p === `${resource}.all`,
    ),
  );
  return { roles, everywhere };
}

export const __test = { throughPath, FLEET_PATHS };
