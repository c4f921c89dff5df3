import { effectiveReleaseStatus } from "@flotilla/domain";
import { useQuery } from "@tanstack/react-query";
import { useSdk } from "../../app-services.tsx";
import { pineOf } from "../orgs/data.ts";

export interface ReleaseRow {
  id: number;
  commit: string;
  raw_version: string;
  is_final: boolean;
  status: string;
  created_at: string;
  start_timestamp?: string | null;
  update_timestamp?: string | null;
  is_invalidated: boolean;
}

/** The release card and list poll every 6 s (spec 2 §9). */
export const RELEASE_CARD_POLL_MS = 6000;

/** A fleet's releases whose status is success or running, newest first (spec 2 §2 "Fleet summary"). */
export function useFleetReleases(fleetId: number, options: { statuses?: string[]; poll?: boolean } = {}) {
  const sdk = useSdk();
  const statuses = options.statuses ?? ["success", "running"];
  return useQuery({
    queryKey: ["fleet", fleetId, "releases", statuses.join(",")],
    ...(options.poll ? { refetchInterval: RELEASE_CARD_POLL_MS } : {}),
    queryFn: () =>
      pineOf(sdk).get<ReleaseRow[]>({
        resource: "release",
        options: {
          $select: [
            "id",
            "commit",
            "raw_version",
            "is_final",
            "status",
            "created_at",
            "start_timestamp",
            "update_timestamp",
            "is_invalidated",
          ],
          $filter: { belongs_to__application: fleetId, status: { $in: statuses } },
          $orderby: { created_at: "desc" },
          $top: 50,
        },
      }),
  });
}

/**
 * The latest release is still building: the summary shows a build-in-progress indicator. A
 * running build with no update for 120 s is a timeout (spec 2 §4), not in progress.
 */
export const buildInProgress = (releases: readonly ReleaseRow[] | undefined, now = Date.now()) =>
  releases?.[0] && effectiveReleaseStatus(releases[0], now) === "running" ? releases[0] : undefined;

export const shortCommit = (commit: string) => commit.slice(0, 7);
