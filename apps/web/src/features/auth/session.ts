import type { QueryClient } from "@tanstack/react-query";
import type { Sdk } from "../../lib/sdk.ts";

/**
 * The session as the router and the pages see it. Whether the token is valid is asked of the
 * API (`GET /actor/v1/whoami`: 200 valid, 401 not) and remembered for 30 s, so moving between
 * pages does not cost a round trip each time; logging in or out forgets it.
 */
export const SESSION_CHECK_STALE_MS = 30_000;

export const sessionKeys = {
  loggedIn: ["session", "logged-in"] as const,
  whoami: ["session", "whoami"] as const,
};

/** No stored token means signed out, without asking the API; a stored one is checked by the API. */
export async function checkSession(sdk: Pick<Sdk, "auth">): Promise<boolean> {
  const hasToken = await sdk.auth.getToken().then(
    () => true,
    () => false,
  );
  return hasToken && (await sdk.auth.isLoggedIn());
}

export function isLoggedIn(queryClient: QueryClient, sdk: Sdk): Promise<boolean> {
  return queryClient.fetchQuery({
    queryKey: sessionKeys.loggedIn,
    queryFn: () => checkSession(sdk),
    staleTime: SESSION_CHECK_STALE_MS,
    retry: false,
  });
}

export const whoamiQuery = (sdk: Sdk) => ({
  queryKey: sessionKeys.whoami,
  queryFn: async () => (await sdk.auth.whoami()) ?? null,
  staleTime: 5 * 60_000,
});

/** Drops the token and everything cached for this user. */
export async function logOut(queryClient: QueryClient, sdk: Sdk) {
  try {
    await sdk.auth.logout();
  } finally {
    queryClient.clear();
  }
}

/**
 * The `redirect` query of /login, honoured after login only when it is a path of this
 * dashboard (no other origin, no protocol-relative `//host`, not the login page itself).
 */
export function safeRedirect(value: unknown): string | undefined {
  if (typeof value !== "string" || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) {
    return undefined;
  }
  if ([...value].some((char) => char.charCodeAt(0) < 0x20 || char === "\u007f")) return undefined;
  const path = value.split(/[?#]/)[0] ?? "";
  if (path === "/login" || path.startsWith("/login/")) return undefined;
  return value;
}

/** The username as the menu shows it: cut after 20 characters (spec 1 §2.5). */
export function menuUsername(username: string, max = 20): string {
  return username.length > max ? `${username.slice(0, max)}…` : username;
}
