import { AUTH_FRESHNESS_MS } from "@flotilla/domain";
import { FlotillaError } from "../errors.ts";

/**
 * Sensitive actions (change password or email, delete the account, disable two-factor, recovery
 * codes, personal API keys, SSH keys, granting an OAuth application) need a session whose
 * authTime is less than 20 minutes old (spec 1 §9); otherwise 403 `auth_expired`, and the
 * dashboard asks for the password again (POST /user/v1/refresh-token). `authTime` is undefined
 * for API keys: they are never fresh. Tokens issued to an OAuth application are refused before
 * this check (delegation.ts `sensitiveActionError`).
 */
export function freshnessError(authTime: number | undefined, now = Date.now()): FlotillaError | undefined {
  if (authTime === undefined || now - authTime > AUTH_FRESHNESS_MS) return new FlotillaError("auth_expired");
  return undefined;
}
