import { type DomainState, SAML_PLAN_FEATURE } from "@flotilla/domain";
import { type QueryClient, queryOptions, useQuery } from "@tanstack/react-query";
import { useSdk, useServices } from "../../app-services.tsx";
import type { Sdk } from "../../lib/sdk.ts";
import { pineOf } from "../orgs/data.ts";
import { useSessionUser } from "../preferences/use-user.ts";

/**
 * Identity providers (spec 3 §2 Identity provider, §7): the data API answers with those the
 * caller may manage (an administrator of one of its organizations, or its creator until it has
 * its first organization).
 */
export interface IdpMembership {
  id: number;
  organization: Array<{ id: number; name: string; handle: string }>;
  grants_access_to__team: Array<{ id: number; name: string }>;
}

export interface IdentityProvider {
  id: number;
  sso_identifier: string;
  entry_point: string;
  issuer: string;
  certificate: string;
  identity_provider_membership: IdpMembership[];
}

export const idpKeys = {
  all: ["identity-provider"] as const,
  list: ["identity-provider", "list"] as const,
  one: (id: number) => ["identity-provider", id] as const,
  samlAccounts: (id: number) => ["identity-provider", id, "saml-accounts"] as const,
  adminOrgs: (userId: number | undefined) => ["identity-provider", "admin-orgs", userId] as const,
};

export const identityProvidersQuery = (sdk: Sdk) =>
  queryOptions({
    queryKey: idpKeys.list,
    queryFn: () =>
      pineOf(sdk).get<Array<{ id: number; identity_provider_membership: Array<{ id: number }> }>>({
        resource: "identity_provider",
        options: {
          $select: ["id"],
          $expand: { identity_provider_membership: { $select: "id" } },
          $orderby: { id: "asc" },
        },
      }),
  });

/** The provider the caller administers: one with organizations first (spec 3 §2: redirect to it). */
export async function loadAdministeredProvider(queryClient: QueryClient, sdk: Sdk): Promise<number | undefined> {
  const providers = await queryClient.fetchQuery(identityProvidersQuery(sdk));
  const withOrgs = providers.find((provider) => provider.identity_provider_membership.length > 0);
  return (withOrgs ?? providers[0])?.id;
}

/** One provider with its organizations and teams; null when there is none the caller may see. */
export const identityProviderQuery = (sdk: Sdk, id: number) =>
  queryOptions({
    queryKey: idpKeys.one(id),
    queryFn: async () =>
      (await pineOf(sdk).get<IdentityProvider | undefined>({
        resource: "identity_provider",
        id,
        options: {
          $select: ["id", "sso_identifier", "entry_point", "issuer", "certificate"],
          $expand: {
            identity_provider_membership: {
              $select: "id",
              $expand: {
                organization: { $select: ["id", "name", "handle"] },
                grants_access_to__team: { $select: ["id", "name"] },
              },
              $orderby: { id: "asc" },
            },
          },
        },
      })) ?? null,
  });

export const loadIdentityProvider = (queryClient: QueryClient, sdk: Sdk, id: number) =>
  queryClient.fetchQuery(identityProviderQuery(sdk, id));

export function useIdentityProvider(id: number) {
  const sdk = useSdk();
  return useQuery(identityProviderQuery(sdk, id));
}

/** How many people sign in through the provider (spec 3 §7: saml_account count by provider). */
export interface SamlAccount {
  id: number;
  remote_id: string;
  display_name: string | null;
  created_at: string;
  belongs_to__user: Array<{ id: number; username: string }>;
}

/**
 * The SAML accounts a provider signed in (spec 3 §5: it cannot be removed while they exist, they
 * are revoked first), with their users' names where the caller may read them.
 */
export function useSamlAccounts(id: number) {
  const sdk = useSdk();
  return useQuery({
    queryKey: idpKeys.samlAccounts(id),
    throwOnError: false,
    queryFn: () =>
      pineOf(sdk).get<SamlAccount[]>({
        resource: "saml_account",
        options: {
          $select: ["id", "remote_id", "display_name", "created_at"],
          $filter: { was_generated_by__identity_provider: id },
          $expand: { belongs_to__user: { $select: ["id", "username"] } },
          $orderby: { remote_id: "asc" },
        },
      }),
  });
}

export interface AdminOrganization {
  id: number;
  name: string;
  handle: string;
  /** Its plan includes the `saml` feature (spec 1 §6.2; spec 3 §6). */
  saml: boolean;
}

/**
 * The organizations the caller administers, each with whether its plan includes SAML. Plans are
 * readable only for organizations one administers (spec 1 §6.2), which is all this needs.
 */
