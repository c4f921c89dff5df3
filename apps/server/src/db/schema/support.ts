import { sql } from "drizzle-orm";
import { boolean, check, index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { user } from "./accounts.ts";
import { createdAt, id, ownedBy, shortText } from "./columns.ts";
import { organization } from "./organizations.ts";

// Support tickets (spec 3 §3 "Support ticket", §4; docs/support.md): written by features/support
// only, never exposed through the data API. Attachment files live under
// `$FLOTILLA_DATA_DIR/storage/support/{id}`.

/** A ticket an organization member opened; `external_id` is Zendesk's when tickets go there. */
export const support_ticket = pgTable(
  "support_ticket",
  {
    id: id(),
    organization: ownedBy(() => organization.id),
    /** The member who opened it; null once that account is deleted (the ticket stays with the organization). */
    requester: integer().references(() => user.id, { onDelete: "set null" }),
    /** The requester's address when the ticket was opened: replies are mailed there. */
    requester_email: shortText(),
    subject: shortText(),
    description: shortText(),
    status: text().notNull().default("open"),
    priority: text().notNull().default("normal"),
    /** [{id, value}] of the configured custom ticket fields. */
    custom_fields: jsonb().notNull().default([]),
    /** Addresses copied on the conversation (lowercase). */
    email_ccs: text().array().notNull().default(sql`'{}'::text[]`),
    external_id: text(),
    /**
     * The ticket form as the requester filled it: every field of the form at the time (system and
     * custom, required or not) with its title, type and value (null when left blank), for staff.
     */
    form: jsonb(),
    /** When platform staff were mailed about the new ticket (claimed once: never mailed twice). */
    staff_notified_at: timestamp({ withTimezone: true }),
    created_at: createdAt(),
    updated_at: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("support_ticket_organization_idx").on(t.organization, t.updated_at),
    index("support_ticket_requester_idx").on(t.requester),
    index("support_ticket_status_idx").on(t.status, t.updated_at),
    check("support_ticket_status_check", sql`${t.status} IN ('open', 'pending', 'solved')`),
    check("support_ticket_priority_check", sql`${t.priority} IN ('low', 'normal', 'high', 'urgent')`),
  ],
);

/** A reply on a ticket: by the requester's side, or by platform staff (`is_staff`). */
export const support_ticket_comment = pgTable(
  "support_ticket_comment",
  {
    id: id(),
    ticket: ownedBy(() => support_ticket.id),
    author: integer().references(() => user.id, { onDelete: "set null" }),
    body: shortText(),
    is_staff: boolean().notNull().default(false),
    /** When platform staff were mailed about this reply of the requester's side (claimed once). */
    staff_notified_at: timestamp({ withTimezone: true }),
    created_at: createdAt(),
  },
  (t) => [index("support_ticket_comment_ticket_idx").on(t.ticket, t.created_at)],
);

/**
 * An uploaded file. It is unclaimed (`ticket` null) from its upload until a ticket or a reply
 * names its `token`; only its uploader can claim it, within the organization it was uploaded for.
 */
export const support_attachment = pgTable(
  "support_attachment",
  {
    id: id(),
    organization: ownedBy(() => organization.id),
    uploaded_by: integer().references(() => user.id, { onDelete: "set null" }),
    token: text().notNull().unique(),
    ticket: integer().references(() => support_ticket.id, { onDelete: "cascade" }),
    comment: integer().references(() => support_ticket_comment.id, { onDelete: "cascade" }),
    file_name: shortText(),
    content_type: shortText(),
    size: integer().notNull(),
    /** Relative to the data directory: `storage/support/{id}`. */
    stored_path: shortText(),
    /** Zendesk's upload token, when files go there. */
    external_token: text(),
    created_at: createdAt(),
  },
  (t) => [
    index("support_attachment_ticket_idx").on(t.ticket),
    index("support_attachment_unclaimed_idx").on(t.created_at).where(sql`${t.ticket} IS NULL`),
  ],
);
