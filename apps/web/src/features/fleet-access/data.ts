import { useQuery } from "@tanstack/react-query";
import { useSdk } from "../../app-services.tsx";
import { type ApplicationClass, fleetCan, fleetRoleOf } from "../orgs/access.ts";
import { pineOf } from "../orgs/data.ts";

export interface Fleet {
  id: number;
  app_name: string;
  slug: string;
  is_of__class: ApplicationClass;
  created_at: string;
  organization: Array<{ id: number; name: string; handle: string }>;
  user_access_roles: Array<{ role: string }>;
}

/** One fleet (app, block) with the caller's roles on it (`user_access_roles` = their fleet_access rows). */
export function useFleet(fleetId: number, enabled = true) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["fleet", fleetId],
    enabled,
    queryFn: () =>
      pineOf(sdk).get<Fleet | undefined>({
        resource: "application",
        id: fleetId,
        options: {
          $select: ["id", "app_name", "slug", "is_of__class", "created_at"],
          $expand: {
            organization: { $select: ["id", "name", "handle"] },
            user_access_roles: { $select: "role" },
          },
        },
      }),
  });
}

/** What the caller may do on this fleet, from the fleet role table (packages/domain). */
export function fleetAbilities(fleet: Pick<Fleet, "user_access_roles"> | undefined) {
  const role = fleetRoleOf((fleet?.user_access_roles ?? []).map((row) => row.role));
  return {
    role,
    read: fleetCan(role, "application", "read"),
    update: fleetCan(role, "application", "update"),
    /** Settings are hidden for observers (spec 1 §2.5, spec 2 §2). */
    settings: role !== "observer" && role !== "member",
    readMembers: fleetCan(role, "user_application_membership", "read"),
    manageMembers: fleetCan(role, "user_application_membership", "all"),
    removeMembers: fleetCan(role, "user_application_membership", "delete"),
    invite: fleetCan(role, "application_invite", "all"),
    readTeams: fleetCan(role, "team_application_access", "read"),
    manageTeams: fleetCan(role, "team_application_access", "all"),
    apiKeys: fleetCan(role, "api_key", "read"),
  };
}
