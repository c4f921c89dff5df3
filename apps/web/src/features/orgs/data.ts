import type { OrganizationRole } from "@flotilla/domain";
import { type QueryClient, queryOptions, useQuery } from "@tanstack/react-query";
import { useSdk } from "../../app-services.tsx";
import type { Sdk } from "../../lib/sdk.ts";
import { useSessionUser } from "../preferences/use-user.ts";
import { type ApplicationClass, FREE_PLAN_ACCESS, type PlanAccess } from "./access.ts";

/** Loosely typed pine: the pages name their own row shapes. */
export interface Pine {
  get<T>(params: {
    resource: string;
    id?: number | Record<string, unknown>;
    options?: Record<string, unknown>;
  }): Promise<T>;
  post<T>(params: { resource: string; body: Record<string, unknown> }): Promise<T>;
  patch(params: { resource: string; id: number; body: Record<string, unknown> }): Promise<unknown>;
  delete(params: { resource: string; id: number }): Promise<unknown>;
}
export const pineOf = (sdk: Sdk) => sdk.pine as unknown as Pine;

export interface Organization {
  id: number;
  name: string;
  handle: string;
  created_at: string;
  logo_image: { href?: string; content_type?: string } | null;
  /** Frozen 60 days after an invoice went past due (spec 3 §4); only on the one-organization read. */
  is_frozen?: boolean;
  has_past_due_invoice_since__date?: string | null;
}

export interface OrgMembership {
  id: number;
  created_at: string;
  user: Array<{ id: number; username: string; email?: string | null }>;
  organization_membership_role: Array<{ name: OrganizationRole }>;
}

export interface OrgInvite {
  id: number;
  message: string | null;
  invitee: Array<{ email: string }>;
  organization_membership_role: Array<{ name: OrganizationRole }>;
}

export interface Team {
  id: number;
  name: string;
  created_at: string;
  team_membership?: Array<{ id: number; user: Array<{ id: number; username: string }> }>;
  team_application_access?: TeamAccess[];
}

export interface TeamAccess {
  id: number;
  grants_access_to__application: Array<{ id: number; app_name: string; slug: string; is_of__class: ApplicationClass }>;
  application_membership_role: Array<{ name: string }>;
}

export interface OrgApplication {
  id: number;
  app_name: string;
  slug: string;
  is_of__class: ApplicationClass;
  created_at: string;
}

export const orgKeys = {
  all: ["orgs"] as const,
  org: (id: number) => ["orgs", id] as const,
};

export function useOrganizations() {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["orgs", "list"],
    queryFn: () =>
      pineOf(sdk).get<
        Array<Organization & { organization_membership: Array<{ id: number }>; owns__team: Array<{ id: number }> }>
      >({
        resource: "organization",
        options: {
          $select: ["id", "name", "handle", "created_at", "logo_image"],
          $expand: { organization_membership: { $select: "id" }, owns__team: { $select: "id" } },
          $orderby: { name: "asc" },
        },
      }),
  });
}

/**
 * The caller's role in each organization they belong to: what the user-level controls (their own
 * API keys) are decided by, with the organization permission table (packages/domain).
 */
export function useMyRolesByOrganization() {
  const sdk = useSdk();
  const me = useSessionUser();
  return useQuery({
    queryKey: ["orgs", "my-roles", me?.id],
    enabled: me !== undefined,
    queryFn: async () =>
      new Map(
        (
          await pineOf(sdk).get<
            Array<{
              is_member_of__organization: { __id: number };
              organization_membership_role: Array<{ name: OrganizationRole }>;
            }>
          >({
            resource: "organization_membership",
            options: {
              $select: ["id", "is_member_of__organization"],
              $filter: { user: me?.id ?? 0 },
              $expand: { organization_membership_role: { $select: "name" } },
            },
          })
        ).flatMap((row) =>
          row.organization_membership_role.map((role) => [row.is_member_of__organization.__id, role.name] as const),
        ),
      ),
  });
}

