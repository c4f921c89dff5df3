import type { HookContext, ResourceHooks } from "../../odata/index.ts";

/**
 * Audit entries for writes through the data API, in the write's own transaction: one INSERT …
 * SELECT per write that reads the rows written (for deletes, before they go), so the entry names
 * the organization and the target as stored. Details never carry secret values: variables are
 * recorded by name only, keys by name and role.
 */

type WriteBody = Record<string, unknown>;

type Audited = {
  table: string;
  targetType: string;
  /** SQL over the row `t`: its organization (null when it has none, e.g. a user's SSH key). */
  organization: string;
  /** SQL over `t`: the target's id (default the row's). */
  target?: string;
  /** SQL over `t`: a jsonb of what identifies the change. */
  details: string;
  created?: string;
  deleted?: string;
  /** The action an update is, from the fields written; undefined for updates not audited. */
  updated?: (body: WriteBody) => string | undefined;
};

const ofFleet = (column: string) => `(SELECT a.organization FROM "application" a WHERE a.id = t.${column})`;
const ofDevice = (column: string) =>
  `(SELECT a.organization FROM "device" d JOIN "application" a ON a.id = d.belongs_to__application WHERE d.id = t.${column})`;

const variable = (table: string, targetType: string, parent: string, organization: string): Audited => ({
  table,
  targetType,
  organization,
  target: `t.${parent}`,
  // The name only: values may be secrets.
  details: `jsonb_build_object('name', t.name, 'table', '${table}')`,
  created: "variable.created",
  updated: (body) => ("value" in body || "name" in body ? "variable.updated" : undefined),
  deleted: "variable.deleted",
});

