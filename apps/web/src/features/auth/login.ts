import { storeToken } from "../../lib/api-client.ts";
import { sendAccountRequest } from "./api.ts";
import { notePasswordLength } from "./password-too-long.ts";
import { afterLoginTarget } from "./session.ts";
import { decodeToken, noteFreshToken, type TokenClaims } from "./token.ts";

/**
 * Signing in (spec 1 §2.3), without React or the SDK: the login page (login-page.ts) renders
 * before either loads, and a signed-in person goes on by a document navigation that starts the
 * full app.
 */

/**
 * The query of /login: `redirect`, and what a failed sign-in brings back (spec 1 §8):
 * `saml_error` (with `domain` for saml_domain_not_verified), `social_error` (with `provider`).
 */
export interface LoginSearch {
  redirect?: string;
  saml_error?: string;
  domain?: string;
  social_error?: string;
  provider?: string;
}

const LOGIN_SEARCH_KEYS = ["redirect", "saml_error", "domain", "social_error", "provider"] as const;

/**
 * A query value as the router reads it (TanStack Router writes a value that would parse as JSON,
 * such as "12", quoted): a JSON string is unquoted, any other JSON value is no string.
 */
function routerValue(raw: string): string | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "string" ? value : undefined;
  } catch {
    return raw;
  }
}

/** The login page's query from `location.search`, as the router's `/login` route validates it. */
export function loginSearch(query: string): LoginSearch {
  const params = new URLSearchParams(query);
  const search: LoginSearch = {};
  for (const key of LOGIN_SEARCH_KEYS) {
    const raw = params.get(key);
    const value = raw === null ? undefined : routerValue(raw);
    if (value !== undefined) search[key] = value;
  }
  return search;
}

/** `?redirect=…` for a link to another sign-in page, written as the router writes it ("" without one). */
export function redirectQuery(redirect: string | undefined): string {
  if (!redirect) return "";
  const quoted = routerValue(redirect) === redirect ? redirect : JSON.stringify(redirect);
  return `?${new URLSearchParams({ redirect: quoted })}`;
}

export interface Credentials {
  username: string;
  password: string;
  /** A code of the account's second factor, which gets through a login locked by failed logins. */
  twoFactorCode?: string;
}

/**
 * `POST {api}/login_` (what balena-sdk's auth.login posts, plus the code through a lock, posted
 * directly: the SDK turns a 429 into a bare "Too Many Requests" without the server's text), then
 * the token kept where the SDK keeps it. Gives the token's claims.
 */
export async function logIn(apiUrl: string, credentials: Credentials): Promise<TokenClaims | undefined> {
  const token = await sendAccountRequest<string>(apiUrl, {
    method: "POST",
    path: "/login_",
    body: credentials,
    auth: false,
  });
  storeToken(token);
  notePasswordLength(credentials.password);
  // The new token's issue time is the server's clock (token checks compare with it).
  noteFreshToken(token);
  return decodeToken(token);
}

/**
 * Where a fresh login goes: the two-factor step (keeping the redirect) while the token waits for
 * its second factor, otherwise the redirect, a kept return URL, this user's last page or `/`.
 */
export function pageAfterLogin(claims: TokenClaims | undefined, redirect: string | undefined): string {
  if (claims?.twoFactorRequired) return `/login/two-factor${redirectQuery(redirect)}`;
  return afterLoginTarget(redirect, claims?.id);
}
