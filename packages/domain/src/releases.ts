/**
 * Releases and builds (spec 2 §3 "Release", §4 "Build and release status", "Release rules", §9).
 * Shared by the builder and the release hooks on the server and by the dashboard's release pages.
 */

export const RELEASE_STATUSES = [
  "cancelled",
  "interrupted",
  "error",
  "timeout",
  "failed",
  "local",
  "running",
  "success",
] as const;
export type ReleaseStatus = (typeof RELEASE_STATUSES)[number];

/** What a status shows as (spec 2 §4 "Build and release status"). */
export type ReleaseStatusDisplay = "running" | "cancelled" | "failed" | "local" | "succeeded";

/** A build still running with no update for more than this shows as timeout (spec 2 §4, §9). */
export const BUILD_TIMEOUT_MS = 120_000;

/** Release lists page by 50; the list and the fleet's release card poll every 6 s, release data every 15 s (spec 2 §9). */
export const RELEASE_PAGE_SIZE = 50;
export const RELEASE_LIST_POLL_MS = 6000;
export const RELEASE_REFETCH_MS = 15_000;
/** The build-log terminal shows at most this many lines, with a truncation notice (spec 2 §9). */
export const BUILD_LOG_MAX_LINES = 2999;
/** Known issues and notes are saved 500 ms after the last keystroke (spec 2 §9). */
export const RELEASE_TEXT_DEBOUNCE_MS = 500;
/** Release tag writes run 50 at a time (spec 2 §7 "Releases"). */
export const RELEASE_TAG_CONCURRENCY = 50;
/** The picker entries "track latest" and "No release" both carry id -1 (spec 2 §4 "Release rules"). */
export const TRACK_LATEST_RELEASE_ID = -1;
export const NO_RELEASE_ID = -1;

/**
 * The status a release has now: a running build whose last update (or start) is more than
 * 120 s old is a timeout.
 */
export function effectiveReleaseStatus(
  release: { status: string; update_timestamp?: string | null; start_timestamp?: string | null; created_at?: string },
  now: number = Date.now(),
): string {
  if (release.status !== "running") return release.status;
  const last = release.update_timestamp ?? release.start_timestamp ?? release.created_at;
  if (last && now - Date.parse(last) > BUILD_TIMEOUT_MS) return "timeout";
  return "running";
}

/** The display mapping of spec 2 §4: running; cancelled/interrupted → cancelled; error/failed/timeout → failed; local; else succeeded. */
export function releaseStatusDisplay(status: string): ReleaseStatusDisplay {
  switch (status) {
    case "running":
      return "running";
    case "cancelled":
    case "interrupted":
      return "cancelled";
    case "error":
    case "failed":
    case "timeout":
      return "failed";
    case "local":
      return "local";
    default:
      return "succeeded";
  }
}

/** Failed-type releases (shown as failed or cancelled) cannot be validated (spec 2 §4). */
export function isFailedTypeRelease(status: string): boolean {
  const shown = releaseStatusDisplay(status);
  return shown === "failed" || shown === "cancelled";
}

/** A release with more than 2 images counts as multicontainer (spec 2 §3, §9). */
export const isMulticontainerRelease = (imageCount: number) => imageCount > 2;

/**
 * The release version edit accepts three-part semver only (spec 2 §5, §7): `1.2.3`, no
 * pre-release or build part. Returns the parts, or undefined when the text is not one.
 */
export function parseThreePartSemver(text: string): { major: number; minor: number; patch: number } | undefined {
  const match = /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})$/.exec(text.trim());
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
}

/**
 * Read-only users of a release (spec 2 §2 "Release summary"): observers, or members with no
 * developer, administrator, operator or support_agent role. The safe variants count as their
 * full role here: they may edit releases (safe-developer) or act on devices (safe-operator).
 */
const RELEASE_EDITOR_ROLES = [
  "administrator",
  "developer",
  "safe-developer",
  "operator",
  "safe-operator",
  "support_agent",
  "balena_admin",
];
export const isReleaseReadOnly = (roles: readonly string[]) =>
  !roles.some((role) => RELEASE_EDITOR_ROLES.includes(role));

/** Release warning and error texts (spec 2 §8 keys; the texts are Flotilla's where the spec names only the key). */
export const RELEASE_TEXTS = {
  will_not_be_able_to_unfinalize: "Finalizing is one way: you will not be able to turn this release back into a draft.",
  already_finalized: "This release is already finalized.",
  cannot_validate_failed_releases: "Failed or cancelled releases cannot be marked valid.",
  cannot_delete_pinned_releases: "A release that a fleet or a device is pinned to (or targets) cannot be deleted.",
  invalidating_will_update_unpinned_devices:
    "Invalidating this release will update the devices that are not pinned to it to the fleet's latest valid release.",
  release_panel_create_filter: "The release filter could not be built.",
  could_not_parse_composition_data: "Could not parse the composition data.",
  no_dockerfile_available: "No Dockerfile available for this service.",
  build_failed: "build failed",
  build_cancelled: "build cancelled",
  build_timed_out: "build timed out",
  release_ambiguous: "Release is ambiguous: multiple releases match the hash",
} as const;