/** One organization; null when there is none with this id (TanStack Query refuses undefined data). */
export const organizationQuery = (sdk: Sdk, orgId: number) =>
  queryOptions({
    queryKey: ["orgs", orgId, "summary"],
    queryFn: async () =>
      (await pineOf(sdk).get<Organization | undefined>({
        resource: "organization",
        id: orgId,
        options: {
          $select: [
            "id",
            "name",
            "handle",
            "created_at",
            "logo_image",
            "is_frozen",
            "has_past_due_invoice_since__date",
          ],
        },
      })) ?? null,
  });

export const loadOrganization = (queryClient: QueryClient, sdk: Sdk, orgId: number) =>
  queryClient.ensureQueryData(organizationQuery(sdk, orgId));

/** `quiet`: the reader is the frame (breadcrumbs), not the page: a failure is the page's to show. */
export function useOrganization(orgId: number, enabled = true, quiet = false) {
  const sdk = useSdk();
  return useQuery({ ...organizationQuery(sdk, orgId), enabled, ...(quiet ? { throwOnError: false } : {}) });
}

/** Every membership of the organization with its role (for counts, the caller's role, pickers). */
export function useAllMemberships(orgId: number, enabled = true) {
  const sdk = useSdk();
  return useQuery({
    enabled,
    queryKey: ["orgs", orgId, "memberships", "all"],
    queryFn: () =>
      pineOf(sdk).get<OrgMembership[]>({
        resource: "organization_membership",
        options: {
          $select: ["id", "created_at"],
          $filter: { is_member_of__organization: orgId },
          $expand: {
            user: { $select: ["id", "username"] },
            organization_membership_role: { $select: "name" },
          },
          $orderby: { id: "asc" },
        },
      }),
  });
}

/** The signed-in user's role in the organization and how many administrators there are. */
export function useMyOrgRole(orgId: number) {
  const me = useSessionUser();
  const memberships = useAllMemberships(orgId);
  const rows = memberships.data ?? [];
  const mine = rows.find((row) => row.user[0]?.id === me?.id);
  const administratorCount = rows.filter((row) => row.organization_membership_role[0]?.name === "administrator").length;
  return {
    loaded: memberships.isSuccess && me !== undefined,
    role: mine?.organization_membership_role[0]?.name,
    membershipId: mine?.id,
    administratorCount,
    memberships: rows,
  };
}

export function useOrgApplications(orgId: number) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["orgs", orgId, "applications"],
    queryFn: () =>
      pineOf(sdk).get<OrgApplication[]>({
        resource: "application",
        options: {
          $select: ["id", "app_name", "slug", "is_of__class", "created_at"],
          $filter: { organization: orgId },
          $orderby: { app_name: "asc" },
        },
      }),
  });
}

export function useTeams(orgId: number, enabled = true, quiet = false) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["orgs", orgId, "teams"],
    enabled,
    ...(quiet ? { throwOnError: false } : {}),
    queryFn: () =>
      pineOf(sdk).get<Team[]>({
        resource: "team",
        options: {
          $select: ["id", "name", "created_at"],
          $filter: { belongs_to__organization: orgId },
          $expand: {
            team_membership: { $select: "id", $expand: { user: { $select: ["id", "username"] } } },
            team_application_access: {
              $select: "id",
              $expand: {
                grants_access_to__application: { $select: ["id", "app_name", "slug", "is_of__class"] },
                application_membership_role: { $select: "name" },
              },
            },
          },
          $orderby: { name: "asc" },
        },
      }),
  });
}

/**
 * Whether the organization pays for a plan other than free (paid-only roles need one), and the
 * features its plan provides (the limited roles need `preview:safe-roles`).
 */
