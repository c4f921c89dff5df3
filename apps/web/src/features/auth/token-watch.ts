import { SESSION_REFRESH_INTERVAL_MS } from "@flotilla/domain";
import { activityCount } from "../../lib/activity.ts";
import type { Sdk } from "../../lib/sdk.ts";
import { accountRequest } from "./api.ts";
import { decodeToken, isTokenExpired, type TokenClaims } from "./token.ts";

/** The token is checked every second (spec 1 §9). */
export const TOKEN_CHECK_INTERVAL_MS = 1000;

/**
 * What to do with the stored token (spec 1 §4, §9): an expired one forces a logout; one issued
 * an hour ago or more is refreshed (`GET /user/v1/refresh-token`, same session and authTime),
 * once no activity is in progress.
 */
export function tokenAction(
  claims: Pick<TokenClaims, "exp" | "iat" | "twoFactorRequired"> | undefined,
  now = Date.now(),
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
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const token = await options.sdk.auth.getToken().catch(() => undefined);
      const action = tokenAction(decodeToken(token));
      if (action === "expired") options.onExpired();
      if (action === "refresh") {
        const fresh = await accountRequest<string>(options.sdk, options.apiUrl, {
          method: "GET",
          path: "/user/v1/refresh-token",
        }).catch(() => undefined);
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
