import { OS_CATALOGUE_ORGANIZATION } from "@flotilla/domain";
import { type QueryClient, queryOptions, useQuery } from "@tanstack/react-query";
import { useSdk } from "../../app-services.tsx";
import type { Sdk } from "../../lib/sdk.ts";
import { type ApplicationClass, fleetCan, fleetRoleOf } from "../orgs/access.ts";
import { pineOf } from "../orgs/data.ts";

/** Device counts per overall status (spec 2 §3). */
export type StatusCounts = Partial<Record<string, number>>;

export interface Fleet {
  id: number;
  app_name: string;
  slug: string;
  is_of__class: ApplicationClass;
  created_at: string;
  is_public: boolean;
  is_stored_at__repository_url: string | null;
  should_track_latest_release: boolean;
  is_accessible_by_support_until__date: string | null;
  total_devices: number;
  device_count_grouped_by_status: StatusCounts | null;
  organization: Array<{ id: number; name: string; handle: string; is_frozen: boolean }>;
  user_access_roles: Array<{ role: string }>;
  is_for__device_type: Array<{
    id: number;
    slug: string;
    name: string;
    contract: unknown;
    is_of__cpu_architecture: Array<{ id: number; slug: string }>;
  }>;
  application_type: Array<{ id: number; slug: string; name: string; is_legacy: boolean }>;
  should_be_running__release: Array<{ id: number; commit: string; raw_version: string; is_invalidated: boolean }>;
}

/** Fleet detail pages poll every 60 s (spec 2 §9, decision 6); hidden tabs skip polls. */
export const FLEET_POLL_MS = 60_000;

export function fleetQuery(sdk: Sdk, fleetId: number) {
  return queryOptions({
    queryKey: ["fleet", fleetId],
    // null, not undefined, for a missing fleet: TanStack Query refuses undefined data.
    queryFn: async () =>
      (await pineOf(sdk).get<Fleet | undefined>({
        resource: "application",
        id: fleetId,
        options: {
          $select: [
            "id",
            "app_name",
            "slug",
            "is_of__class",
            "created_at",
            "is_public",
            "is_stored_at__repository_url",
            "should_track_latest_release",
            "is_accessible_by_support_until__date",
            "total_devices",
            "device_count_grouped_by_status",
          ],
          $expand: {
            organization: { $select: ["id", "name", "handle", "is_frozen"] },
            user_access_roles: { $select: "role" },
            is_for__device_type: {
              $select: ["id", "slug", "name", "contract"],
              $expand: { is_of__cpu_architecture: { $select: ["id", "slug"] } },
            },
            application_type: { $select: ["id", "slug", "name", "is_legacy"] },
            should_be_running__release: { $select: ["id", "commit", "raw_version", "is_invalidated"] },
          },
        },
      })) ?? null,
  });
}

/**
 * A host OS or supervisor fleet of the OS catalogue (its pages live under /apps/, spec 2 §2), by
 * its slug: users read these public fleets but not the catalogue's organization.
 */
export const isOsCatalogueFleet = (fleet: Pick<Fleet, "slug">) =>
  fleet.slug.startsWith(`${OS_CATALOGUE_ORGANIZATION}/`);

/** The fleet a route guard needs (cached like the pages' query). */
export const loadFleet = (queryClient: QueryClient, sdk: Sdk, fleetId: number) =>
  queryClient.ensureQueryData(fleetQuery(sdk, fleetId));

/**
 * One fleet (app, block) with the caller's roles on it (`user_access_roles` = their fleet_access rows).
 * `quiet`: the reader is the frame (breadcrumbs, side menu), not the page: a failure is the page's to show.
 */
export function useFleet(fleetId: number, enabled = true, quiet = false) {
  const sdk = useSdk();
  return useQuery({
    ...fleetQuery(sdk, fleetId),
    enabled,
    refetchInterval: FLEET_POLL_MS,
    ...(quiet ? { throwOnError: false } : {}),
  });
}

/** What the caller may do on this fleet, from the fleet role table (packages/domain). */
export function fleetAbilities(fleet: Pick<Fleet, "user_access_roles"> | undefined) {
  const role = fleetRoleOf((fleet?.user_access_roles ?? []).map((row) => row.role));
  return {
    role,
    read: fleetCan(role, "application", "read"),
    update: fleetCan(role, "application", "update"),
    delete: fleetCan(role, "application", "delete"),
    transfer: fleetCan(role, "application", "transfer"),
    changeType: fleetCan(role, "application", "change-type"),
    /** Settings are hidden for observers (spec 1 §2.5, spec 2 §2). */
    settings: role !== "observer" && role !== "member",
    readMembers: fleetCan(role, "user_application_membership", "read"),
    manageMembers: fleetCan(role, "user_application_membership", "all"),
    removeMembers: fleetCan(role, "user_application_membership", "delete"),
    invite: fleetCan(role, "application_invite", "all"),
    readTeams: fleetCan(role, "team_application_access", "read"),
    manageTeams: fleetCan(role, "team_application_access", "all"),
    apiKeys: fleetCan(role, "api_key", "read"),
    createApiKeys: fleetCan(role, "api_key", "create"),
    addDevice: fleetCan(role, "device", "create"),
    /** Edit the release policy and steer rollouts (docs/rollouts.md): developers and administrators. */
    releasePolicy: fleetCan(role, "release_policy", "all"),
    steerRollout: fleetCan(role, "rollout", "update"),
  };
}
