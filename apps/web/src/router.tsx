import Box from "@mui/material/Box";
import CircularProgress from "@mui/material/CircularProgress";
import LinearProgress from "@mui/material/LinearProgress";
import {
  type AnyRoute,
  createRootRouteWithContext,
  createRoute,
  createRouter,
  type ErrorComponentProps,
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
import { adminRoutes } from "./features/admin/routes.tsx";
import { platformAuditRoute } from "./features/audit/routes.tsx";
import { signedInGuard, verifiedGuard } from "./features/auth/guards.ts";
import { signedInRoutes, signedOutRoutes, signupProfileRoute } from "./features/auth/routes.tsx";
import { getSessionState, logOut } from "./features/auth/session.ts";
import { deployRoute } from "./features/deploy/routes.tsx";
import { deviceRoutes } from "./features/devices/routes.tsx";
import { fleetsRoutes } from "./features/fleets/routes.tsx";
import { identityProviderRoutes, samlRoutes } from "./features/identity/routes.tsx";
import { invitationRoutes, orgsRoutes } from "./features/orgs/routes.tsx";
import { preferencesRoutes } from "./features/preferences/routes.tsx";
import { supportRoutes } from "./features/support/routes.tsx";
import { loadFullCatalogue, t } from "./lib/i18n.ts";
import { showToast } from "./lib/toasts.ts";
import { page, type RouterContext } from "./route-kit.ts";

/**
 * The route tree (spec 1 §2.1): the root, the signed-in and verified layouts with their guards
 * (§2.2) and the error pages. Each feature's routes are in features/<feature>/routes.tsx; every
 * page is a lazily loaded chunk that gives up after 120 s (spec 1 §9), see route-kit.ts.
 */

export type { RouterContext };

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

/** Pages that need a verified email when verification is required (spec 1 §2.2). */
const verifiedRoute = createRoute({
  getParentRoute: () => signedInRoute,
  id: "verified",
  beforeLoad: async ({ context }) => {
    const target = verifiedGuard(await getSessionState(context.queryClient, context.sdk));
    if (target) throw redirect(target);
  },
});

/** The layout routes each feature's routes (features/<feature>/routes.tsx) hang under. */
export type RootRoute = typeof rootRoute;
export type SignedInRoute = typeof signedInRoute;
export type VerifiedRoute = typeof verifiedRoute;

export const routeTree = rootRoute.addChildren([
  indexRoute,
  ...signedOutRoutes(rootRoute),
  ...samlRoutes(rootRoute),
  signedInRoute.addChildren([
    ...signedInRoutes(signedInRoute),
    verifiedRoute.addChildren([
      signupProfileRoute(verifiedRoute),
      preferencesRoutes(verifiedRoute),
      ...fleetsRoutes(verifiedRoute),
      orgsRoutes(verifiedRoute),
      identityProviderRoutes(verifiedRoute),
      ...invitationRoutes(verifiedRoute),
      ...supportRoutes(verifiedRoute),
      platformAuditRoute(verifiedRoute),
      // Typed as a bare route, as the releases and rollouts: the route tree's type is at its limit.
      adminRoutes(verifiedRoute) as unknown as AnyRoute,
      deployRoute(verifiedRoute),
      deviceRoutes(verifiedRoute),
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
