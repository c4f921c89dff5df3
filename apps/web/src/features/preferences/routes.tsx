import { createRoute, redirect } from "@tanstack/react-router";
import { page } from "../../route-kit.ts";
import type { VerifiedRoute } from "../../router.tsx";

/** `/preferences/…`: the user's own settings, without the side menu; `/preferences` opens the details. */
export function preferencesRoutes(verified: VerifiedRoute) {
  const preferencesRoute = createRoute({
    getParentRoute: () => verified,
    path: "/preferences",
    staticData: { hideSidebar: true },
    component: page(() => import("./preferences-layout.tsx"), "PreferencesLayout"),
  });
  return preferencesRoute.addChildren([
    createRoute({
      getParentRoute: () => preferencesRoute,
      path: "/",
      beforeLoad: () => {
        throw redirect({ to: "/preferences/details", replace: true });
      },
    }),
    createRoute({
      getParentRoute: () => preferencesRoute,
      path: "details",
      component: page(() => import("./details-page.tsx"), "DetailsPreferencesPage"),
    }),
    createRoute({
      getParentRoute: () => preferencesRoute,
      path: "profile",
      component: page(() => import("./profile-page.tsx"), "ProfilePreferencesPage"),
    }),
    createRoute({
      getParentRoute: () => preferencesRoute,
      path: "sshkeys",
      component: page(() => import("./sshkeys-page.tsx"), "SshKeysPreferencesPage"),
    }),
    createRoute({
      getParentRoute: () => preferencesRoute,
      path: "access-tokens",
      component: page(() => import("./access-tokens-page.tsx"), "AccessTokensPreferencesPage"),
    }),
    createRoute({
      getParentRoute: () => preferencesRoute,
      path: "2fa",
      component: page(() => import("./two-factor-page.tsx"), "TwoFactorPreferencesPage"),
    }),
    createRoute({
      getParentRoute: () => preferencesRoute,
      path: "experimental",
      component: page(() => import("./experimental-page.tsx"), "ExperimentalPreferencesPage"),
    }),
  ]);
}
