import { sql } from "drizzle-orm";
import { bigint, boolean, index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { createdAt, date, id, ownedBy } from "./columns.ts";
import { organization } from "./organizations.ts";

/**
 * Webhooks (docs/audit-and-webhooks.md): an organization's subscriptions to events, optionally
 * narrowed to some fleets. `secret` signs payloads (HMAC-SHA256), so the server must read it back:
 * it is stored sealed (lib/sealed.ts) and shown to the administrator once, at creation.
 */
export const webhook = pgTable("webhook", {
  id: id(),
  created_at: createdAt(),
  organization: ownedBy(() => organization.id),
  url: text().notNull(),
  description: text().notNull().default(""),
  secret: text().notNull(),
  events: text().array().notNull(),
  /** Fleet ids; null means every fleet of the organization. */
  fleets: integer().array(),
  is_enabled: boolean().notNull().default(true),
  /** Failed attempts since the last success: at the limit the webhook is disabled. */
  consecutive_failures: integer().notNull().default(0),
  disabled_reason: text(),
});

/**
 * The delivery queue: one row per event and webhook, written in the event's transaction. A worker
 * claims due rows with FOR UPDATE SKIP LOCKED and leases them (`next_attempt_at` moves ahead), so
 * several instances deliver each at least once and a crashed one's lease simply runs out.
 */
export const webhook_delivery = pgTable(
  "webhook_delivery",
  {
    id: bigint({ mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    created_at: createdAt(),
    webhook: ownedBy(() => webhook.id),
    event: text().notNull(),
    payload: jsonb().notNull(),
    /** pending, delivered, failed (gave up). */
    status: text().notNull().default("pending"),
    attempts: integer().notNull().default(0),
    next_attempt_at: timestamp({ withTimezone: true }).notNull().defaultNow(),
    delivered_at: date(),
  },
  (t) => [
    index("webhook_delivery_due_idx").on(t.next_attempt_at).where(sql`status = 'pending'`),
    index("webhook_delivery_webhook_idx").on(t.webhook, t.created_at),
  ],
);

/** The delivery log: one row per attempt. */
export const webhook_attempt = pgTable(
  "webhook_attempt",
  {
    id: bigint({ mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    created_at: createdAt(),
    delivery: bigint({ mode: "number" })
      .notNull()
      .references(() => webhook_delivery.id, { onDelete: "cascade" }),
    attempt: integer().notNull(),
    /** The HTTP status; null when no answer came (refused, timed out). */
    status_code: integer(),
    error: text(),
    duration_ms: integer().notNull(),
  },
  (t) => [index("webhook_attempt_delivery_idx").on(t.delivery)],
);
