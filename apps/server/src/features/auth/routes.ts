import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth, requireSession, requireUser } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { acceptTotp } from "../account/two-factor.ts";
import { auditActorOf, recordAudit, signInEntry } from "../audit/record.ts";
import { verifyPassword } from "../users/passwords.ts";
import { findUserById, findUserByLogin, type User } from "../users/service.ts";
import { deviceOrFleetActor } from "./whoami.ts";

const loginBody = z.object({
  username: z.string({ error: "is required" }).trim().min(1, "is required").max(254),
  // Long enough for any real password; bounded so nobody makes the server hash megabytes.
  password: z.string({ error: "is required" }).min(1, "is required").max(1024),
  // A second factor, read only while failed logins lock this login (see below).
  twoFactorCode: z.string().trim().max(16).optional(),
});

export async function authRoutes(app: FastifyInstance, { db, tokens, loginThrottle: throttle, totpGuard }: AppContext) {
  const refused = (found: User | undefined, username: string, ip: string) =>
    // The login name as typed (bounded by the body's rules), never the password.
    recordAudit(
      db,
      { clientAddress: ip },
      {
        action: "sign_in.failed",
        targetType: "user",
        targetId: found?.id,
        targetUser: found?.id,
        details: { login: username },
      },
    );

  /**
   * A login that failed logins lock (login-throttle.ts) goes through with the right password and
   * a right code of the account's second factor (security review 3, finding 3): the lock stops
   * guessing, not the owner. Anything short of both is answered with the same 429 as before, so
   * the lock tells a guesser nothing (not whether the password was right, nor whether the account
   * has two-factor). A wrong code counts against the account's two-factor codes, as everywhere.
   */
  async function unlockWithSecondFactor(
    found: User | undefined,
    account: string,
    credentials: { username: string; password: string; twoFactorCode: string | undefined },
    ip: string,
    lock: FlotillaError,
  ): Promise<User> {
    const { username, password, twoFactorCode } = credentials;
    if (!twoFactorCode || !found) throw lock;
    const key = `user:${found.id}`;
    if (totpGuard.reached(key)) throw lock;
    // The password first, with or without two-factor: the time taken does not tell which.
    if (!(await verifyPassword(found.password_hash, password))) {
      throttle.failed(account, ip);
      await refused(found, username, ip);
      throw lock;
    }
    if (!found.totp_secret) throw lock;
    if (!(await acceptTotp(db.orm, found, found.totp_secret, twoFactorCode))) {
      totpGuard.hit(key);
      await recordAudit(
        db,
        { user: found.id, clientAddress: ip },
        {
          action: "two_factor.failed",
          targetType: "user",
          targetId: found.id,
          targetUser: found.id,
          details: { method: "totp" },
        },
      );
      throw lock;
    }
    totpGuard.reset(key);
    return found;
  }

  // balena-sdk `auth.login` → the session token as text.
  app.post(
    "/login_",
    { config: { public: true, rateLimit: { max: 30, timeWindow: "1 minute" } } },
    async (request, reply) => {
      const { username, password, twoFactorCode } = parseInput(loginBody, request.body);
      const addressLock = throttle.addressLock(request.ip);
      if (addressLock && !twoFactorCode) throw addressLock;
      const found = await findUserByLogin(db.orm, username);
      // One counter per user, whether named by email or username.
      const account = found ? `user:${found.id}` : `login:${username}`;
      const lock = throttle.lockOf(account, request.ip);
      if (lock) {
        const user = await unlockWithSecondFactor(
          found,
          account,
          { username, password, twoFactorCode },
          request.ip,
          lock,
        );
        throttle.succeeded(account, request.ip);
        const token = await tokens.start(user, { secondFactorPassed: true });
        await recordAudit(
          db,
          { user: user.id, clientAddress: request.ip },
          signInEntry(user.id, { method: "password", secondFactor: "totp", locked: true }),
        );
        reply.type("text/plain; charset=utf-8");
        return token;
      }
      if (!found || !(await verifyPassword(found.password_hash, password))) {
        throttle.failed(account, request.ip);
        await refused(found, username, request.ip);
        throw new FlotillaError("invalid_login_credentials");
      }
      throttle.succeeded(account, request.ip);
      const token = await tokens.start(found);
      await recordAudit(
        db,
        { user: found.id, clientAddress: request.ip },
        signInEntry(found.id, { method: "password" }),
      );
      reply.type("text/plain; charset=utf-8");
      return token;
    },
  );

  // "Log in as user" (spec 3 §6, §7): a platform administrator's session gets a token of the user
  // named, with `actualUser` = the administrator's user id; audited in `audit_event` and the log.
  const loginAsBody = z.object({
    username: z.string({ error: "is required" }).trim().min(1, "is required").max(254),
  });
  app.patch("/login_", async (request, reply) => {
    const admin = requireUser(request);
    const session = requireSession(request);
    if (!admin.caller.globalRoles.includes("balena_admin") || session.actualUser !== undefined) {
      throw new FlotillaError("forbidden");
    }
    const { username } = parseInput(loginAsBody, request.body);
    const target = await findUserByLogin(db.orm, username);
    if (!target) throw new FlotillaError("user_not_found", undefined, { params: { username } });
    const token = await tokens.startAs(target, admin.id);
    await recordAudit(db, auditActorOf(request), {
      action: "login_as_user",
      targetType: "user",
      targetId: target.id,
      targetUser: target.id,
      details: { username: target.username },
    });
    request.log.info(
      { audit: "login_as_user", actorUser: admin.id, targetUser: target.id },
      `platform administrator ${admin.username} logged in as ${target.username}`,
    );
    reply.type("text/plain; charset=utf-8");
    return token;
  });

  // balena-sdk `auth.whoami` / `auth.isLoggedIn`: a user, or the device or fleet of a device or provisioning key.
  app.get("/actor/v1/whoami", async (request) => {
    const auth = requireAuth(request);
    if (!auth.user) {
      const actor = await deviceOrFleetActor(db, auth.actor);
      if (!actor) throw new FlotillaError("not_logged_in");
      return actor;
    }
    const caller = requireUser(request);
    const found = await findUserById(db.orm, caller.id);
    if (!found) throw new FlotillaError("not_logged_in");
    return { id: found.actor, actorType: "user", actorTypeId: found.id, username: found.username, email: found.email };
  });

  // balena-sdk refreshes its token through this when it is old enough.
  app.get("/user/v1/refresh-token", async (request, reply) => {
    const session = requireSession(request);
    const found = await findUserById(db.orm, session.id);
    if (!found) throw new FlotillaError("not_logged_in");
    reply.type("text/plain; charset=utf-8");
    return tokens.refresh(found, session);
  });
}
