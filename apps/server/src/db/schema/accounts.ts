import { sql } from "drizzle-orm";
import { boolean, check, index, integer, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, date, id, ownedBy } from "./columns.ts";

/** Users, fleets and devices are actors; api keys and permissions hang off the actor. */
export const actor = pgTable("actor", {
  id: id(),
  created_at: createdAt(),
});

export const user = pgTable(
  "user",
  {
    id: id(),
    created_at: createdAt(),
    actor: integer()
      .notNull()
      .unique()
      .references(() => actor.id, { onDelete: "cascade" }),
    username: text().notNull(),
    email: text(),
    password_hash: text(),
    first_name: text(),
    last_name: text(),
    company: text(),
    account_type: text(),
    has_disabled_newsletter: boolean().notNull().default(false),
    must_be_verified: boolean().notNull().default(false),
    is_verified: boolean().notNull().default(false),
    /** Two-factor: the enabled TOTP secret (base32), the one being set up, and the last accepted time step (replays refused). */
    totp_secret: text(),
    totp_pending_secret: text(),
    totp_last_step: integer(),
  },
  (t) => [
    uniqueIndex("user_username_lower_key").on(sql`lower(${t.username})`),
    uniqueIndex("user_email_lower_key").on(sql`lower(${t.email})`),
    check("user_account_type_check", sql`${t.account_type} IN ('personal', 'professional')`),
  ],
);

/** Global roles such as `balena_admin` (platform administrator) and `support_agent`. */
export const role = pgTable("role", {
  id: id(),
  created_at: createdAt(),
  name: text().notNull().unique(),
});

export const user__has__role = pgTable(
  "user__has__role",
  {
    id: id(),
    created_at: createdAt(),
    user: integer()
      .notNull()
      .references(() => user.id, { onDelete: "cascade" }),
    role: integer()
      .notNull()
      .references(() => role.id, { onDelete: "cascade" }),
  },
  (t) => [uniqueIndex("user__has__role_user_role_key").on(t.user, t.role)],
);

/** Session tokens are JWTs that name a session row, so logout and password changes revoke them. */
export const user_session = pgTable("user_session", {
  id: text().primaryKey(),
  created_at: createdAt(),
  user: integer()
    .notNull()
    .references(() => user.id, { onDelete: "cascade" }),
  expires_at: timestamp({ withTimezone: true }).notNull(),
  revoked_at: timestamp({ withTimezone: true }),
});

/**
 * Single-use links mailed to a user: email verification (for the address in `email`) and
 * password reset. Only the SHA-256 of the token is kept; `used_at` marks a spent one.
 */
export const user_token = pgTable(
  "user_token",
  {
    id: id(),
    created_at: createdAt(),
    user: integer()
      .notNull()
      .references(() => user.id, { onDelete: "cascade" }),
    kind: text().notNull(),
    token_hash: text().notNull().unique(),
    email: text().notNull(),
    expires_at: timestamp({ withTimezone: true }).notNull(),
    used_at: timestamp({ withTimezone: true }),
  },
  (t) => [
    index("user_token_user_kind_idx").on(t.user, t.kind),
    check("user_token_kind_check", sql`${t.kind} IN ('email_verification', 'password_reset')`),
  ],
);

/** Mail that could not be sent because no SMTP_URL is set: kept here (and its link logged). */
export const outbox_email = pgTable("outbox_email", {
  id: id(),
  created_at: createdAt(),
  recipient: text().notNull(),
  subject: text().notNull(),
  text: text().notNull(),
  html: text().notNull(),
});

/**
 * API keys: personal keys (role `user`), fleet provisioning keys (`provisioning-api-key`) and
 * device keys (`device-api-key`). Only a hash of the key is kept; the key is shown once.
 */
export const api_key = pgTable(
  "api_key",
  {
    id: id(),
    created_at: createdAt(),
    key_hash: text().notNull().unique(),
    is_of__actor: ownedBy(() => actor.id),
    role: text().notNull(),
    name: text(),
    description: text(),
    expiry_date: date(),
  },
  (t) => [check("api_key_role_check", sql`${t.role} IN ('user', 'provisioning-api-key', 'device-api-key')`)],
);

/** SSH public keys of a user (`user__has__public_key`, alias `user_public_key`). */
export const user_public_key = pgTable("user_public_key", {
  id: id(),
  created_at: createdAt(),
  user: ownedBy(() => user.id),
  title: text().notNull(),
  public_key: text().notNull(),
});
