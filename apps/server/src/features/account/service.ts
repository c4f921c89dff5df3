import crypto from "node:crypto";
import { handleFromName } from "@flotilla/domain";
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import type { Orm, Tx } from "../../db/index.ts";
import {
  organization,
  organization_membership,
  organization_membership_role,
  user,
  user_token,
} from "../../db/schema/index.ts";
import { FlotillaError } from "../../errors.ts";
import { passwordResetMail, verificationMail } from "../mail/templates.ts";
import { hashPassword } from "../users/passwords.ts";
import { createUser, findUserByLogin, type User } from "../users/service.ts";

/** A verification link is valid for 24 hours; a password reset link for 1 hour, once. */
export const EMAIL_VERIFICATION_TTL_MS = 24 * 60 * 60 * 1000;
export const PASSWORD_RESET_TTL_MS = 60 * 60 * 1000;
/** At most one verification mail per user in this time; later requests succeed without sending. */
export const VERIFICATION_MAIL_DEBOUNCE_MS = 60 * 1000;

type TokenKind = "email_verification" | "password_reset";

const sha256 = (value: string) => crypto.createHash("sha256").update(value).digest("hex");

/** A random single-use link token; only its hash is stored. */
async function issueToken(orm: Orm, userId: number, kind: TokenKind, email: string, ttlMs: number) {
  const token = crypto.randomBytes(24).toString("base64url");
  await orm.insert(user_token).values({
    user: userId,
    kind,
    token_hash: sha256(token),
    email,
    expires_at: new Date(Date.now() + ttlMs),
  });
  return token;
}

/** The unspent token row, or why there is none. */
async function findToken(orm: Orm, kind: TokenKind, token: string) {
  const [row] = await orm
    .select()
    .from(user_token)
    .where(and(eq(user_token.token_hash, sha256(token)), eq(user_token.kind, kind)))
    .limit(1);
  if (!row || row.used_at) return { status: "invalid" as const };
  if (row.expires_at.getTime() <= Date.now()) return { status: "expired" as const, row };
  return { status: "valid" as const, row };
}

const spendToken = (orm: Orm, id: number) =>
  orm.update(user_token).set({ used_at: new Date() }).where(eq(user_token.id, id));

// ---------------------------------------------------------------------------------------------
// Registration

/** An organization handle from a name, with a number appended while it is taken. */
async function freeHandle(orm: Orm, name: string) {
  const base = handleFromName(name);
  const rows = await orm
    .select({ handle: sql<string>`lower(${organization.handle})` })
    .from(organization)
    .where(sql`lower(${organization.handle}) LIKE ${`${base.replace(/[_%\\]/g, "\\$&")}%`}`);
  const taken = new Set(rows.map((r) => r.handle));
  let handle = base;
  for (let n = 1; taken.has(handle); n++) handle = `${base}${n}`;
  return handle;
}

/** The personal organization every account gets: named after the (unique) username, the user its administrator. */
export async function createPersonalOrganization(orm: Orm, owner: User) {
  const [org] = await orm
    .insert(organization)
    .values({ name: owner.username, handle: await freeHandle(orm, owner.username) })
    .returning();
  const [admin] = await orm
    .select({ id: organization_membership_role.id })
    .from(organization_membership_role)
    .where(eq(organization_membership_role.name, "administrator"));
  if (!org || !admin) throw new Error("personal organization could not be created");
  await orm.insert(organization_membership).values({
    user: owner.id,
    is_member_of__organization: org.id,
    organization_membership_role: admin.id,
  });
  return org;
}

/** A new account with its personal organization, in one transaction. */
export async function registerAccount(
  ctx: Pick<AppContext, "db" | "config">,
  input: { email: string; password: string; hasDisabledNewsletter: boolean },
): Promise<User> {
  // Hashed before the transaction: argon2 takes tens of milliseconds and holds no connection.
  const passwordHash = await hashPassword(input.password);
  return ctx.db.transaction(async (tx: Tx) => {
    if (await findUserByLogin(tx.orm, input.email)) {
      throw new FlotillaError("conflict", "This email is already registered.");
    }
    const created = await createUser(tx.orm, {
      email: input.email,
      password: input.password,
      passwordHash,
      mustBeVerified: ctx.config.emailVerification === "required",
      isVerified: false,
      hasDisabledNewsletter: input.hasDisabledNewsletter,
    });
    await createPersonalOrganization(tx.orm, created);
    return created;
  });
}

// ---------------------------------------------------------------------------------------------
// Email verification

/**
 * Mails a verification link for the user's current address, unless one went out less than a
 * minute ago (then nothing is sent and nothing fails). Returns whether a mail was sent.
 */
export async function sendVerificationEmail(
  ctx: Pick<AppContext, "db" | "config" | "mail">,
  target: User,
  { debounce = true } = {},
): Promise<boolean> {
  if (!target.email || target.is_verified) return false;
  if (debounce) {
    const [latest] = await ctx.db.orm
      .select({ created_at: user_token.created_at })
      .from(user_token)
      .where(and(eq(user_token.user, target.id), eq(user_token.kind, "email_verification")))
      .orderBy(desc(user_token.created_at))
      .limit(1);
    if (latest && Date.now() - latest.created_at.getTime() < VERIFICATION_MAIL_DEBOUNCE_MS) return false;
  }
  const token = await issueToken(ctx.db.orm, target.id, "email_verification", target.email, EMAIL_VERIFICATION_TTL_MS);
  return ctx.mail.send(
    target.email,
    verificationMail(ctx.config.publicUrl, token, target.email, EMAIL_VERIFICATION_TTL_MS / 3_600_000),
  );
}

