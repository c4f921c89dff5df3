import Box from "@mui/material/Box";
import CircularProgress from "@mui/material/CircularProgress";
import LinearProgress from "@mui/material/LinearProgress";
import type { QueryClient } from "@tanstack/react-query";
import {
  type AnyRoute,
  createRootRouteWithContext,
  createRoute,
  createRouter,
  type ErrorComponentProps,
  lazyRouteComponent,
  notFound,
  Outlet,
  redirect,
  useRouterState,
} from "@tanstack/react-router";
import { AppBanners } from "./components/banners.tsx";
import { ChangelogDialog } from "./components/changelog-dialog.tsx";
import { CookieBanner } from "./components/cookie-banner.tsx";
import { ErrorPage } from "./components/error-page.tsx";
import { NotFoundPage } from "./components/not-found-page.tsx";
import { Toaster } from "./components/toaster.tsx";
import { loggedOutOnlyGuard, signedInGuard, twoFactorGuard, verifiedGuard } from "./features/auth/guards.ts";
import { getSessionState, logOut } from "./features/auth/session.ts";
import { isAdmin, isSupportStaff } from "./features/auth/token.ts";
import { billingSearch } from "./features/billing/search.ts";
import { deploySearch } from "./features/deploy/deploy.ts";
import type { Fleet, fleetAbilities } from "./features/fleet-access/data.ts";
import { withChunkTimeout } from "./lib/chunk.ts";
import { loadFullCatalogue, t } from "./lib/i18n.ts";
import { setPreference } from "./lib/preferences.ts";
import { isNumericId, requireNumericId } from "./lib/route-id.ts";
import type { Sdk } from "./lib/sdk.ts";
import { showToast } from "./lib/toasts.ts";
import type { loadDevice, loadOrganization, loadRelease } from "./route-data.ts";

/**
 * The route table (spec 1 §2.1) and guards (§2.2). Code-based routes; every page is a lazily
 * loaded chunk that gives up after 120 s (spec 1 §9).
 */

export interface RouterContext {
  sdk: Sdk;
  queryClient: QueryClient;
}

export type CrumbKey =
  | "nav.fleets"
  | "nav.apps"
  | "nav.blocks"
  | "nav.organizations"
  | "nav.identity_provider"
  | "nav.members"
  | "nav.teams"
  | "nav.billing"
  | "nav.credits"
  | "nav.audit_log"
  | "nav.webhooks"
  | "nav.settings"
  | "nav.api_keys"
  | "nav.deploy"
  | "nav.devices"
  | "nav.actions"
  | "nav.location"
  | "nav.envvars"
  | "nav.config"
  | "nav.releases"
  | "nav.rollouts"
  | "nav.logs"
  | "nav.rollout"
  | "nav.commands"
  | "nav.command_run"
  | "nav.diagnostics"
  | "nav.admin"
  | "nav.users";

/** A breadcrumb named after the object a route shows (organization, member, team, fleet). */
export type CrumbObject = "org" | "member" | "team" | "fleet" | "device" | "release";

declare module "@tanstack/react-router" {
  interface Register {
    router: AppRouter;
  }
  interface StaticDataRouteOption {
    /** The breadcrumb of the route (an i18n key). */
    crumb?: CrumbKey;
    /** The breadcrumb is the name of this route's object instead of a fixed label. */
    crumbObject?: CrumbObject;
    /** The side menu is hidden on verify-email, signup/profile and preferences pages (spec 1 §2.5). */
    hideSidebar?: boolean;
  }
}

function RouteErrorPage({ error }: ErrorComponentProps) {
  return <ErrorPage error={error} />;
}

function PendingPage() {
  return (
    <Box sx={{ display: "grid", placeItems: "center", minHeight: 240, height: "100%" }}>
      <CircularProgress size={28} aria-label="Loading" />
    </Box>
  );
}

/** Progress bar while a navigation waits for its guard, data or chunk. */
function NavigationProgress() {
  const pending = useRouterState({ select: (state) => state.status === "pending" });
  return (
    <Box sx={{ position: "fixed", top: 0, left: 0, right: 0, zIndex: 2000, height: 2, pointerEvents: "none" }}>
      {pending ? <LinearProgress sx={{ height: 2 }} /> : null}
    </Box>
  );
}

function RootLayout() {
  return (
    <Box sx={{ height: "100dvh", display: "flex", flexDirection: "column" }}>
      <NavigationProgress />
      <AppBanners />
      {/* Toasts sit at the bottom of the page's area, above the cookie bar while it is shown. */}
      <Box sx={{ flex: 1, minHeight: 0, position: "relative" }}>
        <Box sx={{ height: "100%", overflow: "auto" }}>
          <Outlet />
        </Box>
        <Toaster />
      </Box>
      <CookieBanner />
      <ChangelogDialog />
    </Box>
  );
}

const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: RootLayout,
  errorComponent: RouteErrorPage,
  notFoundComponent: NotFoundPage,
});

/** `/` redirects to `/fleets` (spec 1 §2.1). */
const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/",
  beforeLoad: () => {
    throw redirect({ to: "/fleets" });
  },
});

/** The guards' data layer (route-data.ts), loaded by the first guard that needs it. */
const routeData = () => withChunkTimeout(import("./route-data.ts"));

const page = (load: () => Promise<Record<string, unknown>>, name: string) =>
  lazyRouteComponent(() => withChunkTimeout(load()), name);

const redirectSearch = (search: Record<string, unknown>): { redirect?: string } =>
  typeof search.redirect === "string" ? { redirect: search.redirect } : {};

/** `/login`: logged-out only; a signed-in visitor goes to `/` (spec 1 §2.2). */
const loginRoute = createRoute({
  getParentRoute: () => rootRoute,
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
  component: page(() => import("./features/auth/login-route.tsx"), "LoginPage"),
});

/** `/login/two-factor`: only with a token that waits for its second factor (spec 1 §2.2, §2.3). */
const twoFactorRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/login/two-factor",
  validateSearch: redirectSearch,
  beforeLoad: async ({ context }) => {
    const target = twoFactorGuard(await getSessionState(context.queryClient, context.sdk));
    if (target) throw redirect(target);
  },
  component: page(() => import("./features/auth/two-factor-page.tsx"), "TwoFactorPage"),
});

