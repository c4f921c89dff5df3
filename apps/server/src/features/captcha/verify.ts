import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";

/** Checks a captcha response the way FLOTILLA_CAPTCHA says; a missing or wrong one is a 400 naming the field. */
export async function verifyCaptcha(
  { config, captcha }: Pick<AppContext, "config" | "captcha">,
  response: string | undefined,
) {
  if (config.captcha === "off") return;
  if (!response) throw new FlotillaError("bad_request", "g-recaptcha-response: a captcha response is required");
  const valid = config.captcha === "pow" ? captcha.verify(response) : await verifyRecaptcha(config, response);
  if (!valid) throw new FlotillaError("bad_request", "g-recaptcha-response: the captcha response is not valid");
}

async function verifyRecaptcha(config: AppContext["config"], response: string): Promise<boolean> {
  const recaptcha = config.recaptcha;
  if (!recaptcha) return false;
  try {
    // RECAPTCHA_VERIFY_URL is the operator's, not a user's, so it skips the outbound guard
    // (lib/outbound-fetch.ts); redirects are not followed, the secret goes to that URL only.
    const answer = await fetch(recaptcha.verifyUrl, {
      redirect: "error",
      method: "POST",
      body: new URLSearchParams({ secret: recaptcha.secretKey, response }),
      signal: AbortSignal.timeout(10_000),
    });
    return answer.ok && ((await answer.json()) as { success?: unknown }).success === true;
  } catch {
    throw new FlotillaError("service_unavailable", "The captcha service cannot be reached; try again later.");
  }
}
