import {
  BUILD_LOG_MAX_LINES,
  BUILD_TIMEOUT_MS,
  effectiveReleaseStatus,
  isReleaseReadOnly,
  type ReleaseStatusDisplay,
  releaseStatusDisplay,
} from "@flotilla/domain";
import { fleetCan, fleetRoleOf } from "../orgs/access.ts";

/**
 * Pure rules of the release pages (spec 2 §2 "Releases list", "Release summary", §4, §7, §9):
 * the search filter, the status shown, durations and sizes, the build log's last lines, the
 * assets tree, the composition as YAML, and the server's release error codes.
 */

/** What the caller may do with a fleet's releases (the fleet role table of packages/domain). */
export function releaseAbilities(userAccessRoles: ReadonlyArray<{ role: string }> | undefined) {
  const roles = (userAccessRoles ?? []).map((row) => row.role);
  const role = fleetRoleOf(roles);
  return {
    role,
    /** Observers and members without an editing role see no edit buttons, logs, compose or tags (spec 2 §2). */
    readOnly: isReleaseReadOnly(roles),
    /** resin.release.update: the release settings page and its edits (spec 1 §2.2). */
    update: fleetCan(role, "release", "update"),
    delete: fleetCan(role, "release", "delete"),
    setTags: fleetCan(role, "release_tag", "create") && fleetCan(role, "release_tag", "update"),
    removeTags: fleetCan(role, "release_tag", "delete"),
    /** application.push: who may push a release (the add-release dialog's commands work for them). */
    push: fleetCan(role, "application", "push"),
  };
}
export type ReleaseAbilities = ReturnType<typeof releaseAbilities>;

/** Search terms longer than this cannot be sent as a filter (the API bounds its inputs). */
export const RELEASE_SEARCH_MAX_LENGTH = 200;

export class ReleaseFilterError extends Error {}

/** Why a search text cannot be a release filter, said to the user (spec 2 §5); undefined when it can. */
export function releaseSearchProblem(text: string): "too_long" | "control_characters" | undefined {
  const term = text.trim();
  if (term.length > RELEASE_SEARCH_MAX_LENGTH) return "too_long";
  // Control characters cannot travel in an OData string literal.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: that is the point of the check
  if (/[\u0000-\u001f]/.test(term)) return "control_characters";
  return undefined;
}

/**
 * The list's `$filter`: the fleet's releases whose raw_version (or commit) contains the search
 * text, or that have a tag whose key or value contains it (spec 2 §5: contains, case-insensitive).
 * Throws ReleaseFilterError when the text cannot be a filter (errors.release_panel_create_filter).
 */
export function releaseListFilter(fleetId: number, text: string): Record<string, unknown> {
  if (!Number.isSafeInteger(fleetId) || fleetId <= 0) throw new ReleaseFilterError(`bad fleet id ${fleetId}`);
  const problem = releaseSearchProblem(text);
  if (problem) throw new ReleaseFilterError(problem);
  const term = text.trim().toLowerCase();
  if (!term) return { belongs_to__application: fleetId };
  const contains = (field: string | [string, string]) => ({ $contains: [{ $tolower: { $: field } }, term] });
  return {
    belongs_to__application: fleetId,
    $or: [
      contains("raw_version"),
      contains("commit"),
      {
        release_tag: {
          $any: { $alias: "rt", $expr: { $or: [contains(["rt", "tag_key"]), contains(["rt", "value"])] } },
        },
      },
    ],
  };
}

type StatusFields = {
  status: string;
  update_timestamp?: string | null;
  start_timestamp?: string | null;
  created_at?: string;
};

/** What a release shows as now: the spec's display mapping with the 120 s build timeout (spec 2 §4). */
export const shownStatus = (release: StatusFields, now = Date.now()): ReleaseStatusDisplay =>
  releaseStatusDisplay(effectiveReleaseStatus(release, now));

/**
 * How long the build took: end − start, or start → now while it runs; undefined when unknown. A
 * running build that timed out (no update for 120 s, spec 2 §4: shown as failed) stopped at its
 * failure, the moment it timed out, so its duration no longer counts up.
 */
export function buildDurationMs(
  release: {
    start_timestamp: string | null;
    end_timestamp: string | null;
    status: string;
    update_timestamp?: string | null;
    created_at?: string;
  },
  now = Date.now(),
): number | undefined {
  if (!release.start_timestamp) return undefined;
  const start = Date.parse(release.start_timestamp);
  const lastSign = release.update_timestamp ?? release.start_timestamp;
  const end = release.end_timestamp
    ? Date.parse(release.end_timestamp)
    : release.status !== "running"
      ? Number.NaN
      : effectiveReleaseStatus(release, now) === "timeout"
        ? Date.parse(lastSign) + BUILD_TIMEOUT_MS
        : now;
  if (Number.isNaN(start) || Number.isNaN(end) || end < start) return undefined;
  return end - start;
}