/** `/signup` (spec 1 §2.1): query email, redirect, saml_error, recaptcha_secret; logged-out only. */
const signupRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/signup",
  validateSearch: (
    search: Record<string, unknown>,
  ): { email?: string; redirect?: string; saml_error?: string; recaptcha_secret?: string } => {
    const out: { email?: string; redirect?: string; saml_error?: string; recaptcha_secret?: string } = {};
    for (const key of ["email", "redirect", "saml_error", "recaptcha_secret"] as const) {
      if (typeof search[key] === "string") out[key] = search[key];
    }
    return out;
  },
  beforeLoad: async ({ context }) => {
    const target = loggedOutOnlyGuard(await getSessionState(context.queryClient, context.sdk));
    if (target) throw redirect(target);
  },
  component: page(() => import("./features/auth/signup-page.tsx"), "SignupPage"),
});

const samlPages = () => import("./features/identity/saml-pages.tsx");
const stringSearch =
  <K extends string>(...keys: K[]) =>
  (search: Record<string, unknown>): Partial<Record<K, string>> => {
    const out: Partial<Record<K, string>> = {};
    for (const key of keys) if (typeof search[key] === "string") out[key] = search[key];
    return out;
  };

/**
 * Enterprise single sign-on (spec 1 §2.1): `/saml` asks for the SSO identifier,
 * `/saml/{ssoIdentifier}` sends the browser to the identity provider through the API, and the
 * API sends it back to `/saml/callback/signon` or, for an email that has an account already, to
 * the consent page `/saml/callback/merge`. Open to everyone: the merge page asks for a login itself.
 */
const samlRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/saml",
  validateSearch: stringSearch("saml_error", "sso"),
  component: page(samlPages, "SamlPage"),
});
const samlSignonRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/saml/callback/signon",
  validateSearch: stringSearch("code"),
  component: page(samlPages, "SamlSignonPage"),
});
const samlMergeRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/saml/callback/merge",
  validateSearch: stringSearch("code", "shouldMergeWith"),
  component: page(samlPages, "SamlMergePage"),
});
const samlRedirectRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/saml/$ssoIdentifier",
  component: page(samlPages, "SamlRedirectPage"),
});

/**
 * `/auth/{provider}/callback` (spec 1 §2.1): a social provider sends the browser back here; the
 * page passes the query on to the API. Open to everyone (a re-authentication comes back signed in).
 */
const socialCallbackRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/auth/$provider/callback",
  component: page(() => import("./features/auth/social-callback-page.tsx"), "SocialCallbackPage"),
});

const passwordResetRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/password-reset",
  component: page(() => import("./features/auth/password-reset-pages.tsx"), "PasswordResetPage"),
});

const passwordResetSuccessRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/password-reset/success",
  component: page(() => import("./features/auth/password-reset-pages.tsx"), "PasswordResetSuccessPage"),
});

const resetPasswordRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/user/reset-password/$loginCode",
  component: page(() => import("./features/auth/password-reset-pages.tsx"), "ResetPasswordPage"),
});

/** `/user/verify-email/{token}/{email}`: verifies, then /signup/profile; an error → the pending page. */
const verifyEmailTokenRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/user/verify-email/$token/$email",
  component: page(() => import("./features/auth/verify-email-pages.tsx"), "VerifyEmailTokenPage"),
});

/**
 * Everything below needs a session: signed-out users go to `/login?redirect=<path>`, a pending
 * second factor to `/login/two-factor` (spec 1 §2.2).
 */
const signedInRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: "signed-in",
  beforeLoad: async ({ context, location }) => {
    // The signed-in pages' texts (devices, fleets, releases…) come after the login page's.
    const [state] = await Promise.all([getSessionState(context.queryClient, context.sdk), loadFullCatalogue()]);
    const target = signedInGuard(state, location.href);
    if (state.kind === "signed-out" && state.rejected) {
      // The stored token no longer works: say so, forget it (spec 1 §8), not a silent login page.
      showToast("error", t("errors.session_expired"));
      await logOut(context.queryClient, context.sdk);
    }
    if (target) throw redirect(target);
  },
  component: page(() => import("./components/app-layout.tsx"), "AppLayout"),
});

const verifyEmailPendingRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "/user/verify-email/pending",
  staticData: { hideSidebar: true },
  validateSearch: (search: Record<string, unknown>): { error?: "invalid" | "issue" } =>
    search.error === "invalid" || search.error === "issue" ? { error: search.error } : {},
  component: page(() => import("./features/auth/verify-email-pages.tsx"), "VerifyEmailPendingPage"),
});

/** `/login/cli/*`: the command-line login handoff, for a signed-in user (spec 1 §2.3). */
const cliLoginRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "/login/cli/$",
  staticData: { hideSidebar: true },
  validateSearch: (search: Record<string, unknown>): { callback?: string } =>
    typeof search.callback === "string" ? { callback: search.callback } : {},
  component: page(() => import("./features/auth/cli-login-page.tsx"), "CliLoginPage"),
});

const handoffPages = () => import("./features/auth/handoff-pages.tsx");

/** `/login/oauth/{clientId}?state=`: an OAuth application asks for access (spec 1 §2.1, §2.3). */
const oauthAuthorizeRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "/login/oauth/$clientId",
  staticData: { hideSidebar: true },
  validateSearch: stringSearch("state"),
  component: page(handoffPages, "OAuthAuthorizePage"),
});

/** `/zendesk-login?return_to=`: the support portal's single sign-on (spec 1 §2.1). */
const zendeskLoginRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "/zendesk-login",
  staticData: { hideSidebar: true },
  validateSearch: stringSearch("return_to"),
  component: page(handoffPages, "ZendeskLoginPage"),
});

/** Pages that need a verified email when verification is required (spec 1 §2.2). */
const verifiedRoute = createRoute({
  getParentRoute: () => signedInRoute,
  id: "verified",
  beforeLoad: async ({ context }) => {
    const target = verifiedGuard(await getSessionState(context.queryClient, context.sdk));
    if (target) throw redirect(target);
  },
});

const signupProfileRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/signup/profile",
  staticData: { hideSidebar: true },
  component: page(() => import("./features/auth/signup-profile-page.tsx"), "SignupProfilePage"),
});

const preferencesRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/preferences",
  staticData: { hideSidebar: true },
  component: page(() => import("./features/preferences/preferences-layout.tsx"), "PreferencesLayout"),
});

