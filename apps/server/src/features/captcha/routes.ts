import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../context.ts";

/** The captcha the dashboard must show for sign-up and password reset (FLOTILLA_CAPTCHA). */
export async function captchaRoutes(app: FastifyInstance, { config, captcha }: AppContext) {
  app.get("/auth/v1/captcha", { config: { public: true } }, async (_request, reply) => {
    reply.header("cache-control", "no-store");
    if (config.captcha === "pow") {
      return { kind: "pow", challenge: captcha.challenge(), difficulty: captcha.difficulty };
    }
    if (config.captcha === "recaptcha") return { kind: "recaptcha", siteKey: config.recaptcha?.siteKey };
    return { kind: "off" };
  });
}
