import type { QueryClient } from "@tanstack/react-query";
import { getErrorCode, getStatusCode, isAuthError } from "../../lib/errors.ts";
import type { Sdk } from "../../lib/sdk.ts";
import { accountRequest } from "./api.ts";
import { lastPathOf, takeReturnUrl } from "./navigation.ts";
import { decodeToken, isTokenExpired, noteFreshToken, type TokenClaims } from "./token.ts";

/**
 * The session as the router and the pages see it (spec 1 §4). No stored token, a malformed or
 * expired one: signed out, without a request. A token still waiting for its second factor:
 * two-factor pending, also without a request (the API only lets it complete 2FA). Otherwise the
 * user's row is read (`GET /v7/user({id})`), which both proves the token and carries the
 * verification flags. The answer is remembered for 30 s; logging in or out forgets it.
 */
export const SESSION_CHECK_STALE_MS = 30_000;

export const sessionKeys = {
  state: ["session", "state"] as const,
  user: ["session", "user"] as const,
};

export const USER_FIELDS = [
  "id",
  "username",
  "email",
  "first_name",
  "last_name",
  "company",
  "account_type",
  "must_be_verified",
  "is_verified",
  "has_disabled_newsletter",
  "has_password_set",
  "created_at",
] as const;

export interface SessionUser {
  id: number;
  username: string;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  account_type: string | null;
  must_be_verified: boolean;
  is_verified: boolean;
  has_disabled_newsletter: boolean;
  has_password_set: boolean;
  created_at: string;
}

export type SessionState =
  /** `rejected`: a stored token the API refused (a revoked token, an ended session). */
  | { kind: "signed-out"; rejected?: true }
  | { kind: "two-factor"; claims: TokenClaims }
  | { kind: "signed-in"; claims: TokenClaims; user: SessionUser };

export async function storedClaims(sdk: Pick<Sdk, "auth">): Promise<TokenClaims | undefined> {
  const token = await sdk.auth.getToken().catch(() => undefined);
  return decodeToken(token);
}

export async function readUser(sdk: Sdk, id: number): Promise<SessionUser | undefined> {
  const user = await sdk.pine.get({
    resource: "user",
    id,
    // The typed model lacks some of these fields (must_be_verified…): the select is built as plain strings.
    options: { $select: [...USER_FIELDS] as never },
  });
  return (user ?? undefined) as SessionUser | undefined;
}

const isSignedOutError = (error: unknown) =>
  isAuthError(error) || getStatusCode(error) === 401 || getErrorCode(error) === "BalenaUnauthorized";

export async function checkSessionState(sdk: Sdk): Promise<SessionState> {
  const claims = await storedClaims(sdk);
  if (!claims || isTokenExpired(claims)) return { kind: "signed-out" };
  if (claims.twoFactorRequired === true) return { kind: "two-factor", claims };
  try {
    const user = await readUser(sdk, claims.id);
    return user ? { kind: "signed-in", claims, user } : { kind: "signed-out" };
  } catch (error) {
    if (isSignedOutError(error)) return { kind: "signed-out", rejected: true };
    throw error;
  }
}

export function getSessionState(queryClient: QueryClient, sdk: Sdk): Promise<SessionState> {
  return queryClient.fetchQuery({
    queryKey: sessionKeys.state,
    queryFn: () => checkSessionState(sdk),
    staleTime: SESSION_CHECK_STALE_MS,
    retry: false,
  });
}

export const sessionQuery = (sdk: Sdk) => ({
  queryKey: sessionKeys.state,
  queryFn: () => checkSessionState(sdk),
  staleTime: SESSION_CHECK_STALE_MS,
  retry: false,
});

/** Verification is needed when must_be_verified is set and the email is not verified yet (spec 1 §4). */
export const needsVerification = (user: Pick<SessionUser, "must_be_verified" | "is_verified">) =>
  user.must_be_verified && !user.is_verified;

/** A user created within one day counts as new (spec 1 §3). */
export const isNewUser = (user: Pick<SessionUser, "created_at">, now = Date.now()) =>
  now - Date.parse(user.created_at) < 24 * 60 * 60 * 1000;

export async function isLoggedIn(queryClient: QueryClient, sdk: Sdk): Promise<boolean> {
  return (await getSessionState(queryClient, sdk)).kind === "signed-in";
}

/** Keeps a new token and forgets everything cached for the previous one. */
export async function startSession(queryClient: QueryClient, sdk: Sdk, token: string) {
  noteFreshToken(token);
  await sdk.auth.loginWithToken(token);
  queryClient.clear();
}

/** Drops the token and everything cached for this user (spec 1 §4: logout clears everything). */
export async function logOut(queryClient: QueryClient, sdk: Sdk, apiUrl?: string) {
  try {
    // Ends the session on the server too (POST /logout), when there is one to end.
    if (apiUrl) await accountRequest(sdk, apiUrl, { method: "POST", path: "/logout" }).catch(() => undefined);
    await sdk.auth.logout();
  } finally {
    queryClient.clear();
    try {
      globalThis.sessionStorage?.clear();
    } catch {
      // Nothing stored to clear.
    }
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
  // Login pages are no place to return to, but for the handoffs that sent the user here: the
  // command-line login and an OAuth application's authorization.
  if ((path === "/login" || path.startsWith("/login/")) && !/^\/login\/(cli|oauth)\//.test(path)) return undefined;
  return value;
}

/** Where a fresh login goes: the redirect query, a kept return URL, this user's last page, or /. */
export function afterLoginTarget(redirect: unknown, userId: number | undefined): string {
  return (
    safeRedirect(redirect) ??
    safeRedirect(takeReturnUrl()) ??
    (userId === undefined ? undefined : lastPathOf(userId)) ??
    "/"
  );
}

/** The username as the menu shows it: cut after 20 characters (spec 1 §2.5). */
export function menuUsername(username: string, max = 20): string {
  return username.length > max ? `${username.slice(0, max)}…` : username;
}