/** 0 → "0s", 65 000 → "1m 5s", 3 723 000 → "1h 2m 3s". */
export function formatDuration(ms: number): string {
  const total = Math.round(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (hours > 0) return `${hours}h ${minutes}m ${seconds}s`;
  if (minutes > 0) return `${minutes}m ${seconds}s`;
  return `${seconds}s`;
}

/** The release's size: the sum of its images' sizes (Big Integer may come as a string); undefined when none is known. */
export function totalImageSize(images: ReadonlyArray<{ image_size: number | string | null }>): number | undefined {
  const sizes = images
    .map((image) => (image.image_size === null ? Number.NaN : Number(image.image_size)))
    .filter((size) => Number.isFinite(size));
  return sizes.length === 0 ? undefined : sizes.reduce((sum, size) => sum + size, 0);
}

/** The build log's last 2,999 lines (spec 2 §9) and whether lines were cut. */
export function buildLogTail(log: string | null | undefined, max = BUILD_LOG_MAX_LINES) {
  const text = (log ?? "").replace(/\r?\n$/, "");
  if (!text) return { lines: [] as string[], truncated: false, total: 0 };
  const lines = text.split(/\r?\n/);
  return { lines: lines.slice(-max), truncated: lines.length > max, total: lines.length };
}

export interface AssetRow {
  id: number;
  asset_key: string;
  asset: { filename?: string; size?: number; href?: string; content_type?: string } | null;
}

export interface AssetNode {
  name: string;
  path: string;
  asset?: AssetRow;
  children: AssetNode[];
}

/** Release assets as a tree: asset_key paths split on "/", folders first, then by name (spec 2 §2). */
export function assetTree(assets: readonly AssetRow[]): AssetNode[] {
  const root: AssetNode = { name: "", path: "", children: [] };
  for (const asset of assets) {
    const parts = asset.asset_key.split("/").filter(Boolean);
    if (parts.length === 0) continue;
    let node = root;
    parts.forEach((part, index) => {
      const path = parts.slice(0, index + 1).join("/");
      const leaf = index === parts.length - 1;
      let child = node.children.find(
        (candidate) => candidate.name === part && (leaf ? !!candidate.asset : !candidate.asset),
      );
      if (!child) {
        child = { name: part, path, children: [], ...(leaf ? { asset } : {}) };
        node.children.push(child);
      }
      node = child;
    });
  }
  const sort = (nodes: AssetNode[]): AssetNode[] =>
    nodes
      .map((node) => ({ ...node, children: sort(node.children) }))
      .sort((a, b) => Number(!!a.asset) - Number(!!b.asset) || a.name.localeCompare(b.name));
  return sort(root.children);
}

/** Release rules the server names in X-Flotilla-Error-Code (docs/releases.md) and their texts' keys. */
const RELEASE_ERROR_KEYS = {
  already_finalized: "warnings.already_finalized",
  cannot_unfinalize: "warnings.will_not_be_able_to_unfinalize",
  cannot_validate_failed_releases: "warnings.cannot_validate_failed_releases",
  cannot_delete_pinned_releases: "warnings.cannot_delete_pinned_releases",
  release_not_selectable: "releases.errors.release_not_selectable",
  release_version_invalid: "releases.errors.version_invalid",
} as const;
export type ReleaseErrorKey = (typeof RELEASE_ERROR_KEYS)[keyof typeof RELEASE_ERROR_KEYS];

/** The catalogue code of a failed API answer: the X-Flotilla-Error-Code header, or a JSON body's `code`. */
export function apiErrorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const headers = (error as { responseHeaders?: { get?: (name: string) => string | null } }).responseHeaders;
  const fromHeader = typeof headers?.get === "function" ? headers.get("x-flotilla-error-code") : null;
  if (fromHeader) return fromHeader;
  const body = (error as { body?: unknown }).body;
  if (typeof body === "object" && body !== null && typeof (body as { code?: unknown }).code === "string") {
    return (body as { code: string }).code;
  }
  return undefined;
}

/** The i18n key of a release rule the server refused, when the error is one. */
export function releaseErrorKey(error: unknown): ReleaseErrorKey | undefined {
  const code = apiErrorCode(error);
  if (code && code in RELEASE_ERROR_KEYS) return RELEASE_ERROR_KEYS[code as keyof typeof RELEASE_ERROR_KEYS];
  return undefined;
}

/**
 * A draft's mark in balena's raw version: its creation time in ms (13 digits), after `-` or after
 * the prerelease's `.`, before any `+build` (`1.2.3-1732847362123`, `1.2.3-beta.1732847362123+b3`).
 */
const DRAFT_TIME = /[-.]\d{13}(?=\+|$)/;

/** Whether a release is a draft: `is_final` when it was read, else the raw version's draft mark. */
export const isDraft = (release: { raw_version: string; is_final?: boolean }) =>
  release.is_final === undefined ? DRAFT_TIME.test(release.raw_version) : !release.is_final;

/**
 * A release's version for people: its raw version, a draft's without the creation time balena
 * appends until it is finalized (`1.2.3-1732847362123` shows as `1.2.3`, with a Draft flag).
 */
export const versionText = (release: { raw_version: string; is_final?: boolean }) =>
  isDraft(release) ? release.raw_version.replace(DRAFT_TIME, "") : release.raw_version;

/** A release's label in pickers and crumbs: "1.2.3 (abcdef1)". */
export const releaseLabel = (release: { raw_version: string; is_final?: boolean; commit: string }) =>
  `${versionText(release)} (${release.commit.slice(0, 7)})`;

/** The semver text of a release for the version edit: major.minor.patch. */
export const semverText = (release: { semver_major: number; semver_minor: number; semver_patch: number }) =>
  `${release.semver_major}.${release.semver_minor}.${release.semver_patch}`;
