import { sql } from "drizzle-orm";
import { boolean, check, integer, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
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
