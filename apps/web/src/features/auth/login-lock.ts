import { capErrorText, errorText, getStatusCode } from "../../lib/errors.ts";

/**
 * Failed logins lock a login for a while (spec 1 §8's 429 text, then how long: "Too Many
 * Requests. Try again later. Try again in 14 minutes."). The login page shows the server's
 * whole text for a lock, not the short catalogue one, and then offers the two ways through it:
 * a code of the account's second factor, or a password reset.
 */
export function isLoginLocked(error: unknown): boolean {
  return getStatusCode(error) === 429;
}

/** The text of a failed login: the server's whole sentence for a lock, the catalogue's otherwise. */
export function loginErrorText(error: unknown): string {
  if (isLoginLocked(error)) {
    const body = (error as { body?: unknown }).body;
    if (typeof body === "string" && body.trim()) return capErrorText(body.trim());
  }
  return errorText(error);
}
