/**
 * Small navigation rules of the sign-in pages (spec 1 §2.1, §2.2, §5), kept free of React so
 * they are unit-tested on their own.
 */

const LAST_PATH_PREFIX = "flotilla.lastPath.";
const RETURN_URL_KEY = "flotilla.returnUrl";

/** The path (with query) this user last visited, remembered per user (spec 1 §2.2). */
export function rememberLastPath(userId: number, path: string, storage: Storage | undefined = globalThis.localStorage) {
  try {
    storage?.setItem(`${LAST_PATH_PREFIX}${userId}`, path);
  } catch {
    // Not remembered: nothing else depends on it.
  }
}

/** The path to restore on the first load after login: never /fleets (the default anyway). */
export function lastPathOf(userId: number, storage: Storage | undefined = globalThis.localStorage): string | undefined {
  try {
    const path = storage?.getItem(`${LAST_PATH_PREFIX}${userId}`) ?? undefined;
    if (!path?.startsWith("/") || path.startsWith("//")) return undefined;
    const bare = path.split(/[?#]/)[0];
    // Never /fleets (the default anyway), nor one-off steps: logins, CLI handoff, verification, sign-up.
    if (bare === "/fleets" || bare === "/" || /^\/(login|signup|user\/verify-email)(\/|$)/.test(bare ?? "")) {
      return undefined;
    }
    return path;
  } catch {
    return undefined;
  }
}

const returnKey = (key?: string) => (key ? `${RETURN_URL_KEY}.${key}` : RETURN_URL_KEY);

/** A return URL kept in session storage (optionally per key) (spec 1 §2.2). */
export function setReturnUrl(url: string, key?: string, storage: Storage | undefined = globalThis.sessionStorage) {
  try {
    storage?.setItem(returnKey(key), url);
  } catch {
    // Session storage unavailable: the user lands on the default page instead.
  }
}

/** Reads the return URL and removes it: it is used once. */
export function takeReturnUrl(key?: string, storage: Storage | undefined = globalThis.sessionStorage) {
  try {
    const value = storage?.getItem(returnKey(key)) ?? undefined;
    storage?.removeItem(returnKey(key));
    return value ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The reset code of `/user/reset-password/{loginCode}`: the literal value "code" means it is in
 * the URL hash (`#abc` or `#code=abc`), so it never reaches server logs (spec 1 §2.1).
 */
export function resetCodeFrom(loginCode: string, hash: string): string | undefined {
  if (loginCode !== "code") return loginCode || undefined;
  const raw = hash.replace(/^#/, "");
  if (!raw) return undefined;
  const params = new URLSearchParams(raw);
  const named = params.get("code");
  if (named) return named;
  return raw.includes("=") ? undefined : decodeURIComponent(raw);
}

/** `?email=` pre-fills the sign-up form only when it looks like an email address (spec 1 §2.1). */
export function looksLikeEmail(value: unknown): value is string {
  return typeof value === "string" && value.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value);
}

export type Invitation = { type: "organization" | "application"; token: string };

/**
 * An invitation carried by a redirect (`/organization/invitation/{token}` or `/invitation/{token}`,
 * as a path or a full URL) pre-fills the sign-up form (spec 1 §2.1).
 */
export function invitationFromRedirect(redirect: unknown): Invitation | undefined {
  if (typeof redirect !== "string" || !redirect) return undefined;
  let path: string;
  try {
    path = new URL(redirect, "http://flotilla.invalid").pathname;
  } catch {
    return undefined;
  }
  const organization = /^\/organization\/invitation\/([^/]+)\/?$/.exec(path);
  if (organization?.[1]) return { type: "organization", token: decodeURIComponent(organization[1]) };
  const fleet = /^\/invitation\/([^/]+)\/?$/.exec(path);
  if (fleet?.[1]) return { type: "application", token: decodeURIComponent(fleet[1]) };
  return undefined;
}

const AFTER_SIGNUP_KEY = "flotilla.afterSignup";

/** Where a sign-up that accepted an invitation continues after the profile step (`/orgs`, `/fleets`). */
export function rememberAfterSignup(path: "/orgs" | "/fleets") {
  try {
    sessionStorage.setItem(AFTER_SIGNUP_KEY, path);
  } catch {
    // Storage unavailable: the profile step goes home instead.
  }
}

/** The remembered target, read once. */
export function takeAfterSignup(): "/orgs" | "/fleets" | undefined {
  try {
    const value = sessionStorage.getItem(AFTER_SIGNUP_KEY);
    sessionStorage.removeItem(AFTER_SIGNUP_KEY);
    return value === "/orgs" || value === "/fleets" ? value : undefined;
  } catch {
    return undefined;
  }
}
