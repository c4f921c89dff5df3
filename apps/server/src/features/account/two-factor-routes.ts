import { passwordConfirmationSchema, recoveryCodeSchema, twoFactorCodeSchema } from "@flotilla/domain";
import type { FastifyInstance, FastifyReply } from "fastify";
import { generateSecret } from "otplib";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireFreshAuth, requireSession } from "../../lib/authenticate.ts";
import type { Throttle } from "../../lib/throttle.ts";
import { parseInput } from "../../lib/validation.ts";
import { auditActorOf, recordAudit } from "../audit/record.ts";
import { findUserById, type User } from "../users/service.ts";
import {
  acceptTotp,
  recoveryCodesLeft,
  regenerateRecoveryCodes,
  removeTwoFactor,
  setTwoFactorSecrets,
  twoFactorError,
  useRecoveryCode,
} from "./two-factor.ts";

const text = (reply: FastifyReply) => reply.type("text/plain; charset=utf-8");

/** Two-factor events of the caller's own account (`method`: totp or recovery_code; never a code). */
const twoFactorEntry = (user: number, action: string, method?: string) => ({
  action,
  targetType: "user",
  targetId: user,
  targetUser: user,
  ...(method ? { details: { method } } : {}),
});
const codeBody = z.object({ code: twoFactorCodeSchema });
const recoveryBody = z.object({ code: recoveryCodeSchema });

/**
 * Two-factor authentication with TOTP (balena-sdk `auth.twoFactor`): setup key, verify (enables
 * during setup, passes the login challenge otherwise), disable; recovery codes.
 */
export function twoFactorRoutes(
  app: FastifyInstance,
  { db, tokens }: AppContext,
  helpers: { totp: Throttle; checkPassword(found: User, password: string, address: string): Promise<void> },
) {
  const { totp } = helpers;
  async function currentUser(userId: number): Promise<User> {
    const found = await findUserById(db.orm, userId);
    if (!found) throw new FlotillaError("not_logged_in");
    return found;
  }

  // The base32 secret as text; kept as pending until a code made from it is verified.
  app.get("/auth/totp/setup", async (request, reply) => {
    const session = requireSession(request);
    const found = await currentUser(session.id);
    if (found.totp_secret) throw new FlotillaError("conflict", "Two-factor authentication is already enabled.");
    const secret = generateSecret();
    await setTwoFactorSecrets(db.orm, found.id, { totp_pending_secret: secret });
    reply.header("cache-control", "no-store");
    return text(reply).send(secret);
  });

  app.post("/auth/totp/verify", async (request, reply) => {
    const session = requireSession(request);
    const key = `user:${session.id}`;
    totp.check(key);
    const { code } = parseInput(codeBody, request.body);
    const found = await currentUser(session.id);
    const enabling = session.twoFactorRequired !== true && !found.totp_secret;
    const secret = enabling ? found.totp_pending_secret : found.totp_secret;
    if (!secret) {
      throw new FlotillaError("bad_request", "Two-factor authentication is not being set up: get a setup key first.");
    }
    if (!(await acceptTotp(db.orm, found, secret, code))) {
      totp.hit(key);
      if (!enabling)
        await recordAudit(db, auditActorOf(request), twoFactorEntry(found.id, "two_factor.failed", "totp"));
      throw twoFactorError("two_factor_code_invalid");
    }
    totp.reset(key);
    if (enabling) await setTwoFactorSecrets(db.orm, found.id, { totp_secret: secret, totp_pending_secret: null });
    await recordAudit(
      db,
      auditActorOf(request),
      enabling ? twoFactorEntry(found.id, "two_factor.enabled") : twoFactorEntry(found.id, "two_factor.passed", "totp"),
    );
    const updated = await currentUser(found.id);
    return text(reply).send(await tokens.passTwoFactor(updated, session));
  });

  app.post("/auth/totp/disable", async (request, reply) => {
    const session = requireFreshAuth(request);
    const { password } = parseInput(passwordConfirmationSchema, request.body);
    const found = await currentUser(session.id);
    await helpers.checkPassword(found, password, request.ip);
    await removeTwoFactor(db, found.id);
    await recordAudit(db, auditActorOf(request), twoFactorEntry(found.id, "two_factor.disabled"));
    return text(reply).send(await tokens.withoutTwoFactor(await currentUser(found.id), session));
  });

  // For the preferences page: is it on, is a setup under way, how many recovery codes are left.
  app.get("/user/v1/two-factor", async (request) => {
    const session = requireSession(request);
    const found = await currentUser(session.id);
    return {
      enabled: found.totp_secret !== null,
      pending: found.totp_secret === null && found.totp_pending_secret !== null,
      recoveryCodesLeft: found.totp_secret ? await recoveryCodesLeft(db.orm, found.id) : 0,
    };
  });

  app.post("/auth/v1/2fa-recover/create", async (request) => {
    const session = requireFreshAuth(request);
    const found = await currentUser(session.id);
    if (!found.totp_secret) throw new FlotillaError("bad_request", "Two-factor authentication is not enabled.");
    const codes = await regenerateRecoveryCodes(db, found.id);
    await recordAudit(db, auditActorOf(request), twoFactorEntry(found.id, "two_factor.recovery_codes_created"));
    return codes;
  });

  app.post("/auth/v1/2fa-recover/verify", async (request, reply) => {
    const session = requireSession(request);
    const key = `user:${session.id}`;
    totp.check(key);
    const { code } = parseInput(recoveryBody, request.body);
    const found = await currentUser(session.id);
    if (!found.totp_secret) throw new FlotillaError("bad_request", "Two-factor authentication is not enabled.");
    if (!(await useRecoveryCode(db.orm, found.id, code))) {
      totp.hit(key);
      await recordAudit(db, auditActorOf(request), twoFactorEntry(found.id, "two_factor.failed", "recovery_code"));
      throw twoFactorError("two_factor_code_invalid");
    }
    await recordAudit(db, auditActorOf(request), twoFactorEntry(found.id, "two_factor.passed", "recovery_code"));
    return text(reply).send(await tokens.passTwoFactor(found, session));
  });
}
