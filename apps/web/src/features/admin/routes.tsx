import { createRoute, notFound, redirect } from "@tanstack/react-router";
import { page } from "../../route-kit.ts";
import type { VerifiedRoute } from "../../router.tsx";
import { getSessionState } from "../auth/session.ts";
import { isAdmin } from "../auth/token.ts";

/**
 * `/admin`: platform administration (docs/support.md "Platform staff"), for platform administrators
 * (`balena_admin`); anybody else gets the not-found page. `/admin` itself shows Admin → Users.
 */
export function adminRoutes(verified: VerifiedRoute) {
  const adminRoute = createRoute({
    getParentRoute: () => verified,
    path: "/admin",
    staticData: { crumb: "nav.admin" },
    beforeLoad: async ({ context }) => {
      const session = await getSessionState(context.queryClient, context.sdk);
      if (session.kind !== "signed-in" || !isAdmin(session.claims)) throw notFound();
    },
  });
  return adminRoute.addChildren([
    createRoute({
      getParentRoute: () => adminRoute,
      path: "/",
      beforeLoad: () => {
        throw redirect({ to: "/admin/users", replace: true });
      },
    }),
    createRoute({
      getParentRoute: () => adminRoute,
      path: "users",
      staticData: { crumb: "nav.users" },
      component: page(() => import("./users-page.tsx"), "AdminUsersPage"),
    }),
  ]);
}