export function useAdminOrganizations() {
  const sdk = useSdk();
  const me = useSessionUser();
  return useQuery({
    queryKey: idpKeys.adminOrgs(me?.id),
    enabled: me !== undefined,
    throwOnError: false,
    queryFn: async (): Promise<AdminOrganization[]> => {
      const [memberships, subscriptions] = await Promise.all([
        pineOf(sdk).get<
          Array<{
            is_member_of__organization: Array<{ id: number; name: string; handle: string }>;
            organization_membership_role: Array<{ name: string }>;
          }>
        >({
          resource: "organization_membership",
          options: {
            $select: "id",
            $filter: { user: me?.id ?? 0 },
            $expand: {
              is_member_of__organization: { $select: ["id", "name", "handle"] },
              organization_membership_role: { $select: "name" },
            },
          },
        }),
        pineOf(sdk)
          .get<
            Array<{
              is_for__organization: { __id: number } | Array<{ id: number }>;
              is_for__plan: Array<{ plan__provides__feature: Array<{ feature: Array<{ slug: string }> }> }>;
            }>
          >({
            resource: "subscription",
            options: {
              $select: ["id", "is_for__organization"],
              $filter: { is_active: true },
              $expand: {
                is_for__plan: {
                  $select: "id",
                  $expand: { plan__provides__feature: { $select: "id", $expand: { feature: { $select: "slug" } } } },
                },
              },
            },
          })
          .catch(() => []),
      ]);
      const samlOrgs = new Set(
        subscriptions
          .filter((row) =>
            row.is_for__plan.some((plan) =>
              plan.plan__provides__feature.some((pf) => pf.feature.some((f) => f.slug === SAML_PLAN_FEATURE)),
            ),
          )
          .map((row) =>
            Array.isArray(row.is_for__organization) ? row.is_for__organization[0]?.id : row.is_for__organization.__id,
          ),
      );
      return memberships
        .filter((row) => row.organization_membership_role[0]?.name === "administrator")
        .flatMap((row) => row.is_member_of__organization)
        .map((org) => ({ ...org, saml: samlOrgs.has(org.id) }))
        .sort((a, b) => a.name.localeCompare(b.name));
    },
  });
}

/**
 * The menu's "Identity provider" entry (spec 1 §2.5; spec 3 §2): when SAML is available to the
 * caller, i.e. an organization they administer is on a plan with it, or they manage a provider.
 */
export function useIdentityProviderMenu(): boolean {
  const sdk = useSdk();
  const orgs = useAdminOrganizations();
  const providers = useQuery({ ...identityProvidersQuery(sdk), throwOnError: false });
  return (orgs.data ?? []).some((org) => org.saml) || (providers.data ?? []).length > 0;
}

/** An organization's email domain (docs/identity.md "Verified domains"), as the API answers it. */
export interface OrganizationDomain {
  id: number;
  organization: number;
  domain: string;
  state: DomainState;
  /** The TXT record to publish on the domain itself. */
  verification_record: string;
  created_at: string;
  verified_at: string | null;
  last_checked_at: string | null;
  last_check_error: string | null;
}

/**
 * The verified-domain API of an organization (its administrators only) under the API origin,
 * through the SDK's request layer (bearer token, in-flight cap, 429 retries).
 */
export function domainsApi(sdk: Sdk, apiUrl: string) {
  const send = async <T>(method: "GET" | "POST" | "DELETE", url: string, body?: unknown): Promise<T> =>
    (await sdk.request.send({ method, url, baseUrl: apiUrl, ...(body === undefined ? {} : { body }) })).body as T;
  const base = (orgId: number) => `/identity/v1/organizations/${orgId}/domains`;
  return {
    list: async (orgId: number) => (await send<{ domains: OrganizationDomain[] }>("GET", base(orgId))).domains,
    add: (orgId: number, domain: string) => send<OrganizationDomain>("POST", base(orgId), { domain }),
    verify: (orgId: number, id: number) => send<OrganizationDomain>("POST", `${base(orgId)}/${id}/verify`, {}),
    remove: (orgId: number, id: number) => send<unknown>("DELETE", `${base(orgId)}/${id}`),
  };
}

export const domainKeys = {
  all: ["identity-provider", "domains"] as const,
  of: (orgIds: readonly number[]) => ["identity-provider", "domains", ...orgIds] as const,
};

/** The domains of these organizations (each one the caller administers), in one list. */
export function useOrganizationDomains(orgIds: readonly number[]) {
  const { sdk, config } = useServices();
  return useQuery({
    queryKey: domainKeys.of(orgIds),
    enabled: orgIds.length > 0,
    throwOnError: false,
    queryFn: async () => {
      const api = domainsApi(sdk, config.apiUrl);
      return (await Promise.all(orgIds.map((id) => api.list(id)))).flat();
    },
  });
}
