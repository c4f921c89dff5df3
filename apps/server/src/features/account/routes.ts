import {
  changeEmailSchema,
  changePasswordSchema,
  emailSchema,
  passwordConfirmationSchema,
  passwordResetRequestSchema,
  passwordResetSchema,
  profileSchema,
  sshKeyImportSchema,
} from "@flotilla/domain";
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireFreshAuth, requireSession, requireUser } from "../../lib/authenticate.ts";
import { fetchAllowList } from "../../lib/outbound-fetch.ts";
import { createThrottle } from "../../lib/throttle.ts";
import { parseInput } from "../../lib/validation.ts";
import { createLoginThrottle } from "../auth/login-throttle.ts";
import { verifyCaptcha } from "../captcha/verify.ts";
import { dropUnvouchedSamlLinks } from "../identity/domains.ts";
import { hashPassword, verifyPassword } from "../users/passwords.ts";
import { findUserById, setPasswordHash, type User } from "../users/service.ts";
import {
  changeEmail,
  completePasswordReset,
  requestPasswordReset,
  resendVerificationEmail,
  updateProfile,
  userOfResetCode,
  verifyEmail,
} from "./service.ts";
import { importSshKeys } from "./ssh-import.ts";
import { checkTotpForReset } from "./two-factor.ts";
import { twoFactorRoutes } from "./two-factor-routes.ts";

const verifyEmailBody = z.object({
  verificationToken: z.string({ error: "is required" }).trim().min(1, "is required").max(256),
  email: z.string({ error: "is required" }).trim().min(1, "is required").max(254),
});

const text = (reply: FastifyReply) => reply.type("text/plain; charset=utf-8");

/** Password-reset mails: 3 per address and 10 per client address an hour (spec 1 §8 has the 429's texts). */
const RESET_MAILS_PER_EMAIL = 3;
const RESET_MAILS_PER_ADDRESS = 10;
const HOUR = 60 * 60 * 1000;

