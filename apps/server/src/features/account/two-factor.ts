import crypto from "node:crypto";
import { RECOVERY_CODE_COUNT, TWO_FACTOR_ERROR_CODES } from "@flotilla/domain";
import { and, eq, isNull, sql } from "drizzle-orm";
import { verify } from "otplib";
import type { Database, Orm } from "../../db/index.ts";
import { recovery_two_factor, user } from "../../db/schema/index.ts";
import { FlotillaError } from "../../errors.ts";
import { createThrottle, type Throttle } from "../../lib/throttle.ts";
import type { User } from "../users/service.ts";

/** Wrong two-factor codes (TOTP or recovery): 5 per user in 15 minutes, then 429 until the window passes. */
export const TOTP_MAX_FAILURES = 5;
export const TOTP_FAILURE_WINDOW_MS = 15 * 60 * 1000;

export function createTotpGuard(): Throttle {
  return createThrottle({
    max: TOTP_MAX_FAILURES,
    windowMs: TOTP_FAILURE_WINDOW_MS,
    message: "Too many wrong two-factor codes. Try again later.",
  });
}

export const twoFactorError = (code: "two_factor_code_required" | "two_factor_code_invalid") =>
  new FlotillaError(code, undefined, { extra: { errorCode: TWO_FACTOR_ERROR_CODES[code] } });

/**
 * Checks a TOTP code (one period of clock drift either way) and records its time step, so the
 * same code is accepted once: a code of a step at or before the last accepted one is refused.
 */
export async function acceptTotp(orm: Orm, owner: User, secret: string, code: string): Promise<boolean> {
  let result: Awaited<ReturnType<typeof verify>>;
  try {
    result = await verify({
      secret,
      token: code,
      epochTolerance: 30,
      ...(owner.totp_last_step === null ? {} : { afterTimeStep: owner.totp_last_step }),
    });
  } catch {
    return false;
  }
  if (!result.valid || !("timeStep" in result)) return false;
  // Two requests with the same code at once: only one moves the step forward.
  const moved = await orm
    .update(user)
    .set({ totp_last_step: result.timeStep })
    .where(
      and(eq(user.id, owner.id), sql`(${user.totp_last_step} IS NULL OR ${user.totp_last_step} < ${result.timeStep})`),
    )
    .returning({ id: user.id });
  return moved.length === 1;
}

/** A password reset of a two-factor user needs a valid code: errors 1 and 2 of spec 1 §8. */
export async function checkTotpForReset(db: Database, guard: Throttle, owner: User, code: string | undefined) {
  const key = `user:${owner.id}`;
  guard.check(key);
  if (!code) throw twoFactorError("two_factor_code_required");
  if (!owner.totp_secret || !(await acceptTotp(db.orm, owner, owner.totp_secret, code))) {
    guard.hit(key);
    throw twoFactorError("two_factor_code_invalid");
  }
}

// ---- Recovery codes ------------------------------------------------------------------------

const ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";
const normalizeRecoveryCode = (code: string) => code.toLowerCase().replace(/[\s-]/g, "");
const hashRecoveryCode = (code: string) =>
  crypto.createHash("sha256").update(normalizeRecoveryCode(code)).digest("hex");

/** `xxxxx-xxxxx` from 31 letters and digits (about 50 bits each): shown once, stored hashed. */
function newRecoveryCode() {
  const chars = Array.from({ length: 10 }, () => ALPHABET[crypto.randomInt(ALPHABET.length)]).join("");
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/** Replaces the user's recovery codes with RECOVERY_CODE_COUNT new ones. */
export async function regenerateRecoveryCodes(db: Database, userId: number): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await db.transaction(async (tx) => {
    await tx.orm.delete(recovery_two_factor).where(eq(recovery_two_factor.belongs_to__user, userId));
    await tx.orm
      .insert(recovery_two_factor)
      .values(codes.map((code) => ({ belongs_to__user: userId, code_hash: hashRecoveryCode(code) })));
  });
  return codes;
}

/** Spends a recovery code; false when it is unknown or already used. */
export async function useRecoveryCode(orm: Orm, userId: number, code: string): Promise<boolean> {
  const used = await orm
    .update(recovery_two_factor)
    .set({ used_timestamp: new Date() })
    .where(
      and(
        eq(recovery_two_factor.belongs_to__user, userId),
        eq(recovery_two_factor.code_hash, hashRecoveryCode(code)),
        isNull(recovery_two_factor.used_timestamp),
      ),
    )
    .returning({ id: recovery_two_factor.id });
  return used.length === 1;
}

export async function recoveryCodesLeft(orm: Orm, userId: number): Promise<number> {
  const [row] = await orm
    .select({ n: sql<number>`count(*)::int` })
    .from(recovery_two_factor)
    .where(and(eq(recovery_two_factor.belongs_to__user, userId), isNull(recovery_two_factor.used_timestamp)));
  return Number(row?.n ?? 0);
}

export async function setTwoFactorSecrets(
  orm: Orm,
  userId: number,
  secrets: { totp_secret?: string | null; totp_pending_secret?: string | null; totp_last_step?: number | null },
) {
  await orm.update(user).set(secrets).where(eq(user.id, userId));
}

export async function removeTwoFactor(db: Database, userId: number) {
  await db.transaction(async (tx) => {
    await setTwoFactorSecrets(tx.orm, userId, { totp_secret: null, totp_pending_secret: null, totp_last_step: null });
    await tx.orm.delete(recovery_two_factor).where(eq(recovery_two_factor.belongs_to__user, userId));
  });
}