const preferencesIndexRoute = createRoute({
  getParentRoute: () => preferencesRoute,
  path: "/",
  beforeLoad: () => {
    throw redirect({ to: "/preferences/details", replace: true });
  },
});

const detailsPreferencesRoute = createRoute({
  getParentRoute: () => preferencesRoute,
  path: "details",
  component: page(() => import("./features/preferences/details-page.tsx"), "DetailsPreferencesPage"),
});
const profilePreferencesRoute = createRoute({
  getParentRoute: () => preferencesRoute,
  path: "profile",
  component: page(() => import("./features/preferences/profile-page.tsx"), "ProfilePreferencesPage"),
});
const sshKeysPreferencesRoute = createRoute({
  getParentRoute: () => preferencesRoute,
  path: "sshkeys",
  component: page(() => import("./features/preferences/sshkeys-page.tsx"), "SshKeysPreferencesPage"),
});
const accessTokensPreferencesRoute = createRoute({
  getParentRoute: () => preferencesRoute,
  path: "access-tokens",
  component: page(() => import("./features/preferences/access-tokens-page.tsx"), "AccessTokensPreferencesPage"),
});
const twoFactorPreferencesRoute = createRoute({
  getParentRoute: () => preferencesRoute,
  path: "2fa",
  component: page(() => import("./features/preferences/two-factor-page.tsx"), "TwoFactorPreferencesPage"),
});
const experimentalPreferencesRoute = createRoute({
  getParentRoute: () => preferencesRoute,
  path: "experimental",
  component: page(() => import("./features/preferences/experimental-page.tsx"), "ExperimentalPreferencesPage"),
});

const fleetsRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/fleets",
  staticData: { crumb: "nav.fleets" },
});

const appsRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/apps",
  staticData: { crumb: "nav.apps" },
});

const blocksRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/blocks",
  staticData: { crumb: "nav.blocks" },
});

const orgsRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/orgs",
  staticData: { crumb: "nav.organizations" },
});

const orgs = () => import("./features/orgs/org-pages.tsx");
const members = () => import("./features/orgs/members-pages.tsx");
const teams = () => import("./features/orgs/teams-pages.tsx");
const fleetPages = () => import("./features/fleet-access/fleet-pages.tsx");
const fleetSummary = () => import("./features/fleets/summary-page.tsx");
const fleetSettings = () => import("./features/fleets/settings-page.tsx");
const fleetApiKeys = () => import("./features/fleets/api-keys-page.tsx");
const rolloutPages = () => import("./features/rollouts/rollout-page.tsx");
const commandPages = {
  list: () => import("./features/commands/list-page.tsx"),
  run: () => import("./features/commands/run-page.tsx"),
};
const fleetDevices = () => import("./features/devices/devices-page.tsx");
const variablePages = () => import("./features/variables/pages.tsx");
const releasePages = {
  list: () => import("./features/releases/list-page.tsx"),
  summary: () => import("./features/releases/summary-page.tsx"),
  settings: () => import("./features/releases/settings-page.tsx"),
};

const orgsIndexRoute = createRoute({
  getParentRoute: () => orgsRoute,
  path: "/",
  component: page(() => import("./features/orgs/orgs-page.tsx"), "OrgsPage"),
});

/**
 * A frozen organization (spec 3 §2 Billing, §8): outside its billing page, a user with billing
 * access goes to the billing page ("update billing details"), anyone else to `/orgs` ("please
 * reach its administrators").
 */
async function frozenOrganizationGuard(context: RouterContext, orgId: number, pathname: string, preload: boolean) {
  const billing = `/orgs/${orgId}/billing`;
  if (pathname === billing || pathname.startsWith(`${billing}/`)) return;
  const session = await getSessionState(context.queryClient, context.sdk);
  let canBill = false;
  if (session.kind === "signed-in") {
    const { loadMyOrgRole, organizationCan } = await routeData();
    const role = await loadMyOrgRole(context.queryClient, context.sdk, orgId, session.user.id).catch(() => null);
    canBill = organizationCan(role ?? undefined, "organization", "access_billing");
  }
  if (canBill) {
    if (!preload) showToast("error", t("errors.organization_is_frozen_update_billing_details"));
    throw redirect({ href: billing, replace: true });
  }
  if (!preload) showToast("error", t("errors.organization_is_frozen_please_reach_administrators"));
  throw redirect({ to: "/orgs", replace: true });
}

/**
 * `/orgs/{orgId}/…` (spec 3 §2): a non-numeric id shows "invalid id passed in url" and goes up;
 * an organization that is not there (or not the caller's) is "Resource not found" and `/orgs`,
 * as a missing fleet goes to `/fleets`.
 */
const orgRoute = createRoute({
  getParentRoute: () => orgsRoute,
  path: "$orgId",
  staticData: { crumbObject: "org" },
  beforeLoad: async ({ params, location, context, preload }) => {
    const id = requireNumericId(params.orgId, location.pathname.replace(/(\/orgs\/[^/]+).*$/, "$1"));
    let org: Awaited<ReturnType<typeof loadOrganization>>;
    try {
      org = await (await routeData()).loadOrganization(context.queryClient, context.sdk, id);
    } catch {
      // A failed lookup (network, server) is the page's to report; no redirect on a guess.
      return;
    }
    if (!org) {
      showToast("error", t("errors.resource_not_found"));
      throw redirect({ to: "/orgs", replace: true });
    }
    // The organization the user works in: the create-fleet dialog starts with it.
    if (!preload) setPreference("lastOrganization", org.id);
    if (org.is_frozen) await frozenOrganizationGuard(context, org.id, location.pathname, preload);
  },
  component: page(() => import("./features/billing/past-due.tsx"), "OrgLayout"),
});
const orgSummaryRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: "/",
  component: page(orgs, "OrgSummaryPage"),
});
const orgFleetsRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: "fleets",
  staticData: { crumb: "nav.fleets" },
  component: page(orgs, "OrgFleetsPage"),
});
const orgAppsRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: "apps",
  staticData: { crumb: "nav.apps" },
  component: page(orgs, "OrgAppsPage"),
});
const orgBlocksRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: "blocks",
  staticData: { crumb: "nav.blocks" },
  component: page(orgs, "OrgBlocksPage"),
});
/**
 * The billing pages' guard: only with organization.access_billing (the permission table of
 * packages/domain), otherwise `/` (spec 1 §2.2; spec 3 §2 Organizations).
 */
