import type { ApplicationType, OrganizationRole } from "@flotilla/domain";
import { useQuery } from "@tanstack/react-query";
import { useSdk } from "../../app-services.tsx";
import type { StatusCounts } from "../fleet-access/data.ts";
import type { ApplicationClass } from "../orgs/access.ts";
import { pineOf } from "../orgs/data.ts";
import { useSessionUser } from "../preferences/use-user.ts";

/** The fleet list refreshes every 8 s (spec 2 §7, §9); the device type list every 60 s. */
export const FLEET_LIST_POLL_MS = 8000;
export const DEVICE_TYPE_POLL_MS = 60_000;

export interface ListedApplication {
  id: number;
  app_name: string;
  slug: string;
  is_of__class: ApplicationClass;
  created_at: string;
  total_devices: number;
  device_count_grouped_by_status: StatusCounts | null;
  organization: Array<{ id: number; name: string }>;
  is_for__device_type: Array<{ slug: string; name: string; is_of__cpu_architecture: Array<{ id: number }> }>;
  user_access_roles: Array<{ role: string }>;
}

/** Fleets (apps, blocks) the user can see, optionally of one organization; hidden tabs skip polls. */
export function useApplicationList(kind: ApplicationClass, orgId?: number) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["applications", kind, orgId ?? "all"],
    refetchInterval: FLEET_LIST_POLL_MS,
    queryFn: () =>
      pineOf(sdk).get<ListedApplication[]>({
        resource: "application",
        options: {
          $select: [
            "id",
            "app_name",
            "slug",
            "is_of__class",
            "created_at",
            "total_devices",
            "device_count_grouped_by_status",
          ],
          // Fleets the user holds a role on: the public OS catalogue's fleets are readable, not theirs.
          $filter: {
            is_of__class: kind,
            is_host: false,
            user_access_roles: { $any: { $alias: "ua", $expr: { ua: { role: { $ne: null } } } } },
            ...(orgId ? { organization: orgId } : {}),
          },
          $expand: {
            organization: { $select: ["id", "name"] },
            is_for__device_type: { $select: ["slug", "name"], $expand: { is_of__cpu_architecture: { $select: "id" } } },
            user_access_roles: { $select: "role" },
          },
          $orderby: { app_name: "asc" },
        },
      }),
  });
}

export interface DeviceType {
  id: number;
  slug: string;
  name: string;
  contract: unknown;
  is_of__cpu_architecture: Array<{ slug: string }>;
  /** Its host OS apps (the default one and any ESR one), each with its latest successful release. */
  is_default_for__application?: Array<{
    id: number;
    application_tag: Array<{ tag_key: string; value: string }>;
    owns__release: Array<{ id: number; raw_version: string }>;
  }>;
}

/**
 * The latest successful release of a device type's default host app (spec 2 §7 "Lists read"):
 * the host app whose release policy is not ESR (its `release-policy` application tag).
 */
export function latestHostOsRelease(type: DeviceType): { id: number; raw_version: string; app: number } | undefined {
  const app = (type.is_default_for__application ?? []).find(
    (candidate) =>
      !candidate.application_tag.some((tag) => tag.tag_key === "release-policy" && tag.value.toLowerCase() === "esr"),
  );
  const release = app?.owns__release[0];
  return app && release ? { ...release, app: app.id } : undefined;
}

export function useDeviceTypes() {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["device-types"],
    refetchInterval: DEVICE_TYPE_POLL_MS,
    queryFn: () =>
      pineOf(sdk).get<DeviceType[]>({
        resource: "device_type",
        options: {
          $select: ["id", "slug", "name", "contract"],
          $expand: {
            is_of__cpu_architecture: { $select: "slug" },
            // The default host app's latest successful release (spec 2 §7 "Lists read").
            is_default_for__application: {
              $select: "id",
              $expand: {
                application_tag: { $select: ["tag_key", "value"] },
                owns__release: {
                  $select: ["id", "raw_version"],
                  $filter: { status: "success", is_final: true, is_invalidated: false },
                  $orderby: [{ created_at: "desc" }, { id: "desc" }],
                  $top: 1,
                },
              },
            },
          },
          $orderby: { name: "asc" },
        },
      }),
  });
}

export function useApplicationTypes() {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["application-types"],
    staleTime: 10 * 60_000,
    queryFn: () =>
      pineOf(sdk).get<ApplicationType[]>({
        resource: "application_type",
        options: {
          $select: [
            "id",
            "slug",
            "name",
            "description",
            "is_legacy",
            "requires_payment",
            "supports_multicontainer",
            "needs__os_version_range",
          ],
        },
      }),
  });
}

export interface OrganizationPlan {
  id: number;
  total_device_count: number;
  /** null on a paid plan: a plan is free when this is set. */
  free_plan_device_allowance: number | null;
  has_frozen_free_devices: boolean;
}

/** Free plan data of an organization (spec 3 §3): allowance, total devices, frozen devices. */
export function useOrganizationPlan(orgId: number | undefined) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["orgs", orgId, "allowance"],
    enabled: orgId !== undefined,
    refetchInterval: 60_000,
    queryFn: () =>
      pineOf(sdk).get<OrganizationPlan | undefined>({
        resource: "organization",
        id: orgId ?? 0,
        options: { $select: ["id", "total_device_count", "free_plan_device_allowance", "has_frozen_free_devices"] },
      }),
  });
}

export interface MyOrganization {
  id: number;
  name: string;
  role: OrganizationRole | undefined;
}

/** The organizations the user belongs to, with their role in each (who may create fleets). */
export function useMyOrganizations() {
  const sdk = useSdk();
  const me = useSessionUser();
  return useQuery({
    queryKey: ["orgs", "mine", me?.id],
    enabled: me !== undefined,
    queryFn: async () => {
      const rows = await pineOf(sdk).get<
        Array<{
          organization_membership_role: Array<{ name: OrganizationRole }>;
          is_member_of__organization: Array<{ id: number; name: string }>;
        }>
      >({
        resource: "organization_membership",
        options: {
          $select: "id",
          $filter: { user: me?.id },
          $expand: {
            organization_membership_role: { $select: "name" },
            is_member_of__organization: { $select: ["id", "name"] },
          },
        },
      });
      return rows
        .flatMap((row): MyOrganization[] => {
          const org = row.is_member_of__organization[0];
          return org ? [{ id: org.id, name: org.name, role: row.organization_membership_role[0]?.name }] : [];
        })
        .sort((a, b) => a.name.localeCompare(b.name));
    },
  });
}

/** The names of an organization's applications (the name rules compare within the organization). */
export function useOrgApplicationNames(orgId: number | undefined) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["orgs", orgId, "application-names"],
    enabled: orgId !== undefined,
    queryFn: () =>
      pineOf(sdk).get<Array<{ id: number; app_name: string; is_of__class: ApplicationClass }>>({
        resource: "application",
        options: { $select: ["id", "app_name", "is_of__class"], $filter: { organization: orgId } },
      }),
  });
}

/** Where a fleet, app or block lives in the dashboard's routes. */
export const classPath = (kind: ApplicationClass) =>
  kind === "app" ? "/apps" : kind === "block" ? "/blocks" : "/fleets";