/** Verifies the address the link was sent to; the user must still have that address. */
export async function verifyEmail(orm: Orm, token: string, email: string): Promise<User> {
  const found = await findToken(orm, "email_verification", token);
  const row = found.status === "valid" ? found.row : undefined;
  if (!row || row.email.toLowerCase() !== email.trim().toLowerCase()) {
    throw new FlotillaError("email_verification_invalid");
  }
  const [verified] = await orm
    .update(user)
    .set({ is_verified: true })
    .where(and(eq(user.id, row.user), sql`lower(${user.email}) = ${row.email.toLowerCase()}`))
    .returning();
  if (!verified) throw new FlotillaError("email_verification_invalid");
  await spendToken(orm, row.id);
  return verified;
}

// ---------------------------------------------------------------------------------------------
// Password reset

/** Mails a reset link when an account has this email; says nothing either way. */
export async function requestPasswordReset(ctx: Pick<AppContext, "db" | "config" | "mail">, email: string) {
  const [found] = await ctx.db.orm
    .select()
    .from(user)
    .where(sql`lower(${user.email}) = ${email.trim().toLowerCase()}`)
    .limit(1);
  if (!found?.email) return;
  // A new link replaces the earlier ones.
  await ctx.db.orm
    .update(user_token)
    .set({ used_at: new Date() })
    .where(and(eq(user_token.user, found.id), eq(user_token.kind, "password_reset"), isNull(user_token.used_at)));
  const code = await issueToken(ctx.db.orm, found.id, "password_reset", found.email, PASSWORD_RESET_TTL_MS);
  await ctx.mail.send(found.email, passwordResetMail(ctx.config.publicUrl, code, PASSWORD_RESET_TTL_MS / 60_000));
}

const twoFactorError = (code: "reset_code_expired" | "reset_code_invalid", errorCode: 3 | 4) =>
  new FlotillaError(code, undefined, { extra: { errorCode } });

/** The user a reset code belongs to (errors 3 and 4 of spec 1 §8 otherwise). */
export async function userOfResetCode(orm: Orm, code: string) {
  const found = await findToken(orm, "password_reset", code);
  if (found.status === "invalid") throw twoFactorError("reset_code_invalid", 4);
  if (found.status === "expired") throw twoFactorError("reset_code_expired", 3);
  const [owner] = await orm.select().from(user).where(eq(user.id, found.row.user));
  if (!owner) throw twoFactorError("reset_code_invalid", 4);
  return { owner, tokenRow: found.row };
}

/**
 * Spends the code and sets the password; a link that reached the mailbox also verifies that
 * address. Answers the address the mail proved the owner controls (their current one), if any.
 */
export async function completePasswordReset(
  orm: Orm,
  tokenRow: typeof user_token.$inferSelect,
  owner: User,
  passwordHash: string,
): Promise<string | undefined> {
  await spendToken(orm, tokenRow.id);
  const sameEmail = owner.email?.toLowerCase() === tokenRow.email.toLowerCase();
  await orm
    .update(user)
    .set({ password_hash: passwordHash, ...(sameEmail ? { is_verified: true } : {}) })
    .where(eq(user.id, owner.id));
  return sameEmail ? (owner.email ?? undefined) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Profile and email

export const PROFILE_FIELDS = {
  first_name: user.first_name,
  last_name: user.last_name,
  company: user.company,
  account_type: user.account_type,
} as const;

export async function updateProfile(
  orm: Orm,
  userId: number,
  profile: { first_name: string; last_name: string; company: string; account_type: string },
) {
  const [updated] = await orm.update(user).set(profile).where(eq(user.id, userId)).returning(PROFILE_FIELDS);
  if (!updated) throw new FlotillaError("not_logged_in");
  return updated;
}

/** Changes the email; it must be verified again (a mail goes to the new address). */
export async function changeEmail(ctx: Pick<AppContext, "db" | "config" | "mail">, current: User, email: string) {
  const next = email.trim();
  if (current.email?.toLowerCase() === next.toLowerCase()) {
    return { email: current.email, is_verified: current.is_verified, must_be_verified: current.must_be_verified };
  }
  const [taken] = await ctx.db.orm
    .select({ id: user.id })
    .from(user)
    .where(sql`lower(${user.email}) = ${next.toLowerCase()} OR lower(${user.username}) = ${next.toLowerCase()}`)
    .limit(1);
  if (taken) throw new FlotillaError("conflict", "This email is already registered.");
  const [updated] = await ctx.db.orm
    .update(user)
    .set({ email: next, is_verified: false, must_be_verified: ctx.config.emailVerification === "required" })
    .where(eq(user.id, current.id))
    .returning();
  if (!updated) throw new FlotillaError("not_logged_in");
  await sendVerificationEmail(ctx, updated, { debounce: false });
  return { email: updated.email, is_verified: updated.is_verified, must_be_verified: updated.must_be_verified };
}

/** The resend button and balena-sdk `auth.requestVerificationEmail`: debounced, never an error. */
export async function resendVerificationEmail(ctx: Pick<AppContext, "db" | "config" | "mail">, userId: number) {
  const [found] = await ctx.db.orm.select().from(user).where(eq(user.id, userId));
  if (found) await sendVerificationEmail(ctx, found);
}
