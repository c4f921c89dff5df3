import Box from "@mui/material/Box";
import CircularProgress from "@mui/material/CircularProgress";
import LinearProgress from "@mui/material/LinearProgress";
import type { QueryClient } from "@tanstack/react-query";
import {
  createRootRouteWithContext,
  createRoute,
  createRouter,
  type ErrorComponentProps,
  lazyRouteComponent,
  Outlet,
  redirect,
  useRouterState,
} from "@tanstack/react-router";
import { AppBanners } from "./components/banners.tsx";
import { ErrorPage } from "./components/error-page.tsx";
import { NotFoundPage } from "./components/not-found-page.tsx";
import { Toaster } from "./components/toaster.tsx";
import { isLoggedIn } from "./features/auth/session.ts";
import { withChunkTimeout } from "./lib/chunk.ts";
import type { Sdk } from "./lib/sdk.ts";

/**
 * The route table (spec 1 §2.1) and guards (§2.2). Code-based routes; every page is a lazily
 * loaded chunk that gives up after 120 s (spec 1 §9).
 */

export interface RouterContext {
  sdk: Sdk;
  queryClient: QueryClient;
}

type CrumbKey = "nav.fleets" | "nav.apps" | "nav.blocks" | "nav.organizations";

declare module "@tanstack/react-router" {
  interface Register {
    router: AppRouter;
  }
  interface StaticDataRouteOption {
    /** The breadcrumb of the route (an i18n key). */
    crumb?: CrumbKey;
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
      <Box sx={{ flex: 1, minHeight: 0, overflow: "auto" }}>
        <Outlet />
      </Box>
      <Toaster />
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

/** `/login`: logged-out only; a signed-in visitor goes to `/` (spec 1 §2.2). */
const loginRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/login",
  validateSearch: (search: Record<string, unknown>): { redirect?: string } =>
    typeof search.redirect === "string" ? { redirect: search.redirect } : {},
  beforeLoad: async ({ context }) => {
    if (await isLoggedIn(context.queryClient, context.sdk)) throw redirect({ to: "/" });
  },
  component: lazyRouteComponent(() => withChunkTimeout(import("./features/auth/login-page.tsx")), "LoginPage"),
});

/** Everything below needs a session: signed-out users go to `/login?redirect=<path>` (spec 1 §2.2). */
const signedInRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: "signed-in",
  beforeLoad: async ({ context, location }) => {
    if (!(await isLoggedIn(context.queryClient, context.sdk))) {
      throw redirect({ to: "/login", search: { redirect: location.href } });
    }
  },
  component: lazyRouteComponent(() => withChunkTimeout(import("./components/app-layout.tsx")), "AppLayout"),
});

const fleetsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "/fleets",
  staticData: { crumb: "nav.fleets" },
  component: lazyRouteComponent(() => withChunkTimeout(import("./features/fleets/fleets-page.tsx")), "FleetsPage"),
});

const appsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "/apps",
  staticData: { crumb: "nav.apps" },
  component: lazyRouteComponent(() => withChunkTimeout(import("./features/apps/apps-page.tsx")), "AppsPage"),
});

const blocksRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "/blocks",
  staticData: { crumb: "nav.blocks" },
  component: lazyRouteComponent(() => withChunkTimeout(import("./features/blocks/blocks-page.tsx")), "BlocksPage"),
});

const orgsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "/orgs",
  staticData: { crumb: "nav.organizations" },
  component: lazyRouteComponent(() => withChunkTimeout(import("./features/orgs/orgs-page.tsx")), "OrgsPage"),
});

export const routeTree = rootRoute.addChildren([
  indexRoute,
  loginRoute,
  signedInRoute.addChildren([fleetsRoute, appsRoute, blocksRoute, orgsRoute]),
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
