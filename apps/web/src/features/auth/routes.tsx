import { createRoute, redirect } from "@tanstack/react-router";
import { page, redirectSearch, stringSearch } from "../../route-kit.ts";
import type { RootRoute, SignedInRoute, VerifiedRoute } from "../../router.tsx";
import { loggedOutOnlyGuard, twoFactorGuard } from "./guards.ts";
import { getSessionState } from "./session.ts";

/** Signing in, signing up and their hand-offs (spec 1 §2.1–2.3). */

const passwordResetPages = () => import("./password-reset-pages.tsx");
const verifyEmailPages = () => import("./verify-email-pages.tsx");
const handoffPages = () => import("./handoff-pages.tsx");

/** The pages open to a signed-out visitor. */
export function signedOutRoutes(root: RootRoute) {
  /** `/login`: logged-out only; a signed-in visitor goes to `/` (spec 1 §2.2). */
  const loginRoute = createRoute({
    getParentRoute: () => root,
    path: "/login",
    // `saml_error` (with `domain` for saml_domain_not_verified), `social_error` (with `provider`):
    // a failed sign-in lands here (spec 1 §8).
    validateSearch: (
      search: Record<string, unknown>,
    ): { redirect?: string; saml_error?: string; domain?: string; social_error?: string; provider?: string } => ({
      ...redirectSearch(search),
      ...(typeof search.saml_error === "string" ? { saml_error: search.saml_error } : {}),
      ...(typeof search.domain === "string" ? { domain: search.domain } : {}),
      ...(typeof search.social_error === "string" ? { social_error: search.social_error } : {}),
      ...(typeof search.provider === "string" ? { provider: search.provider } : {}),
    }),
    beforeLoad: async ({ context }) => {
      const target = loggedOutOnlyGuard(await getSessionState(context.queryClient, context.sdk));
      if (target) throw redirect(target);
    },
    // The plain login page, the same a cold load of /login opens before the app (main.tsx).
    component: page(() => import("./login-route.tsx"), "LoginPage"),
  });

  /** `/login/two-factor`: only with a token that waits for its second factor (spec 1 §2.2, §2.3). */
  const twoFactorRoute = createRoute({
    getParentRoute: () => root,
    path: "/login/two-factor",
    validateSearch: redirectSearch,
    beforeLoad: async ({ context }) => {
      const target = twoFactorGuard(await getSessionState(context.queryClient, context.sdk));
      if (target) throw redirect(target);
    },
    component: page(() => import("./two-factor-page.tsx"), "TwoFactorPage"),
  });

  /** `/signup` (spec 1 §2.1): query email, redirect, saml_error, recaptcha_secret; logged-out only. */
  const signupRoute = createRoute({
    getParentRoute: () => root,
    path: "/signup",
    validateSearch: stringSearch("email", "redirect", "saml_error", "recaptcha_secret"),
    beforeLoad: async ({ context }) => {
      const target = loggedOutOnlyGuard(await getSessionState(context.queryClient, context.sdk));
      if (target) throw redirect(target);
    },
    component: page(() => import("./signup-page.tsx"), "SignupPage"),
  });

  /**
   * `/auth/{provider}/callback` (spec 1 §2.1): a social provider sends the browser back here; the
   * page passes the query on to the API. Open to everyone (a re-authentication comes back signed in).
   */
  const socialCallbackRoute = createRoute({
    getParentRoute: () => root,
    path: "/auth/$provider/callback",
    component: page(() => import("./social-callback-page.tsx"), "SocialCallbackPage"),
  });

  const passwordResetRoute = createRoute({
    getParentRoute: () => root,
    path: "/password-reset",
    component: page(passwordResetPages, "PasswordResetPage"),
  });
  const passwordResetSuccessRoute = createRoute({
    getParentRoute: () => root,
    path: "/password-reset/success",
    component: page(passwordResetPages, "PasswordResetSuccessPage"),
  });
  const resetPasswordRoute = createRoute({
    getParentRoute: () => root,
    path: "/user/reset-password/$loginCode",
    component: page(passwordResetPages, "ResetPasswordPage"),
  });

  /** `/user/verify-email/{token}/{email}`: verifies, then /signup/profile; an error → the pending page. */
  const verifyEmailTokenRoute = createRoute({
    getParentRoute: () => root,
    path: "/user/verify-email/$token/$email",
    component: page(verifyEmailPages, "VerifyEmailTokenPage"),
  });

  return [
    loginRoute,
    twoFactorRoute,
    signupRoute,
    socialCallbackRoute,
    passwordResetRoute,
    passwordResetSuccessRoute,
    resetPasswordRoute,
    verifyEmailTokenRoute,
  ];
}

/** The pages for a signed-in user whose email may not be verified yet; no side menu. */
export function signedInRoutes(signedIn: SignedInRoute) {
  const verifyEmailPendingRoute = createRoute({
    getParentRoute: () => signedIn,
    path: "/user/verify-email/pending",
    staticData: { hideSidebar: true },
    validateSearch: (search: Record<string, unknown>): { error?: "invalid" | "issue" } =>
      search.error === "invalid" || search.error === "issue" ? { error: search.error } : {},
    component: page(verifyEmailPages, "VerifyEmailPendingPage"),
  });

  /** `/login/cli/*`: the command-line login handoff, for a signed-in user (spec 1 §2.3). */
  const cliLoginRoute = createRoute({
    getParentRoute: () => signedIn,
    path: "/login/cli/$",
    staticData: { hideSidebar: true },
    validateSearch: (search: Record<string, unknown>): { callback?: string } =>
      typeof search.callback === "string" ? { callback: search.callback } : {},
    component: page(() => import("./cli-login-page.tsx"), "CliLoginPage"),
  });

  /** `/login/oauth/{clientId}?state=`: an OAuth application asks for access (spec 1 §2.1, §2.3). */
  const oauthAuthorizeRoute = createRoute({
    getParentRoute: () => signedIn,
    path: "/login/oauth/$clientId",
    staticData: { hideSidebar: true },
    validateSearch: stringSearch("state"),
    component: page(handoffPages, "OAuthAuthorizePage"),
  });

  /** `/zendesk-login?return_to=`: the support portal's single sign-on (spec 1 §2.1). */
  const zendeskLoginRoute = createRoute({
    getParentRoute: () => signedIn,
    path: "/zendesk-login",
    staticData: { hideSidebar: true },
    validateSearch: stringSearch("return_to"),
    component: page(handoffPages, "ZendeskLoginPage"),
  });

  return [verifyEmailPendingRoute, cliLoginRoute, oauthAuthorizeRoute, zendeskLoginRoute];
}

/** `/signup/profile`: after the email is verified. */
export const signupProfileRoute = (verified: VerifiedRoute) =>
  createRoute({
    getParentRoute: () => verified,
    path: "/signup/profile",
    staticData: { hideSidebar: true },
    component: page(() => import("./signup-profile-page.tsx"), "SignupProfilePage"),
  });