async function billingAccessGuard({
  params,
  context,
  preload,
}: {
  params: { orgId: string };
  context: RouterContext;
  preload?: boolean;
}) {
  const session = await getSessionState(context.queryClient, context.sdk);
  if (session.kind !== "signed-in") return;
  const { loadMyOrgRole, organizationCan } = await routeData();
  let role: Awaited<ReturnType<typeof loadMyOrgRole>>;
  try {
    role = await loadMyOrgRole(context.queryClient, context.sdk, Number(params.orgId), session.user.id);
  } catch {
    // A failed lookup is the page's to report; no redirect on a guess.
    return;
  }
  if (!organizationCan(role ?? undefined, "organization", "access_billing")) {
    // Non-administrators are told whom to ask (spec 3 §6).
    if (!preload) showToast("info", t("billing.administrators_only"));
    throw redirect({ to: "/", replace: true });
  }
}

/** `/orgs/{orgId}/billing` (spec 3 §2 Billing): billing access only; reachable when frozen. */
const orgBillingRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: "billing",
  staticData: { crumb: "nav.billing" },
  validateSearch: billingSearch,
  beforeLoad: billingAccessGuard,
  component: page(() => import("./features/billing/billing-page.tsx"), "BillingPage"),
});
/** `/orgs/{orgId}/credits` (spec 3 §2 Billing, §4 Credits): billing access only. */
const orgCreditsRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: "credits",
  staticData: { crumb: "nav.credits" },
  beforeLoad: billingAccessGuard,
  component: page(() => import("./features/billing/credits-page.tsx"), "CreditsPage"),
});
/**
 * The audit log and webhook pages (docs/audit-and-webhooks.md) are the administrators': anyone
 * else gets the not-found page, as the server answers them 403/404.
 */
function orgPermissionGuard(action: "read_audit_log" | "manage_webhooks") {
  return async ({ params, context }: { params: { orgId: string }; context: RouterContext }) => {
    const session = await getSessionState(context.queryClient, context.sdk);
    if (session.kind !== "signed-in") return;
    const { loadMyOrgRole, organizationCan } = await routeData();
    let role: Awaited<ReturnType<typeof loadMyOrgRole>>;
    try {
      role = await loadMyOrgRole(context.queryClient, context.sdk, Number(params.orgId), session.user.id);
    } catch {
      // A failed lookup is the page's to report; no verdict on a guess.
      return;
    }
    if (!organizationCan(role ?? undefined, "organization", action)) throw notFound();
  };
}
/** `/orgs/{orgId}/audit`: the organization's audit log. */
const orgAuditRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: "audit",
  staticData: { crumb: "nav.audit_log" },
  beforeLoad: orgPermissionGuard("read_audit_log"),
  component: page(() => import("./features/audit/audit-page.tsx"), "AuditLogPage"),
});
/** `/orgs/{orgId}/webhooks`: the organization's webhooks and their delivery logs. */
const orgWebhooksRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: "webhooks",
  staticData: { crumb: "nav.webhooks" },
  beforeLoad: orgPermissionGuard("manage_webhooks"),
  component: page(() => import("./features/webhooks/webhooks-page.tsx"), "WebhooksPage"),
});
const orgMembersRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: "members",
  staticData: { crumb: "nav.members" },
});
const orgMembersIndexRoute = createRoute({
  getParentRoute: () => orgMembersRoute,
  path: "/",
  component: page(members, "MembersPage"),
});
const memberRoute = createRoute({
  getParentRoute: () => orgMembersRoute,
  path: "$memberId",
  staticData: { crumbObject: "member" },
  beforeLoad: ({ params, location }) => {
    requireNumericId(params.memberId, location.pathname.replace(/(\/members\/[^/]+).*$/, "$1"));
  },
});
const memberSummaryRoute = createRoute({
  getParentRoute: () => memberRoute,
  path: "/",
  component: page(members, "MemberPage"),
});
const memberTeamsRoute = createRoute({
  getParentRoute: () => memberRoute,
  path: "teams",
  staticData: { crumb: "nav.teams" },
  component: page(members, "MemberTeamsPage"),
});
const memberFleetsRoute = createRoute({
  getParentRoute: () => memberRoute,
  path: "fleets",
  staticData: { crumb: "nav.fleets" },
  component: page(members, "MemberFleetsPage"),
});
const memberAppsRoute = createRoute({
  getParentRoute: () => memberRoute,
  path: "apps",
  staticData: { crumb: "nav.apps" },
  component: page(members, "MemberAppsPage"),
});
const memberBlocksRoute = createRoute({
  getParentRoute: () => memberRoute,
  path: "blocks",
  staticData: { crumb: "nav.blocks" },
  component: page(members, "MemberBlocksPage"),
});
const orgTeamsRoute = createRoute({
  getParentRoute: () => orgRoute,
  path: "teams",
  staticData: { crumb: "nav.teams" },
});
const orgTeamsIndexRoute = createRoute({
  getParentRoute: () => orgTeamsRoute,
  path: "/",
  component: page(teams, "TeamsPage"),
});
const teamRoute = createRoute({
  getParentRoute: () => orgTeamsRoute,
  path: "$teamId",
  staticData: { crumbObject: "team" },
  beforeLoad: ({ params, location }) => {
    requireNumericId(params.teamId, location.pathname.replace(/(\/teams\/[^/]+).*$/, "$1"));
  },
});
const teamSummaryRoute = createRoute({
  getParentRoute: () => teamRoute,
  path: "/",
  component: page(teams, "TeamPage"),
});
const teamMembersRoute = createRoute({
  getParentRoute: () => teamRoute,
  path: "members",
  staticData: { crumb: "nav.members" },
  component: page(teams, "TeamMembersPage"),
});
const teamFleetsRoute = createRoute({
  getParentRoute: () => teamRoute,
  path: "fleets",
  staticData: { crumb: "nav.fleets" },
  component: page(teams, "TeamFleetsPage"),
});
const teamAppsRoute = createRoute({
  getParentRoute: () => teamRoute,
  path: "apps",
  staticData: { crumb: "nav.apps" },
  component: page(teams, "TeamAppsPage"),
});
const teamBlocksRoute = createRoute({
  getParentRoute: () => teamRoute,
  path: "blocks",
  staticData: { crumb: "nav.blocks" },
  component: page(teams, "TeamBlocksPage"),
});

