import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { user } from "./accounts.ts";
import { createdAt, date, id, lower, ownedBy, requires, shortText } from "./columns.ts";

export const organization = pgTable(
  "organization",
  {
    id: id(),
    created_at: createdAt(),
    name: shortText(),
    handle: shortText(),
    company_name: text(),
    billing_account_code: text(),
    has_past_due_invoice_since__date: date(),
    is_frozen: boolean().notNull().default(false),
    industry: text(),
    website: text(),
    /** A WebResource: {href, filename, content_type, size}. */
    logo_image: jsonb(),
    is_using__billing_version: text().notNull().default("v2"),
    is_enforcing_saml_login: boolean().notNull().default(false),
  },
  (t) => [uniqueIndex("organization_handle_lower_key").on(lower(t.handle))],
);

/** `administrator` and `member` (spec 3). */
export const organization_membership_role = pgTable("organization_membership_role", {
  id: id(),
  name: text().notNull().unique(),
});

/** `user__is_member_of__organization`. */
export const organization_membership = pgTable(
  "organization_membership",
  {
    id: id(),
    created_at: createdAt(),
    user: ownedBy(() => user.id),
    is_member_of__organization: ownedBy(() => organization.id),
    organization_membership_role: requires(() => organization_membership_role.id),
  },
  (t) => [uniqueIndex("organization_membership_user_org_key").on(t.user, t.is_member_of__organization)],
);

export const organization_membership_tag = pgTable(
  "organization_membership_tag",
  {
    id: id(),
    created_at: createdAt(),
    organization_membership: ownedBy(() => organization_membership.id),
    tag_key: shortText(),
    value: text().notNull().default(""),
  },
  (t) => [uniqueIndex("organization_membership_tag_key").on(t.organization_membership, t.tag_key)],
);

/** Someone invited by email, before they have an account. */
export const invitee = pgTable(
  "invitee",
  {
    id: id(),
    created_at: createdAt(),
    email: text().notNull(),
  },
  (t) => [uniqueIndex("invitee_email_lower_key").on(lower(t.email))],
);

/** `invitee__is_invited_to__organization`; the token of the invitation link is kept as a hash. */
export const organization_invite = pgTable(
  "organization_invite",
  {
    id: id(),
    created_at: createdAt(),
    invitee: ownedBy(() => invitee.id),
    is_invited_to__organization: ownedBy(() => organization.id),
    organization_membership_role: requires(() => organization_membership_role.id),
    message: text(),
    is_created_by__user: integer().references(() => user.id, { onDelete: "set null" }),
    /** Written by the invitation hooks right after the insert; the default only fills the gap. */
    token_hash: text().notNull().unique().default(sql`gen_random_uuid()::text`),
    expires_at: date().notNull().default(sql`now() + interval '7 days'`),
  },
  (t) => [uniqueIndex("organization_invite_invitee_org_key").on(t.invitee, t.is_invited_to__organization)],
);

export const team = pgTable(
  "team",
  {
    id: id(),
    created_at: createdAt(),
    belongs_to__organization: ownedBy(() => organization.id),
    name: shortText(),
    description: text(),
  },
  (t) => [uniqueIndex("team_org_name_lower_key").on(t.belongs_to__organization, lower(t.name))],
);

/** `user__is_member_of__team`. */
export const team_membership = pgTable(
  "team_membership",
  {
    id: id(),
    created_at: createdAt(),
    user: ownedBy(() => user.id),
    is_member_of__team: ownedBy(() => team.id),
  },
  (t) => [uniqueIndex("team_membership_user_team_key").on(t.user, t.is_member_of__team)],
);

/**
 * The audit log (docs/audit-and-webhooks.md): an append-only record of what people and keys did.
 * Kept when the actor, the target or the organization goes (ids stay as they were, no foreign
 * keys), pruned only by age (FLOTILLA_AUDIT_RETENTION_DAYS). No API updates or deletes a row.
 * `target_user` is the user a "log in as user" acted as (older rows); `details` never holds
 * secret values (variable names, never values).
 */
export const audit_event = pgTable(
  "audit_event",
  {
    id: id(),
    created_at: createdAt(),
    actor_user: integer(),
    /** The API key the actor used, when it was one (not a session). */
    actor_api_key: integer(),
    organization: integer(),
    action: shortText(),
    target_user: integer(),
    target_type: text(),
    target_id: text(),
    client_address: text(),
    details: jsonb(),
  },
  (t) => [
    index("audit_event_organization_time_idx").on(t.organization, t.created_at),
    index("audit_event_time_idx").on(t.created_at),
    // Each user's last sign-in (Admin → Users, migration 0031).
    index("audit_event_sign_in_idx").on(t.target_user, t.created_at).where(sql`${t.action} = 'sign_in.succeeded'`),
  ],
);
