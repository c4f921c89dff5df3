import { and, eq, sql } from "drizzle-orm";
import type { Orm } from "../../db/index.ts";
import { actor, role, user, user__has__role } from "../../db/schema/index.ts";
import { hashPassword } from "./passwords.ts";

export type User = typeof user.$inferSelect;

/** Finds a user by email or username, case-insensitively (the login form takes either). */
export async function findUserByLogin(orm: Orm, login: string): Promise<User | undefined> {
  const needle = login.trim().toLowerCase();
  const [found] = await orm
    .select()
    .from(user)
    .where(sql`lower(${user.email}) = ${needle} OR lower(${user.username}) = ${needle}`)
    .limit(1);
  return found;
}

export async function findUserById(orm: Orm, id: number): Promise<User | undefined> {
  const [found] = await orm.select().from(user).where(eq(user.id, id)).limit(1);
  return found;
}

/** A username made from the email's local part, with a number appended while it is taken. */
export async function freeUsername(orm: Orm, email: string): Promise<string> {
  const base =
    (email.split("@")[0] ?? "")
      .toLowerCase()
      .replace(/[^a-z0-9_]/g, "_")
      .replace(/^_+|_+$/g, "") || "user";
  const taken = await orm
    .select({ username: user.username })
    .from(user)
    .where(sql`lower(${user.username}) LIKE ${`${base}%`}`);
  const names = new Set(taken.map((t) => t.username.toLowerCase()));
  if (!names.has(base)) return base;
  for (let n = 1; ; n++) if (!names.has(`${base}${n}`)) return `${base}${n}`;
}

export async function createUser(
  orm: Orm,
  input: {
    email: string;
    /** null: an account without a password (it signs in through an identity provider). */
    password: string | null;
    /** The password's argon2 hash when already computed (outside a transaction). */
    passwordHash?: string;
    username?: string;
    isVerified?: boolean;
    mustBeVerified?: boolean;
    hasDisabledNewsletter?: boolean;
  },
): Promise<User> {
  const [newActor] = await orm.insert(actor).values({}).returning({ id: actor.id });
  if (!newActor) throw new Error("actor insert returned nothing");
  const [created] = await orm
    .insert(user)
    .values({
      actor: newActor.id,
      email: input.email.trim(),
      username: input.username ?? (await freeUsername(orm, input.email)),
      password_hash: input.passwordHash ?? (input.password === null ? null : await hashPassword(input.password)),
      is_verified: input.isVerified ?? false,
      must_be_verified: input.mustBeVerified ?? false,
      has_disabled_newsletter: input.hasDisabledNewsletter ?? false,
    })
    .returning();
  if (!created) throw new Error("user insert returned nothing");
  return created;
}

export async function setPassword(orm: Orm, userId: number, password: string) {
  await orm
    .update(user)
    .set({ password_hash: await hashPassword(password) })
    .where(eq(user.id, userId));
}

export async function setPasswordHash(orm: Orm, userId: number, passwordHash: string) {
  await orm.update(user).set({ password_hash: passwordHash }).where(eq(user.id, userId));
}

/** Gives a user a global role (e.g. `balena_admin`), creating the role row on first use. */
export async function grantGlobalRole(orm: Orm, userId: number, roleName: string) {
  await orm.insert(role).values({ name: roleName }).onConflictDoNothing();
  const [found] = await orm.select({ id: role.id }).from(role).where(eq(role.name, roleName));
  if (!found) throw new Error(`role ${roleName} missing`);
  await orm.insert(user__has__role).values({ user: userId, role: found.id }).onConflictDoNothing();
}

export async function globalRolesOf(orm: Orm, userId: number): Promise<string[]> {
  const rows = await orm
    .select({ name: role.name })
    .from(user__has__role)
    .innerJoin(role, eq(role.id, user__has__role.role))
    .where(and(eq(user__has__role.user, userId)));
  return rows.map((r) => r.name);
}