/** By data API resource name. */
export const AUDITED_RESOURCES: Readonly<Record<string, Audited>> = {
  application__has__env_var_name: variable(
    "application_environment_variable",
    "fleet",
    "application",
    ofFleet("application"),
  ),
  application__has__config_var_name: variable(
    "application_config_variable",
    "fleet",
    "application",
    ofFleet("application"),
  ),
  build_environment_variable: variable("build_environment_variable", "fleet", "application", ofFleet("application")),
  application__has__service_name__has__name: variable(
    "service_environment_variable",
    "service",
    "service",
    `(SELECT a.organization FROM "service" s JOIN "application" a ON a.id = s.application WHERE s.id = t.service)`,
  ),
  device__has__env_var_name: variable("device_environment_variable", "device", "device", ofDevice("device")),
  device__has__config_var_name: variable("device_config_variable", "device", "device", ofDevice("device")),
  device__installs__application__has__service_name__has__name: variable(
    "device_service_environment_variable",
    "service_install",
    "service_install",
    `(SELECT a.organization FROM "service_install" si JOIN "device" d ON d.id = si.device
        JOIN "application" a ON a.id = d.belongs_to__application WHERE si.id = t.service_install)`,
  ),
  user__is_member_of__organization: {
    table: "organization_membership",
    targetType: "user",
    organization: "t.is_member_of__organization",
    target: "t.user",
    details: `jsonb_build_object('role', (SELECT r.name FROM "organization_membership_role" r WHERE r.id = t.organization_membership_role))`,
    created: "membership.created",
    updated: (body) => ("organization_membership_role" in body ? "membership.role_changed" : undefined),
    deleted: "membership.deleted",
  },
  user__is_member_of__team: {
    table: "team_membership",
    targetType: "user",
    organization: `(SELECT tm.belongs_to__organization FROM "team" tm WHERE tm.id = t.is_member_of__team)`,
    target: "t.user",
    details: `jsonb_build_object('team', t.is_member_of__team)`,
    created: "team_membership.created",
    deleted: "team_membership.deleted",
  },
  user__is_member_of__application: {
    table: "user_application_membership",
    targetType: "user",
    organization: ofFleet("is_member_of__application"),
    target: "t.user",
    details: `jsonb_build_object('fleet', t.is_member_of__application,
      'role', (SELECT r.name FROM "application_membership_role" r WHERE r.id = t.application_membership_role))`,
    created: "fleet_membership.created",
    updated: (body) => ("application_membership_role" in body ? "fleet_membership.role_changed" : undefined),
    deleted: "fleet_membership.deleted",
  },
  invitee__is_invited_to__organization: {
    table: "organization_invite",
    targetType: "invitation",
    organization: "t.is_invited_to__organization",
    details: `jsonb_build_object('email', (SELECT i.email FROM "invitee" i WHERE i.id = t.invitee),
      'role', (SELECT r.name FROM "organization_membership_role" r WHERE r.id = t.organization_membership_role))`,
    created: "invitation.created",
    deleted: "invitation.deleted",
  },
  invitee__is_invited_to__application: {
    table: "application_invite",
    targetType: "invitation",
    organization: ofFleet("is_invited_to__application"),
    details: `jsonb_build_object('email', (SELECT i.email FROM "invitee" i WHERE i.id = t.invitee),
      'fleet', t.is_invited_to__application,
      'role', (SELECT r.name FROM "application_membership_role" r WHERE r.id = t.application_membership_role))`,
    created: "fleet_invitation.created",
    deleted: "fleet_invitation.deleted",
  },
  team: {
    table: "team",
    targetType: "team",
    organization: "t.belongs_to__organization",
    details: `jsonb_build_object('name', t.name)`,
    created: "team.created",
    updated: (body) => ("name" in body ? "team.renamed" : undefined),
    deleted: "team.deleted",
  },
  identity_provider: {
    table: "identity_provider",
    targetType: "identity_provider",
    // A provider belongs to the organizations it signs people into (none right after it is created).
    organization: `(SELECT m.organization FROM "identity_provider_membership" m
      WHERE m.is_authorized_by__identity_provider = t.id ORDER BY m.id LIMIT 1)`,
    details: `jsonb_build_object('sso', t.sso_identifier)`,
    created: "identity_provider.created",
    updated: () => "identity_provider.updated",
    deleted: "identity_provider.deleted",
  },
  api_key: {
    table: "api_key",
    targetType: "api_key",
    // A fleet's provisioning key belongs to the fleet's organization; personal and device keys' entries to none or the device's.
    organization: `COALESCE((SELECT a.organization FROM "application" a WHERE a.actor = t.is_of__actor),
      (SELECT a.organization FROM "device" d JOIN "application" a ON a.id = d.belongs_to__application WHERE d.actor = t.is_of__actor))`,
    details: `jsonb_build_object('name', t.name, 'role', t.role)`,
    updated: (body) =>
      "name" in body || "description" in body || "expiry_date" in body ? "api_key.updated" : undefined,
    deleted: "api_key.revoked",
  },
  user__has__public_key: {
    table: "user_public_key",
    targetType: "user",
    organization: "NULL::int",
    target: "t.user",
    details: `jsonb_build_object('title', t.title, 'key', t.id)`,
    created: "ssh_key.added",
    deleted: "ssh_key.removed",
  },
  release: {
    table: "release",
    targetType: "release",
    organization: ofFleet("belongs_to__application"),
    details: `jsonb_build_object('fleet', t.belongs_to__application, 'commit', t.commit)`,
    updated: (body) => {
      if (body.is_final === true) return "release.finalized";
      if (body.is_invalidated === true) return "release.invalidated";
      if (body.is_invalidated === false) return "release.revalidated";
      return undefined;
    },
  },
  application: {
    table: "application",
    targetType: "fleet",
    organization: "t.organization",
    details: `jsonb_build_object('release', t.should_be_running__release)`,
    updated: (body) => ("should_be_running__release" in body ? "fleet.release_pinned" : undefined),
  },
  device: {
    table: "device",
    targetType: "device",
    organization: ofDevice("id"),
    // Writes carry column names: a device's pin (should_be_running__release) is is_pinned_on__release.
    details: `jsonb_build_object('uuid', t.uuid, 'release', t.is_pinned_on__release)`,
    updated: (body) => ("is_pinned_on__release" in body ? "device.release_pinned" : undefined),
  },
  release_policy: {
    table: "release_policy",
    targetType: "fleet",
    organization: ofFleet("application"),
    target: "t.application",
    details: `jsonb_build_object('policy', t.policy)`,
    created: "release_policy.created",
    updated: () => "release_policy.updated",
    deleted: "release_policy.deleted",
  },
  organization__is_authorized_by__identity_provider: {
    table: "identity_provider_membership",
    targetType: "identity_provider",
    organization: "t.organization",
    target: "t.is_authorized_by__identity_provider",
    details: `jsonb_build_object('team', t.grants_access_to__team)`,
    created: "identity_provider.authorized",
    updated: () => "identity_provider.membership_changed",
    deleted: "identity_provider.deauthorized",
  },
};

/** The statement that records `action` for rows `$6` of the resource (actor $1, key $2, address $5). */
export function auditSql(audited: Audited): string {
  return `INSERT INTO "audit_event"
       (actor_user, actor_api_key, organization, action, target_type, target_id, client_address, details)
     SELECT $1::int, $2::int, ${audited.organization}, $3, $4, (${audited.target ?? "t.id"})::text, $5, ${audited.details}
       FROM "${audited.table}" t WHERE t.id = ANY($6::bigint[])`;
}

async function write(context: HookContext, audited: Audited, action: string, ids: number[]) {
  if (ids.length === 0) return;
  const actor = context.auditActor;
  await context.tx.query(auditSql(audited), [
    actor?.user ?? null,
    actor?.apiKey ?? null,
    action,
    audited.targetType,
    actor?.clientAddress ?? null,
    ids,
  ]);
}

/** The audit hooks of a resource, or undefined when its writes are not audited. */
export function auditHooks(resource: string): ResourceHooks | undefined {
  const audited = AUDITED_RESOURCES[resource];
  if (!audited) return undefined;
  const { created, deleted, updated } = audited;
  return {
    ...(created && { afterCreate: (args) => write(args, audited, created, [args.id]) }),
    ...(updated && {
      afterUpdate: async (args) => {
        const action = updated(args.body);
        if (action) await write(args, audited, action, args.ids);
      },
    }),
    ...(deleted && { beforeDelete: (args) => write(args, audited, deleted, args.ids) }),
  };
}