export async function accountRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, tokens } = ctx;
  const fetchAllow = fetchAllowList(ctx.config.fetchAllow);
  const resetPerEmail = createThrottle({
    max: RESET_MAILS_PER_EMAIL,
    windowMs: HOUR,
    message: "Too many password reset requests for this email.",
  });
  const resetPerAddress = createThrottle({
    max: RESET_MAILS_PER_ADDRESS,
    windowMs: HOUR,
    message: "Too many password reset requests from your address.",
  });
  // Wrong passwords on re-authentication and sensitive actions count like failed logins.
  const passwordThrottle = createLoginThrottle();
  const totp = ctx.totpGuard;

  /** The caller's user row, and the password check of sensitive actions (401 invalid_password). */
  async function currentUser(userId: number): Promise<User> {
    const found = await findUserById(db.orm, userId);
    if (!found) throw new FlotillaError("not_logged_in");
    return found;
  }
  async function checkPassword(found: User, password: string, address: string) {
    const key = `user:${found.id}`;
    passwordThrottle.check(key, address);
    if (!(await verifyPassword(found.password_hash, password))) {
      passwordThrottle.failed(key, address);
      throw new FlotillaError("invalid_password");
    }
    passwordThrottle.succeeded(key, address);
  }

  // ---- Email verification ---------------------------------------------------------------

  // balena-sdk `auth.verifyEmail` → a new session token.
  app.post(
    "/user/v1/verify-email",
    { config: { public: true, rateLimit: { max: 30, timeWindow: "1 minute" } } },
    async (request, reply) => {
      const body = parseInput(verifyEmailBody, request.body);
      const verified = await db.transaction(async (tx) => {
        const user = await verifyEmail(tx.orm, body.verificationToken, body.email);
        // The mailbox's owner now holds the account: providers that may not vouch for it lose their links.
        if (user.email) await dropUnvouchedSamlLinks(tx, user.id, user.email);
        return user;
      });
      return text(reply).send(await tokens.start(verified));
    },
  );

  // The dashboard's resend button (the SDK PATCHes user.has_been_sent_verification_email instead).
  app.post("/user/v1/verification-email", async (request) => {
    const { id } = requireUser(request);
    await resendVerificationEmail(ctx, id);
    return { success: true };
  });

  // ---- Profile, password, email ---------------------------------------------------------

  app.patch("/user/profile", async (request) => {
    const { id } = requireUser(request);
    return updateProfile(db.orm, id, parseInput(profileSchema, request.body));
  });

  app.patch("/user/password", async (request, reply) => {
    const session = requireFreshAuth(request);
    const body = parseInput(changePasswordSchema, request.body);
    const found = await currentUser(session.id);
    await checkPassword(found, body.currentPassword, request.ip);
    await setPasswordHash(db.orm, found.id, await hashPassword(body.password));
    // Every other session ends; this one goes on with a new token.
    await tokens.revokeOthers(found.id, session.session);
    return text(reply).send(await tokens.reauthenticate(found, session));
  });

  app.patch("/user/email", async (request) => {
    const session = requireFreshAuth(request);
    const body = parseInput(changeEmailSchema, request.body);
    const found = await currentUser(session.id);
    await checkPassword(found, body.password, request.ip);
    return changeEmail(ctx, found, body.email);
  });

  // ---- Sessions ---------------------------------------------------------------------------

  // balena-sdk's logout only forgets the token; the dashboard ends the session here first.
  app.post("/logout", async (request) => {
    const session = requireSession(request);
    await tokens.revoke(session.session);
    return { success: true };
  });

  app.post("/logout-others", async (request) => {
    const session = requireSession(request);
    await tokens.revokeOthers(session.id, session.session);
    return { success: true };
  });

  // Re-authentication: the password again → a token of the same session with authTime now.
  app.post("/user/v1/refresh-token", async (request, reply) => {
    const session = requireSession(request);
    const { password } = parseInput(passwordConfirmationSchema, request.body);
    const found = await currentUser(session.id);
    await checkPassword(found, password, request.ip);
    return text(reply).send(await tokens.reauthenticate(found, session));
  });

  // ---- Password reset -------------------------------------------------------------------

  app.post<{ Params: { email: string } }>(
    "/password-reset-path/:email",
    { config: { public: true } },
    async (request, reply) => {
      const email = parseInput(emailSchema, request.params.email);
      const body = parseInput(passwordResetRequestSchema, request.body);
      resetPerAddress.check(request.ip);
      resetPerEmail.check(email);
      await verifyCaptcha(ctx, body["g-recaptcha-response"]);
      resetPerAddress.hit(request.ip);
      resetPerEmail.hit(email);
      // Not awaited: an unknown address answers as fast as a known one (no enumeration).
      void requestPasswordReset(ctx, email).catch((error: unknown) =>
        request.log.error({ err: error }, "password reset mail failed"),
      );
      return text(reply).send("OK");
    },
  );

  app.post(
    "/user/reset-password",
    { config: { public: true, rateLimit: { max: 20, timeWindow: "1 minute" } } },
    async (request) => {
      const body = parseInput(passwordResetSchema, request.body);
      const { owner, tokenRow } = await userOfResetCode(db.orm, body.code);
      if (owner.totp_secret) await checkTotpForReset(db, totp, owner, body.twoFactorCode);
      const passwordHash = await hashPassword(body.password);
      await db.transaction(async (tx) => {
        const proved = await completePasswordReset(tx.orm, tokenRow, owner, passwordHash);
        // Taking the address back by mail ends the links of providers that may not vouch for it
        // (docs/identity.md "Verified domains"): such a provider signs the account in no more.
        if (proved) await dropUnvouchedSamlLinks(tx, owner.id, proved);
      });
      await tokens.revokeAll(owner.id);
      // The owner read the reset mail: failed logins no longer lock the account anywhere.
      ctx.loginThrottle.clearAccount(`user:${owner.id}`);
      return { success: true };
    },
  );

  // ---- SSH keys ---------------------------------------------------------------------------

  // Adding SSH keys is a sensitive action, as adding one through the data API (ssh-keys/hooks.ts).
  app.post("/user/v1/ssh-keys/import", async (request) => {
    const { id } = requireUser(request);
    const { url } = parseInput(sshKeyImportSchema, request.body);
    requireFreshAuth(request);
    return importSshKeys(db.orm, id, url, { allow: fetchAllow, log: request.log });
  });

  twoFactorRoutes(app, ctx, { totp, checkPassword });
}
