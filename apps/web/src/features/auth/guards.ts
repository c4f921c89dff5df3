import { needsVerification, type SessionState } from "./session.ts";

/**
 * The route guards of spec 1 §2.2 as plain decisions (the router throws the redirects): where a
 * visitor in a given session state must go instead, or undefined to let them in.
 */
export type GuardRedirect =
  | { to: "/login"; search: { redirect?: string } }
  | { to: "/login/two-factor"; search: { redirect?: string } }
  | { to: "/user/verify-email/pending" }
  | { to: "/" };

const redirectSearch = (href: string) => (href && href !== "/" ? { redirect: href } : {});

/** Signed-in pages: signed-out → /login, second factor pending → /login/two-factor. */
export function signedInGuard(state: SessionState, href: string): GuardRedirect | undefined {
  if (state.kind === "signed-out") return { to: "/login", search: redirectSearch(href) };
  if (state.kind === "two-factor") return { to: "/login/two-factor", search: redirectSearch(href) };
  return undefined;
}

/** Pages that need a verified email when verification is required → the pending page. */
export function verifiedGuard(state: SessionState): GuardRedirect | undefined {
  if (state.kind === "signed-in" && needsVerification(state.user)) return { to: "/user/verify-email/pending" };
  return undefined;
}

/** Logged-out-only pages (login, signup): a signed-in visitor goes to /. */
export function loggedOutOnlyGuard(state: SessionState): GuardRedirect | undefined {
  return state.kind === "signed-in" ? { to: "/" } : undefined;
}

/** The second-factor page: only with a token that waits for it; signed in → /, none → /login. */
export function twoFactorGuard(state: SessionState): GuardRedirect | undefined {
  if (state.kind === "signed-in") return { to: "/" };
  if (state.kind === "signed-out") return { to: "/login", search: {} };
  return undefined;
}
