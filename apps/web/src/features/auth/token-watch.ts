import { SESSION_REFRESH_INTERVAL_MS } from "@flotilla/domain";
import { activityCount } from "../../lib/activity.ts";
import type { Sdk } from "../../lib/sdk.ts";
import { serverNow } from "../../lib/server-clock.ts";
import { accountRequest } from "./api.ts";
import { decodeToken, isTokenExpired, noteFreshToken, type TokenClaims } from "./token.ts";

/** The token is checked every second (spec 1 §9). */
export const TOKEN_CHECK_INTERVAL_MS = 1000;
/** After a refresh that failed, the next try waits this long instead of one second. */
export const REFRESH_RETRY_DELAY_MS = 60_000;

/**
 * What to do with the stored token (spec 1 §4, §9): an expired one forces a logout; one issued
 * an hour ago or more is refreshed (`GET /user/v1/refresh-token`, same session and authTime),
 * once no activity is in progress.
 */
export function tokenAction(
  claims: Pick<TokenClaims, "exp" | "iat" | "twoFactorRequired"> | undefined,
  now = serverNow(),
  activities = activityCount(),
): "none" | "expired" | "refresh" {
  if (!claims) return "none";
  if (isTokenExpired(claims, now)) return "expired";
  // A refresh waits while writes are in progress (spec 1 §4).
  if (claims.twoFactorRequired || activities > 0) return "none";
  if (claims.iat !== undefined && now - claims.iat * 1000 >= SESSION_REFRESH_INTERVAL_MS) return "refresh";
  return "none";
}

export function startTokenWatch(options: { sdk: Sdk; apiUrl: string; onExpired: () => void }): () => void {
  let busy = false;
  let nextRefreshAt = 0;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const token = await options.sdk.auth.getToken().catch(() => undefined);
      const action = tokenAction(decodeToken(token));
      if (action === "expired") options.onExpired();
      if (action === "refresh" && Date.now() >= nextRefreshAt) {
        const fresh = await accountRequest<string>(options.sdk, options.apiUrl, {
          method: "GET",
          path: "/user/v1/refresh-token",
        }).catch(() => undefined);
        // A failed refresh is not repeated every second; a fresh token tells the server's time.
        if (typeof fresh === "string" && fresh) noteFreshToken(fresh);
        else nextRefreshAt = Date.now() + REFRESH_RETRY_DELAY_MS;
        // Only if the token was not replaced meanwhile (a login or a logout in another tab).
        if (
          typeof fresh === "string" &&
          fresh &&
          (await options.sdk.auth.getToken().catch(() => undefined)) === token
        ) {
          await options.sdk.auth.loginWithToken(fresh);
        }
      }
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), TOKEN_CHECK_INTERVAL_MS);
  return () => clearInterval(timer);
}
