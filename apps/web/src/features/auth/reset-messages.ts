import { t } from "../../lib/i18n.ts";
import { parseRetryAfter } from "../../lib/request-layer.ts";
import type { AccountApiError } from "./api.ts";

/** Minutes and seconds until a time, as "available again in {time}" shows it. */
export function formatWait(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.ceil(minutes / 60)} h`;
}

/**
 * A 429 on password reset (spec 1 §8): the server's text plus "available again in {time}" when it
 * says when, else "try again shortly"; with no text, "Too many requests."
 */
export function rateLimitText(error: AccountApiError, now = Date.now()): string {
  const text = error.body.trim();
  if (!text) return t("errors.reset_too_many");
  const wait = parseRetryAfter(error.retryAfter, now);
  const tail =
    wait === undefined
      ? t("errors.reset_try_again_shortly")
      : t("errors.reset_available_again", { time: formatWait(wait) });
  return `${text.replace(/\.+$/, "")}: ${tail}.`;
}

/** The 2FA codes of POST /user/reset-password (spec 1 §8): 1 required, 2 invalid, 3 reset code expired, 4 invalid. */
export function resetErrorText(errorCode: number | undefined): string | undefined {
  switch (errorCode) {
    case 1:
      return t("errors.two_factor_1");
    case 2:
      return t("errors.two_factor_2");
    case 3:
      return t("errors.two_factor_3");
    case 4:
      return t("errors.two_factor_4");
    default:
      return undefined;
  }
}