export function usePaidPlan(orgId: number | undefined) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["orgs", orgId, "paid-plan"],
    enabled: orgId !== undefined,
    queryFn: async (): Promise<PlanAccess> => {
      try {
        const rows = await pineOf(sdk).get<
          Array<{
            is_for__plan: Array<{
              billing_code: string;
              plan__provides__feature: Array<{ feature: Array<{ slug: string }> }>;
            }>;
          }>
        >({
          resource: "subscription",
          options: {
            $select: "id",
            $filter: { is_for__organization: orgId, is_active: true },
            $expand: {
              is_for__plan: {
                $select: "billing_code",
                $expand: { plan__provides__feature: { $select: "id", $expand: { feature: { $select: "slug" } } } },
              },
            },
          },
        });
        const plans = rows.flatMap((row) => row.is_for__plan);
        return {
          paidPlan: plans.some((plan) => plan.billing_code !== "free"),
          planFeatures: plans.flatMap((plan) =>
            plan.plan__provides__feature.flatMap((pf) => pf.feature.map((f) => f.slug)),
          ),
        };
      } catch {
        return FREE_PLAN_ACCESS;
      }
    },
  });
}

/** The caller's own role in one organization (undefined: not a member), for guards and menus. */
export const myOrgRoleQuery = (sdk: Sdk, orgId: number, userId: number) =>
  queryOptions({
    queryKey: ["orgs", orgId, "my-role", userId],
    queryFn: async () => {
      const rows = await pineOf(sdk).get<Array<{ organization_membership_role: Array<{ name: OrganizationRole }> }>>({
        resource: "organization_membership",
        options: {
          $select: "id",
          $filter: { is_member_of__organization: orgId, user: userId },
          $expand: { organization_membership_role: { $select: "name" } },
        },
      });
      return rows[0]?.organization_membership_role[0]?.name ?? null;
    },
  });

export const loadMyOrgRole = (queryClient: QueryClient, sdk: Sdk, orgId: number, userId: number) =>
  queryClient.ensureQueryData(myOrgRoleQuery(sdk, orgId, userId));

/** The caller's role in the organization of the current route, for the side menu (quiet). */
export function useMyRoleIn(orgId: number | undefined) {
  const sdk = useSdk();
  const me = useSessionUser();
  return useQuery({
    ...myOrgRoleQuery(sdk, orgId ?? 0, me?.id ?? 0),
    enabled: orgId !== undefined && me !== undefined,
    throwOnError: false,
  });
}

/** Rows whose user has this email, compared case-insensitively (pine's `$any` over `user`). */
const userWithEmail = (email: string) => ({
  user: {
    $any: { $alias: "u", $expr: { $eq: [{ $tolower: { $: ["u", "email"] } }, email.trim().toLowerCase()] } },
  },
});

/**
 * Whether this email is already a member of the organization (spec 3 §5 invitee_already_exist).
 * The API invites a member again, as balena's does (its clients expect it); the invite form
 * refuses first, in the spec's words.
 */
export async function isOrganizationMember(sdk: Sdk, orgId: number, email: string): Promise<boolean> {
  const count = await pineOf(sdk).get<number>({
    resource: "organization_membership",
    options: { $count: { $filter: { is_member_of__organization: orgId, ...userWithEmail(email) } } },
  });
  return count > 0;
}

/** Whether this email already has access to the fleet: a member of it, or an administrator of its organization. */
export async function hasFleetAccess(sdk: Sdk, fleetId: number, orgId: number, email: string): Promise<boolean> {
  const [members, administrators] = await Promise.all([
    pineOf(sdk).get<number>({
      resource: "user_application_membership",
      options: { $count: { $filter: { is_member_of__application: fleetId, ...userWithEmail(email) } } },
    }),
    pineOf(sdk).get<number>({
      resource: "organization_membership",
      options: {
        $count: {
          $filter: {
            is_member_of__organization: orgId,
            organization_membership_role: { $any: { $alias: "r", $expr: { r: { name: "administrator" } } } },
            ...userWithEmail(email),
          },
        },
      },
    }),
  ]);
  return members + administrators > 0;
}