/**
 * `/identity-provider` (spec 3 §2 Identity provider): the provider the user administers, else
 * an introduction; `/identity-provider/{id}`: a non-numeric id is "invalid id passed in url", a
 * provider that is not there (or not the user's to manage) errors.no_idp_found; both go back
 * to `/identity-provider`.
 */
const identityData = () => withChunkTimeout(import("./features/identity/data.ts"));
const identityPages = () => import("./features/identity/idp-pages.tsx");
const identityProviderRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/identity-provider",
  staticData: { crumb: "nav.identity_provider" },
});
const identityProviderIndexRoute = createRoute({
  getParentRoute: () => identityProviderRoute,
  path: "/",
  beforeLoad: async ({ context }) => {
    let id: number | undefined;
    try {
      id = await (await identityData()).loadAdministeredProvider(context.queryClient, context.sdk);
    } catch {
      // A failed lookup: the introduction, whose own reads report the failure.
      return;
    }
    if (id !== undefined) throw redirect({ href: `/identity-provider/${id}`, replace: true });
  },
  component: page(identityPages, "IdentityProviderIntroPage"),
});
const identityProviderDetailRoute = createRoute({
  getParentRoute: () => identityProviderRoute,
  path: "$idpId",
  beforeLoad: async ({ params, context, preload }) => {
    const id = requireNumericId(params.idpId, `/identity-provider/${params.idpId}`);
    let found: unknown;
    try {
      found = await (await identityData()).loadIdentityProvider(context.queryClient, context.sdk, id);
    } catch {
      return;
    }
    if (!found) {
      if (!preload) showToast("error", t("errors.no_idp_found"));
      throw redirect({ to: "/identity-provider", replace: true });
    }
  },
  component: page(identityPages, "IdentityProviderPage"),
});

/**
 * `/support`: the platform staff's support inbox (balena_admin, support_agent); anybody else gets
 * the not-found page, as for a path that is not there.
 */
const supportPages = () => import("./features/support/inbox-page.tsx");
const supportInboxRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/support",
  // `?ticket={id}` opens that ticket (the staff mails link there).
  validateSearch: (search: Record<string, unknown>): { ticket?: number } => {
    const ticket = typeof search.ticket === "number" ? String(search.ticket) : search.ticket;
    return typeof ticket === "string" && isNumericId(ticket) ? { ticket: Number(ticket) } : {};
  },
  beforeLoad: async ({ context }) => {
    const session = await getSessionState(context.queryClient, context.sdk);
    if (session.kind !== "signed-in" || !isSupportStaff(session.claims)) throw notFound();
  },
  component: page(supportPages, "SupportInboxPage"),
});
/** `/audit`: every organization's audit log, for platform administrators; anybody else gets the not-found page. */
const platformAuditRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/audit",
  beforeLoad: async ({ context }) => {
    const session = await getSessionState(context.queryClient, context.sdk);
    if (session.kind !== "signed-in" || !isAdmin(session.claims)) throw notFound();
  },
  component: page(() => import("./features/audit/audit-page.tsx"), "PlatformAuditLogPage"),
});
/**
 * `/admin`: platform administration (docs/support.md "Platform staff"), for platform administrators
 * (`balena_admin`); anybody else gets the not-found page. `/admin` itself shows Admin → Users.
 */
const adminRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/admin",
  staticData: { crumb: "nav.admin" },
  beforeLoad: async ({ context }) => {
    const session = await getSessionState(context.queryClient, context.sdk);
    if (session.kind !== "signed-in" || !isAdmin(session.claims)) throw notFound();
  },
});
const adminIndexRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: "/",
  beforeLoad: () => {
    throw redirect({ to: "/admin/users", replace: true });
  },
});
const adminUsersRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: "users",
  staticData: { crumb: "nav.users" },
  component: page(() => import("./features/admin/users-page.tsx"), "AdminUsersPage"),
});
/** `/support/tickets/{id}`: a ticket, where the reply e-mails link to (signed-out: log in, then back). */
const supportTicketRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/support/tickets/$ticketId",
  beforeLoad: ({ params }) => {
    if (!isNumericId(params.ticketId)) throw notFound();
  },
  component: page(() => import("./features/support/ticket-page.tsx"), "SupportTicketPage"),
});

/** Invitation links (spec 1 §2.1): signed-out visitors log in (or sign up) and come back here. */
const organizationInvitationRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/organization/invitation/$token",
  component: page(() => import("./features/orgs/invitation-page.tsx"), "OrganizationInvitationPage"),
});
const fleetInvitationRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/invitation/$token",
  component: page(() => import("./features/orgs/invitation-page.tsx"), "FleetInvitationPage"),
});

/**
 * A fleet or device the viewer cannot load; platform staff are told why they may not see it (spec 2
 * §6 "Other rules": an error when an admin views one without support access).
 */
async function notFoundToast(context: RouterContext, kind: "fleet" | "device", text: string, id: string | number) {
  const session = await getSessionState(context.queryClient, context.sdk).catch(() => undefined);
  const staff = session?.kind === "signed-in" && isSupportStaff(session.claims);
  showToast("error", staff ? t(`support_access_banner.not_found_${kind}`, { id }) : text);
}

type ClassPrefix = "fleets" | "apps" | "blocks";
/** The pages only a fleet has (spec 2 §2). */
const FLEET_ONLY_PAGES = ["devices", "envvars", "config", "api-keys"] as const;
const CLASS_PREFIX: Record<Fleet["is_of__class"], ClassPrefix> = { fleet: "fleets", app: "apps", block: "blocks" };

/**
 * The guards of spec 2 §2 for `/{fleets|apps|blocks}/{id}/…`: a missing fleet → `/fleets` (with
 * "Fleet not found: {id}"), a frozen organization → `/orgs/{orgId}`, a path whose class prefix is
 * not the application's → the same path under the right prefix.
 */
