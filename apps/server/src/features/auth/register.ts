import { emailSchema, passwordSchema } from "@flotilla/domain";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { parseInput } from "../../lib/validation.ts";
import { registerAccount, sendVerificationEmail } from "../account/service.ts";
import { verifyCaptcha } from "../captcha/verify.ts";
import { acceptApplicationInvitation, acceptOrganizationInvitation } from "../invitations/service.ts";

/**
 * Registration accepts only these fields (spec 1 §5); anything else is refused. The invitation
 * (type and token) comes along from an invitation link; it is checked for shape here and
 * accepted right after the account is created.
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
      // An invitation that came along is accepted now; an invalid or expired one does not stop
      // the registration (the dashboard tells the user when it opens the invitation link).
      if (body.invitation_type && body.invitation_token) {
        const token = body.invitation_token;
        const organization = body.invitation_type === "organization";
        await ctx.db
          .transaction(async (tx) => {
            if (organization) await acceptOrganizationInvitation(tx, token, created.id);
            else await acceptApplicationInvitation(tx, token, created.id);
          })
          .catch((error: unknown) => request.log.info({ err: error }, "invitation at registration not accepted"));
      }
      reply.type("text/plain; charset=utf-8");
      return tokens.start(created);
    },
  );
}
