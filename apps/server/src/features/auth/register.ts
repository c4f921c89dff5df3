import { emailSchema, passwordSchema } from "@flotilla/domain";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { parseInput } from "../../lib/validation.ts";
import { registerAccount, sendVerificationEmail } from "../account/service.ts";
import { verifyCaptcha } from "../captcha/verify.ts";

/**
 * Registration accepts only these fields (spec 1 §5); anything else is refused. The invitation
 * (type and token) comes along from an invitation link; it is checked for shape here and
 * accepted by the invitations feature.
 */
const registerBody = z
  .strictObject({
    email: emailSchema,
    password: passwordSchema,
    "g-recaptcha-response": z.string().max(10_000).optional(),
    has_disabled_newsletter: z.boolean({ error: "must be true or false" }).optional(),
    invitation_type: z
      .enum(["organization", "application"], { error: 'must be "organization" or "application"' })
      .optional(),
    invitation_token: z.string().trim().min(1, "must not be empty").max(256).optional(),
  })
  .refine((body) => (body.invitation_type === undefined) === (body.invitation_token === undefined), {
    message: "invitation_type and invitation_token go together",
    path: ["invitation_token"],
  });

export async function registerRoutes(app: FastifyInstance, ctx: AppContext) {
  const { config, captcha, tokens } = ctx;
  // balena-sdk `auth.register` → the new session token as text.
  app.post(
    "/user/register",
    { config: { public: true, rateLimit: { max: 20, timeWindow: "1 minute" } } },
    async (request, reply) => {
      const body = parseInput(registerBody, request.body);
      await verifyCaptcha({ config, captcha }, body["g-recaptcha-response"]);
      const created = await registerAccount(ctx, {
        email: body.email,
        password: body.password,
        hasDisabledNewsletter: body.has_disabled_newsletter ?? false,
      });
      // Sent in both verification modes; only `required` (must_be_verified) blocks the dashboard.
      await sendVerificationEmail(ctx, created, { debounce: false });
      reply.type("text/plain; charset=utf-8");
      return tokens.start(created);
    },
  );
}