async function guardFleet(
  context: RouterContext,
  id: number,
  pathname: string,
  preload = false,
): Promise<Fleet | undefined> {
  let fleet: Fleet | null;
  const data = await routeData();
  try {
    fleet = await data.loadFleet(context.queryClient, context.sdk, id);
  } catch {
    // A failed lookup (network, server) is the page's to report; no redirect on a guess.
    return undefined;
  }
  if (!fleet) {
    await notFoundToast(context, "fleet", t("errors.fleet_not_found", { application: id }), id);
    throw redirect({ to: "/fleets", replace: true });
  }
  const org = fleet.organization[0];
  // The organization the user works in (not one whose link was only hovered): create-fleet starts there.
  if (org && !preload) setPreference("lastOrganization", org.id);
  if (org?.is_frozen) throw redirect({ href: `/orgs/${org.id}`, replace: true });
  const prefix = CLASS_PREFIX[fleet.is_of__class];
  // Supervisor and OS release pages are reached through /apps/{appId}/releases/{releaseId} (spec 2 §2):
  // the host OS and supervisor fleets of the OS catalogue stay under /apps/.
  const osCatalogueRelease = data.isOsCatalogueFleet(fleet) && /^\/apps\/[^/]+\/releases(\/|$)/.test(pathname);
  if (!osCatalogueRelease && !pathname.startsWith(`/${prefix}/`)) {
    throw redirect({ href: pathname.replace(/^\/[a-z]+\//, `/${prefix}/`), replace: true });
  }
  return fleet;
}

/**
 * The fleet (app, block) detail routes (spec 2 §2): summary, settings (application.update, else
 * `/`), api-keys for fleets (api_key.read, else `/`), members and teams.
 */
function applicationRoutes(parent: typeof fleetsRoute | typeof appsRoute | typeof blocksRoute, prefix: ClassPrefix) {
  const base = createRoute({
    getParentRoute: () => parent,
    path: "$fleetId",
    staticData: { crumbObject: "fleet" },
    beforeLoad: async ({ params, location, context, preload }) => {
      const id = requireNumericId(params.fleetId, location.pathname.replace(/^(\/[a-z]+\/[^/]+).*$/, "$1"));
      await guardFleet(context, id, location.pathname, preload);
    },
    // The organization's past-due banner above the fleet's pages (spec 3 §4).
    component: page(() => import("./features/billing/past-due.tsx"), "FleetLayout"),
  });
  const gated =
    (check: (abilities: ReturnType<typeof fleetAbilities>) => boolean) =>
    async ({ params, context }: { params: { fleetId: string }; context: RouterContext }) => {
      const { loadFleet, fleetAbilities } = await routeData();
      const fleet = await loadFleet(context.queryClient, context.sdk, Number(params.fleetId)).catch(() => undefined);
      if (fleet && !check(fleetAbilities(fleet))) throw redirect({ to: "/", replace: true });
    };
  const releases = createRoute({
    getParentRoute: () => base,
    path: "releases",
    staticData: { crumb: "nav.releases" },
  });
  /**
   * `…/releases/{releaseId}` (spec 2 §2): a non-numeric id shows "invalid id passed in url" and
   * goes up to the list; a release the fleet does not have is "Release not found: {release}".
   */
  const release = createRoute({
    getParentRoute: () => releases,
    path: "$releaseId",
    staticData: { crumbObject: "release" },
    beforeLoad: async ({ params, location, context }) => {
      const list = location.pathname.replace(/(\/releases)\/.*$/, "$1");
      const data = await routeData();
      // A commit prefix names the release when it is unique in the fleet (spec 2 §8).
      if (data.isCommitPrefix(params.releaseId)) {
        const found = await data
          .resolveCommitPrefix(context.sdk, Number(params.fleetId), params.releaseId)
          .catch(() => undefined);
        if (typeof found === "number") {
          throw redirect({
            href: location.href.replace(`/releases/${params.releaseId}`, `/releases/${found}`),
            replace: true,
          });
        }
        showToast(
          "error",
          found === "ambiguous"
            ? t("errors.release_ambiguous")
            : t("errors.release_not_found", { release: params.releaseId }),
        );
        throw redirect({ href: list, replace: true });
      }
      const releaseId = requireNumericId(params.releaseId, `${list}/${params.releaseId}`);
      let found: Awaited<ReturnType<typeof loadRelease>>;
      try {
        found = await (await routeData()).loadRelease(
          context.queryClient,
          context.sdk,
          Number(params.fleetId),
          releaseId,
        );
      } catch {
        return;
      }
      if (!found) {
        showToast("error", t("errors.release_not_found", { release: params.releaseId }));
        throw redirect({ href: list, replace: true });
      }
    },
  });
  // Typed as the bare "releases" route: the full subtree, three times over, makes the route
  // tree's type too large for tsc to emit. Release links are built as strings anyway.
  const releaseTree = releases.addChildren([
    createRoute({ getParentRoute: () => releases, path: "/", component: page(releasePages.list, "FleetReleasesPage") }),
    release.addChildren([
      createRoute({
        getParentRoute: () => release,
        path: "/",
        component: page(releasePages.summary, "ReleaseSummaryPage"),
      }),
      createRoute({
        getParentRoute: () => release,
        path: "settings",
        staticData: { crumb: "nav.settings" },
        // Release settings need resin.release.update, else `/` (spec 1 §2.2).
        beforeLoad: async ({ params, context }) => {
          const { loadFleet, releaseAbilities } = await routeData();
          const fleet = await loadFleet(context.queryClient, context.sdk, Number(params.fleetId)).catch(
            () => undefined,
          );
          if (fleet && !releaseAbilities(fleet.user_access_roles).update) throw redirect({ to: "/", replace: true });
        },
        component: page(releasePages.settings, "ReleaseSettingsPage"),
      }),
    ]),
  ]) as unknown as typeof releases;
  const rollouts = createRoute({
    getParentRoute: () => base,
    path: "rollouts",
    staticData: { crumb: "nav.rollouts" },
  });
  // Typed as the bare "rollouts" route, as the releases above: the route tree's type is at its limit.
  const rolloutTree = rollouts.addChildren([
    createRoute({ getParentRoute: () => rollouts, path: "/", component: page(rolloutPages, "FleetRolloutsPage") }),
    createRoute({
      getParentRoute: () => rollouts,
      path: "$rolloutId",
      staticData: { crumb: "nav.rollout" },
      beforeLoad: ({ params, location }) => {
        requireNumericId(params.rolloutId, location.pathname.replace(/\/rollouts\/.*$/, "/rollouts"));
      },
      component: page(rolloutPages, "RolloutPage"),
    }),
  ]) as unknown as AnyRoute;
  const commands = createRoute({
    getParentRoute: () => base,
    path: "commands",
    staticData: { crumb: "nav.commands" },
  });
  // Bulk commands (docs/bulk-commands.md), typed as a bare route as the rollouts above.
  const commandTree = commands.addChildren([
    createRoute({ getParentRoute: () => commands, path: "/", component: page(commandPages.list, "FleetCommandsPage") }),
    createRoute({
      getParentRoute: () => commands,
      path: "$runId",
      staticData: { crumb: "nav.command_run" },
      beforeLoad: ({ params, location }) => {
        requireNumericId(params.runId, location.pathname.replace(/\/commands\/.*$/, "/commands"));
      },
      component: page(commandPages.run, "CommandRunPage"),
    }),
  ]) as unknown as AnyRoute;
  return base.addChildren([
    createRoute({ getParentRoute: () => base, path: "/", component: page(fleetSummary, "FleetSummaryPage") }),
    releaseTree,
    createRoute({
      getParentRoute: () => base,
      path: "members",
      staticData: { crumb: "nav.members" },
      component: page(fleetPages, "FleetMembersPage"),
    }),
    createRoute({
      getParentRoute: () => base,
      path: "teams",
      staticData: { crumb: "nav.teams" },
      component: page(fleetPages, "FleetTeamsPage"),
    }),
    createRoute({
      getParentRoute: () => base,
      path: "settings",
      staticData: { crumb: "nav.settings" },
      beforeLoad: gated((abilities) => abilities.update),
      component: page(fleetSettings, "FleetSettingsPage"),
    }),
    ...(prefix === "fleets"
      ? [
          createRoute({
            getParentRoute: () => base,
            path: "devices",
            staticData: { crumb: "nav.devices" },
            validateSearch: (search: Record<string, unknown>): { filter?: string } =>
              typeof search.filter === "string" && search.filter !== "" ? { filter: search.filter } : {},
            component: page(fleetDevices, "FleetDevicesPage"),
          }),
          rolloutTree,
          commandTree,
          // Typed loosely, as the rollouts above: the route tree's type is at its limit.
          createRoute({
            getParentRoute: () => base,
            path: "logs",
            staticData: { crumb: "nav.logs" },
            component: page(() => import("./features/devices/logs/fleet-logs-page.tsx"), "FleetLogsPage"),
          }) as unknown as AnyRoute,
          createRoute({
            getParentRoute: () => base,
            path: "envvars",
            staticData: { crumb: "nav.envvars" },
            component: page(variablePages, "FleetEnvVarsPage"),
          }),
          createRoute({
            getParentRoute: () => base,
            path: "config",
            staticData: { crumb: "nav.config" },
            component: page(variablePages, "FleetConfigPage"),
          }),
          createRoute({
            getParentRoute: () => base,
            path: "api-keys",
            staticData: { crumb: "nav.api_keys" },
            beforeLoad: gated((abilities) => abilities.apiKeys),
            component: page(fleetApiKeys, "FleetApiKeysPage"),
          }),
        ]
      : // An app or a block has no devices, variables, configuration or API keys of its own:
        // those addresses are "Resource not found" and lead to its summary.
        FLEET_ONLY_PAGES.map((path) =>
          createRoute({
            getParentRoute: () => base,
            path,
            beforeLoad: ({ params }) => {
              showToast("error", t("errors.resource_not_found"));
              throw redirect({ href: `/${prefix}/${params.fleetId}`, replace: true });
            },
          }),
        )),
  ]);
}

/**
 * `/devices/{uuid}` (spec 2 §2): a missing device goes to `/` ("Device not found: {uuid}"), a
 * frozen one to its fleet; summary, actions, settings (hidden for observers), location and diagnostics.
 */
const deviceRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/devices/$uuid",
  staticData: { crumbObject: "device" },
  beforeLoad: async ({ params, context, location }) => {
    let device: Awaited<ReturnType<typeof loadDevice>>;
    const data = await routeData();
    try {
      device = await data.loadDevice(context.queryClient, context.sdk, params.uuid);
    } catch {
      return;
    }
    if (!device) {
      // A short uuid names the device when it is unique (spec 2 §8 "Device is ambiguous: {device}").
      const found = await data.resolveShortUuid(context.sdk, params.uuid).catch(() => undefined);
      if (found === "ambiguous") {
        showToast("error", t("errors.device_ambiguous", { device: params.uuid }));
        throw redirect({ to: "/", replace: true });
      }
      if (found) {
        throw redirect({
          href: location.href.replace(`/devices/${params.uuid}`, `/devices/${found}`),
          replace: true,
        });
      }
      await notFoundToast(context, "device", t("errors.device_not_found", { device: params.uuid }), params.uuid);
      throw redirect({ to: "/", replace: true });
    }
    const fleetId = device.belongs_to__application[0]?.id;
    if (device.is_frozen && fleetId !== undefined) {
      throw redirect({ href: `/fleets/${fleetId}`, replace: true });
    }
  },
  // The organization's past-due banner above the device's pages (spec 3 §4).
  component: page(() => import("./features/billing/past-due.tsx"), "DeviceLayout"),
});
const devicePages = {
  summary: () => import("./features/devices/summary-page.tsx"),
  actions: () => import("./features/devices/actions-page.tsx"),
  settings: () => import("./features/devices/settings-page.tsx"),
  location: () => import("./features/devices/location-page.tsx"),
  diagnostics: () => import("./features/devices/diagnostics-page.tsx"),
};
const deviceChildren = [
  createRoute({
    getParentRoute: () => deviceRoute,
    path: "/",
    component: page(devicePages.summary, "DeviceSummaryPage"),
  }),
  createRoute({
    getParentRoute: () => deviceRoute,
    path: "envvars",
    staticData: { crumb: "nav.envvars" },
    component: page(variablePages, "DeviceEnvVarsPage"),
  }),
  createRoute({
    getParentRoute: () => deviceRoute,
    path: "config",
    staticData: { crumb: "nav.config" },
    component: page(variablePages, "DeviceConfigPage"),
  }),
  createRoute({
    getParentRoute: () => deviceRoute,
    path: "actions",
    staticData: { crumb: "nav.actions" },
    component: page(devicePages.actions, "DeviceActionsPage"),
  }),
  createRoute({
    getParentRoute: () => deviceRoute,
    path: "settings",
    staticData: { crumb: "nav.settings" },
    beforeLoad: async ({ params, context }) => {
      const { loadDevice, deviceAbilities } = await routeData();
      const device = await loadDevice(context.queryClient, context.sdk, params.uuid).catch(() => undefined);
      if (device && !deviceAbilities(device.belongs_to__application[0]?.user_access_roles).settings) {
        throw redirect({ to: "/", replace: true });
      }
    },
    component: page(devicePages.settings, "DeviceSettingsPage"),
  }),
  createRoute({
    getParentRoute: () => deviceRoute,
    path: "location",
    staticData: { crumb: "nav.location" },
    component: page(devicePages.location, "DeviceLocationPage"),
  }),
  createRoute({
    getParentRoute: () => deviceRoute,
    path: "diagnostics",
    staticData: { crumb: "nav.diagnostics" },
    // Without resin.device.access_diagnostics the page is not there (spec 1 §2.2).
    beforeLoad: async ({ params, context }) => {
      const { loadDevice, deviceAbilities } = await routeData();
      const device = await loadDevice(context.queryClient, context.sdk, params.uuid).catch(() => undefined);
      if (device && !deviceAbilities(device.belongs_to__application[0]?.user_access_roles).diagnostics) {
        throw redirect({ to: "/", replace: true });
      }
    },
    component: page(devicePages.diagnostics, "DeviceDiagnosticsPage"),
  }),
];

/** `/deploy` (spec 2 §2): deploy with a button; reads tarballUrl, repoUrl, configUrl, defaultDeviceType. */
const deployRoute = createRoute({
  getParentRoute: () => verifiedRoute,
  path: "/deploy",
  staticData: { crumb: "nav.deploy" },
  validateSearch: deploySearch,
  component: page(() => import("./features/deploy/deploy-page.tsx"), "DeployPage"),
});

const fleetsIndexRoute = createRoute({
  getParentRoute: () => fleetsRoute,
  path: "/",
  component: lazyRouteComponent(() => withChunkTimeout(import("./features/fleets/fleets-page.tsx")), "FleetsPage"),
});
const appsIndexRoute = createRoute({
  getParentRoute: () => appsRoute,
  path: "/",
  component: lazyRouteComponent(() => withChunkTimeout(import("./features/apps/apps-page.tsx")), "AppsPage"),
});
const blocksIndexRoute = createRoute({
  getParentRoute: () => blocksRoute,
  path: "/",
  component: lazyRouteComponent(() => withChunkTimeout(import("./features/blocks/blocks-page.tsx")), "BlocksPage"),
});

export const routeTree = rootRoute.addChildren([
  indexRoute,
  loginRoute,
  twoFactorRoute,
  signupRoute,
  samlRoute,
  samlSignonRoute,
  samlMergeRoute,
  samlRedirectRoute,
  socialCallbackRoute,
  passwordResetRoute,
  passwordResetSuccessRoute,
  resetPasswordRoute,
  verifyEmailTokenRoute,
  signedInRoute.addChildren([
    verifyEmailPendingRoute,
    cliLoginRoute,
    oauthAuthorizeRoute,
    zendeskLoginRoute,
    verifiedRoute.addChildren([
      signupProfileRoute,
      preferencesRoute.addChildren([
        preferencesIndexRoute,
        detailsPreferencesRoute,
        profilePreferencesRoute,
        sshKeysPreferencesRoute,
        accessTokensPreferencesRoute,
        twoFactorPreferencesRoute,
        experimentalPreferencesRoute,
      ]),
      fleetsRoute.addChildren([fleetsIndexRoute, applicationRoutes(fleetsRoute, "fleets")]),
      appsRoute.addChildren([appsIndexRoute, applicationRoutes(appsRoute, "apps")]),
      blocksRoute.addChildren([blocksIndexRoute, applicationRoutes(blocksRoute, "blocks")]),
      orgsRoute.addChildren([
        orgsIndexRoute,
        orgRoute.addChildren([
          orgSummaryRoute,
          orgFleetsRoute,
          orgAppsRoute,
          orgBlocksRoute,
          orgBillingRoute,
          orgCreditsRoute,
          // Typed as bare routes, as the releases and rollouts: the route tree's type is at its limit.
          orgAuditRoute as unknown as AnyRoute,
          orgWebhooksRoute as unknown as AnyRoute,
          orgMembersRoute.addChildren([
            orgMembersIndexRoute,
            memberRoute.addChildren([
              memberSummaryRoute,
              memberTeamsRoute,
              memberFleetsRoute,
              memberAppsRoute,
              memberBlocksRoute,
            ]),
          ]),
          orgTeamsRoute.addChildren([
            orgTeamsIndexRoute,
            teamRoute.addChildren([
              teamSummaryRoute,
              teamMembersRoute,
              teamFleetsRoute,
              teamAppsRoute,
              teamBlocksRoute,
            ]),
          ]),
        ]),
      ]),
      identityProviderRoute.addChildren([identityProviderIndexRoute, identityProviderDetailRoute]),
      organizationInvitationRoute,
      fleetInvitationRoute,
      supportInboxRoute,
      platformAuditRoute,
      adminRoute.addChildren([adminIndexRoute, adminUsersRoute]) as unknown as AnyRoute,
      supportTicketRoute,
      deployRoute,
      deviceRoute.addChildren(deviceChildren),
    ]),
  ]),
]);

export function createAppRouter(context: RouterContext) {
  return createRouter({
    routeTree,
    context,
    defaultPreload: "intent",
    // The guard's answer is cached by TanStack Query; route data is not cached twice.
    defaultPreloadStaleTime: 0,
    defaultErrorComponent: RouteErrorPage,
    defaultNotFoundComponent: NotFoundPage,
    // Unmatched paths get the not-found page at the root, without the signed-in frame or its guard.
    notFoundMode: "root",
    defaultPendingComponent: PendingPage,
    defaultPendingMs: 300,
    defaultPendingMinMs: 200,
    scrollRestoration: true,
  });
}

export type AppRouter = ReturnType<typeof createAppRouter>;
