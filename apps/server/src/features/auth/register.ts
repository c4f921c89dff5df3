import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "@flotilla/domain";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { parseInput } from "../../lib/validation.ts";
import { verifyCaptcha } from "../captcha/verify.ts";
import { createUser, findUserByLogin } from "../users/service.ts";

/** Registration accepts only these fields (spec 1 §5); anything else is refused. */
const registerBody = z.strictObject({
  email: z.email({ error: "must be a valid email address" }).trim().max(254),
  password: z
    .string({ error: "is required" })
    .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
    .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`),
  "g-recaptcha-response": z.string().max(1000).optional(),
  has_disabled_newsletter: z.boolean().optional(),
});

export async function registerRoutes(app: FastifyInstance, { db, config, captcha, tokens }: AppContext) {
  // balena-sdk `auth.register` → the new session token as text.
  app.post(
    "/user/register",
    { config: { public: true, rateLimit: { max: 20, timeWindow: "1 minute" } } },
    async (request, reply) => {
      const body = parseInput(registerBody, request.body);
      await verifyCaptcha({ config, captcha }, body["g-recaptcha-response"]);
      const created = await db.transaction(async (tx) => {
        if (await findUserByLogin(tx.orm, body.email)) {
          throw new FlotillaError("conflict", "This email is already registered.");
        }
        return createUser(tx.orm, {
          email: body.email,
          password: body.password,
          mustBeVerified: config.emailVerification === "required",
          isVerified: false,
          hasDisabledNewsletter: body.has_disabled_newsletter ?? false,
        });
      });
      reply.type("text/plain; charset=utf-8");
      return tokens.start(created);
    },
  );
}
