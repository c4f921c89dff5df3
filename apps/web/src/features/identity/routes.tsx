import { createRoute, redirect } from "@tanstack/react-router";
import { withChunkTimeout } from "../../lib/chunk.ts";
import { t } from "../../lib/i18n.ts";
import { requireNumericId } from "../../lib/route-id.ts";
import { showToast } from "../../lib/toasts.ts";
import { page, stringSearch } from "../../route-kit.ts";
import type { RootRoute, VerifiedRoute } from "../../router.tsx";

const samlPages = () => import("./saml-pages.tsx");

/**
 * Enterprise single sign-on (spec 1 §2.1): `/saml` asks for the SSO identifier,
 * `/saml/{ssoIdentifier}` sends the browser to the identity provider through the API, and the
 * API sends it back to `/saml/callback/signon` or, for an email that has an account already, to
 * the consent page `/saml/callback/merge`. Open to everyone: the merge page asks for a login itself.
 */
export function samlRoutes(root: RootRoute) {
  return [
    createRoute({
      getParentRoute: () => root,
      path: "/saml",
      validateSearch: stringSearch("saml_error", "sso"),
      component: page(samlPages, "SamlPage"),
    }),
    createRoute({
      getParentRoute: () => root,
      path: "/saml/callback/signon",
      validateSearch: stringSearch("code"),
      component: page(samlPages, "SamlSignonPage"),
    }),
    createRoute({
      getParentRoute: () => root,
      path: "/saml/callback/merge",
      validateSearch: stringSearch("code", "shouldMergeWith"),
      component: page(samlPages, "SamlMergePage"),
    }),
    createRoute({
      getParentRoute: () => root,
      path: "/saml/$ssoIdentifier",
      component: page(samlPages, "SamlRedirectPage"),
    }),
  ];
}

const identityData = () => withChunkTimeout(import("./data.ts"));
const identityPages = () => import("./idp-pages.tsx");

/**
 * `/identity-provider` (spec 3 §2 Identity provider): the provider the user administers, else
 * an introduction; `/identity-provider/{id}`: a non-numeric id is "invalid id passed in url", a
 * provider that is not there (or not the user's to manage) errors.no_idp_found; both go back
 * to `/identity-provider`.
 */
export function identityProviderRoutes(verified: VerifiedRoute) {
  const identityProviderRoute = createRoute({
    getParentRoute: () => verified,
    path: "/identity-provider",
    staticData: { crumb: "nav.identity_provider" },
  });
  const indexRoute = createRoute({
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
  const detailRoute = createRoute({
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
  return identityProviderRoute.addChildren([indexRoute, detailRoute]);
}
