import { sql } from "drizzle-orm";
import { type AnyPgColumn, boolean, check, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { actor, user } from "./accounts.ts";
import { createdAt, date, id, lower, modifiedAt, optional, ownedBy, requires, shortText } from "./columns.ts";
import { invitee, organization, team } from "./organizations.ts";
import { release } from "./releases.ts";

// The device-type catalogue (seeded by a migration).

export const cpu_architecture = pgTable("cpu_architecture", {
  id: id(),
  slug: text().notNull().unique(),
});

export const device_manufacturer = pgTable("device_manufacturer", {
  id: id(),
  slug: text().notNull().unique(),
  name: shortText(),
});

export const device_family = pgTable("device_family", {
  id: id(),
  slug: text().notNull().unique(),
  name: shortText(),
  is_manufactured_by__device_manufacturer: optional(() => device_manufacturer.id),
});

export const device_type = pgTable("device_type", {
  id: id(),
  slug: text().notNull().unique(),
  name: shortText(),
  is_of__cpu_architecture: requires(() => cpu_architecture.id),
  logo: text(),
  contract: jsonb(),
  belongs_to__device_family: optional(() => device_family.id),
  is_private: boolean().notNull().default(false),
});

export const device_type_alias = pgTable("device_type_alias", {
  id: id(),
  device_type: ownedBy(() => device_type.id),
  is_referenced_by__alias: text().notNull().unique(),
});

export const organization_has_private_access_to_device_type = pgTable(
  "organization_has_private_access_to_device_type",
  {
    id: id(),
    organization: ownedBy(() => organization.id),
    has_private_access_to__device_type: ownedBy(() => device_type.id),
  },
  (t) => [uniqueIndex("organization_private_device_type_key").on(t.organization, t.has_private_access_to__device_type)],
);

export const application_type = pgTable("application_type", {
  id: id(),
  name: shortText(),
  slug: text().notNull().unique(),
  description: text(),
  supports_web_url: boolean().notNull().default(false),
  supports_multicontainer: boolean().notNull().default(false),
  supports_gateway_mode: boolean().notNull().default(false),
  needs__os_version_range: text(),
  requires_payment: boolean().notNull().default(false),
  is_legacy: boolean().notNull().default(false),
  maximum_device_count: integer(),
});

/** Fleets, apps and blocks (`is_of__class`). Every application is an actor (it owns provisioning keys). */
export const application = pgTable(
  "application",
  {
    id: id(),
    created_at: createdAt(),
    actor: integer()
      .notNull()
      .unique()
      .references(() => actor.id),
    uuid: text().notNull().unique(),
    is_of__class: text().notNull().default("fleet"),
    organization: ownedBy(() => organization.id),
    app_name: shortText(),
    slug: shortText(),
    is_for__device_type: requires(() => device_type.id),
    application_type: requires(() => application_type.id),
    should_track_latest_release: boolean().notNull().default(true),
    should_be_running__release: optional((): AnyPgColumn => release.id),
    is_host: boolean().notNull().default(false),
    is_archived: boolean().notNull().default(false),
    is_public: boolean().notNull().default(false),
    is_discoverable: boolean().notNull().default(false),
    is_accessible_by_support_until__date: date(),
    is_stored_at__repository_url: text(),
  },
  (t) => [
    uniqueIndex("application_slug_lower_key").on(lower(t.slug)),
    uniqueIndex("application_org_name_lower_key").on(t.organization, lower(t.app_name)),
    check("application_class_check", sql`${t.is_of__class} IN ('fleet', 'block', 'app')`),
  ],
);

/** observer, safe-operator, operator, safe-developer, developer (spec 2 §6). */
export const application_membership_role = pgTable("application_membership_role", {
  id: id(),
  created_at: createdAt(),
  modified_at: modifiedAt(),
  name: text().notNull().unique(),
  description: text().notNull().default(""),
});

/** `user__is_member_of__application`. */
export const user_application_membership = pgTable(
  "user_application_membership",
  {
    id: id(),
    created_at: createdAt(),
    user: ownedBy(() => user.id),
    is_member_of__application: ownedBy(() => application.id),
    application_membership_role: requires(() => application_membership_role.id),
  },
  (t) => [uniqueIndex("user_application_membership_key").on(t.user, t.is_member_of__application)],
);

export const team_application_access = pgTable(
  "team_application_access",
  {
    id: id(),
    created_at: createdAt(),
    team: ownedBy(() => team.id),
    grants_access_to__application: ownedBy(() => application.id),
    application_membership_role: requires(() => application_membership_role.id),
  },
  (t) => [uniqueIndex("team_application_access_key").on(t.team, t.grants_access_to__application)],
);

/** `invitee__is_invited_to__application`; the token of the invitation link is kept as a hash. */
export const application_invite = pgTable(
  "application_invite",
  {
    id: id(),
    created_at: createdAt(),
    invitee: ownedBy(() => invitee.id),
    is_invited_to__application: ownedBy(() => application.id),
    application_membership_role: requires(() => application_membership_role.id),
    message: text(),
    is_created_by__user: integer().references(() => user.id, { onDelete: "set null" }),
    /** Written by the invitation hooks right after the insert; the default only fills the gap. */
    token_hash: text().notNull().unique().default(sql`gen_random_uuid()::text`),
    expires_at: date().notNull().default(sql`now() + interval '7 days'`),
  },
  (t) => [uniqueIndex("application_invite_invitee_app_key").on(t.invitee, t.is_invited_to__application)],
);

/** A name/value pair owned by a parent row, unique per parent: tags and variables. */
export function pairs<P extends string, K extends string>(
  table: string,
  parentColumn: P,
  parent: () => AnyPgColumn,
  key: K,
) {
  const parentField = { [parentColumn]: ownedBy(parent) } as Record<P, ReturnType<typeof ownedBy>>;
  const keyField = { [key]: shortText() } as Record<K, ReturnType<typeof shortText>>;
  return pgTable(
    table,
    { id: id(), created_at: createdAt(), ...parentField, ...keyField, value: text().notNull().default("") },
    (t) => [uniqueIndex(`${table}_key`).on(t[parentColumn], t[key])],
  );
}

export const application_tag = pairs("application_tag", "application", () => application.id, "tag_key");
export const application_environment_variable = pairs(
  "application_environment_variable",
  "application",
  () => application.id,
  "name",
);
/** Variables a fleet's builds get as build arguments (balena's `build_environment_variable`). */
export const build_environment_variable = pairs(
  "build_environment_variable",
  "application",
  () => application.id,
  "name",
);
export const application_config_variable = pairs(
  "application_config_variable",
  "application",
  () => application.id,
  "name",
);

/** `application__has__service_name`: a service of a fleet's releases. */
export const service = pgTable(
  "service",
  {
    id: id(),
    created_at: createdAt(),
    application: ownedBy(() => application.id),
    service_name: shortText(),
  },
  (t) => [uniqueIndex("service_app_name_key").on(t.application, t.service_name)],
);

export const service_label = pairs("service_label", "service", () => service.id, "label_name");
export const service_environment_variable = pairs("service_environment_variable", "service", () => service.id, "name");
