import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireSession, requireUser } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { verifyPassword } from "../users/passwords.ts";
import { findUserById, findUserByLogin } from "../users/service.ts";
import { createLoginThrottle } from "./login-throttle.ts";

const loginBody = z.object({
  username: z.string({ error: "is required" }).trim().min(1, "is required").max(254),
  // Long enough for any real password; bounded so nobody makes the server hash megabytes.
  password: z.string({ error: "is required" }).min(1, "is required").max(1024),
});

export async function authRoutes(app: FastifyInstance, { db, tokens }: AppContext) {
  const throttle = createLoginThrottle();

  // balena-sdk `auth.login` → the session token as text.
  app.post(
    "/login_",
    { config: { public: true, rateLimit: { max: 30, timeWindow: "1 minute" } } },
    async (request, reply) => {
      const { username, password } = parseInput(loginBody, request.body);
      throttle.check(username, request.ip);
      const found = await findUserByLogin(db.orm, username);
      if (!found || !(await verifyPassword(found.password_hash, password))) {
        throttle.failed(username, request.ip);
        throw new FlotillaError("invalid_login_credentials");
      }
      throttle.succeeded(username);
      reply.type("text/plain; charset=utf-8");
      return tokens.start(found);
    },
  );

  // balena-sdk `auth.whoami` / `auth.isLoggedIn`.
  app.get("/actor/v1/whoami", async (request) => {
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
