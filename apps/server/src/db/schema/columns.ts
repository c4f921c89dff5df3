import { sql } from "drizzle-orm";
import { type AnyPgColumn, integer, text, timestamp } from "drizzle-orm/pg-core";

/**
 * Column helpers shared by the schema modules. Tables carry the balena v7 model's names
 * (balena-sdk `types/v7.d.ts`) so the data API can expose them as they are. Ids are 4-byte
 * integers: the SDK and the dashboard treat ids as numbers.
 */
export const id = () => integer().primaryKey().generatedByDefaultAsIdentity();
export const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();
export const modifiedAt = () => timestamp("modified_at", { withTimezone: true }).notNull().defaultNow();
export const date = () => timestamp({ withTimezone: true });

/** A required reference that disappears with its parent (tags, variables, memberships). */
export const ownedBy = (target: () => AnyPgColumn) => integer().notNull().references(target, { onDelete: "cascade" });
/** A required reference that must be removed first (a device type cannot go while devices use it). */
export const requires = (target: () => AnyPgColumn) => integer().notNull().references(target);
/** An optional reference cleared when its target goes (a pinned release that is deleted). */
export const optional = (target: () => AnyPgColumn) => integer().references(target, { onDelete: "set null" });

export const shortText = () => text().notNull();
export const lower = (column: AnyPgColumn) => sql`lower(${column})`;
