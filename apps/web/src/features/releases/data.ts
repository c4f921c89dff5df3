import { RELEASE_LIST_POLL_MS, RELEASE_PAGE_SIZE, RELEASE_REFETCH_MS, RELEASE_TAG_CONCURRENCY } from "@flotilla/domain";
import { keepPreviousData, type QueryClient, queryOptions, useQuery, useQueryClient } from "@tanstack/react-query";
import { useParams } from "@tanstack/react-router";
import { useSdk } from "../../app-services.tsx";
import { createConcurrencyLimiter } from "../../lib/concurrency.ts";
import { responseError } from "../../lib/errors.ts";
import { shouldThrowQueryError } from "../../lib/query-client.ts";
import { saveBlob } from "../../lib/save-blob.ts";
import type { Sdk } from "../../lib/sdk.ts";
import { useFleet } from "../fleet-access/data.ts";
import { pineOf } from "../orgs/data.ts";
import { type AssetRow, ReleaseFilterError, releaseAbilities, releaseListFilter } from "./model.ts";

/** Release data as the pages read it (spec 2 §3 "Release", §7 "Releases"). */

export interface ReleaseTag {
  id: number;
  tag_key: string;
  value: string;
}

export interface ReleaseListRow {
  id: number;
  commit: string;
  raw_version: string;
  status: string;
  source: string | null;
  created_at: string;
  start_timestamp: string | null;
  update_timestamp: string | null;
  end_timestamp: string | null;
  is_final: boolean;
  is_invalidated: boolean;
  known_issue_list: string | null;
  is_created_by__user: Array<{ id: number; username: string }>;
  release_tag: ReleaseTag[];
  /** Devices running the release (fleets only). */
  is_running_on__device?: number;
}

export interface ReleaseImage {
  id: number;
  image_size: number | string | null;
  status: string;
  dockerfile: string | null;
  is_stored_at__image_location: string;
  /** The manifest digest in the registry (`sha256:…`) once the builder pushed the image. */
  content_hash: string | null;
  start_timestamp: string | null;
  end_timestamp: string | null;
  push_timestamp: string | null;
  error_message: string | null;
  is_a_build_of__service: Array<{ id: number; service_name: string }>;
}

export interface Release extends Omit<ReleaseListRow, "is_running_on__device"> {
  semver_major: number;
  semver_minor: number;
  semver_patch: number;
  revision: number | null;
  note: string | null;
  composition: unknown;
  build_log: string | null;
  is_finalized_at__date: string | null;
  belongs_to__application: Array<{ id: number }>;
  release_asset: AssetRow[];
  release_image: Array<{ id: number; image: ReleaseImage[] }>;
  is_running_on__device: number;
  should_be_running_on__application: number;
  /** Devices pinned to the release (the model names the link `should_be_running_on__device`). */
  should_be_running_on__device: number;
}

const LIST_FIELDS = [
  "id",
  "commit",
  "raw_version",
  "status",
  "source",
  "created_at",
  "start_timestamp",
  "update_timestamp",
  "end_timestamp",
  "is_final",
  "is_invalidated",
  "known_issue_list",
] as const;

const USER = { $select: ["id", "username"] };
const TAGS = { $select: ["id", "tag_key", "value"], $orderby: { tag_key: "asc" } };

export interface ReleaseListQuery {
  fleetId: number;
  page: number;
  search: string;
  /** Fleets show how many devices run each release (spec 2 §2: more columns than blocks). */
  withDevices: boolean;
}

/**
 * One page of 50 of a fleet's releases, newest first, and the total (spec 2 §7, §9), polled
 * every 6 s. The filter is built first: a failure to build it is its own error.
 */
export function useReleaseList(query: ReleaseListQuery) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["fleet", query.fleetId, "release-list", query],
    placeholderData: keepPreviousData,
    enabled: query.fleetId > 0,
    refetchInterval: RELEASE_LIST_POLL_MS,
    // A search text that cannot be a filter is shown under the search box, not as the error page.
    throwOnError: (error, query) => !(error instanceof ReleaseFilterError) && shouldThrowQueryError(error, query),
    queryFn: async () => {
      const $filter = releaseListFilter(query.fleetId, query.search);
      const [rows, total] = await Promise.all([
        pineOf(sdk).get<ReleaseListRow[]>({
          resource: "release",
          options: {
            $select: [...LIST_FIELDS],
            $filter,
            $expand: {
              is_created_by__user: USER,
              release_tag: TAGS,
              ...(query.withDevices ? { is_running_on__device: { $count: {} } } : {}),
            },
            $orderby: [{ created_at: "desc" }, { id: "desc" }],
            $top: RELEASE_PAGE_SIZE,
            $skip: query.page * RELEASE_PAGE_SIZE,
          },
        }),
        pineOf(sdk).get<number>({ resource: "release", options: { $count: { $filter } } }),
      ]);
      return { rows, total };
    },
  });
}

/** One release of a fleet, with everything the summary shows; null when the fleet has no such release. */
export function releaseQuery(sdk: Sdk, fleetId: number, releaseId: number) {
  return queryOptions({
    queryKey: ["release", releaseId, fleetId],
    queryFn: async () => {
      const rows = await pineOf(sdk).get<Release[]>({
        resource: "release",
        options: {
          $select: [
            ...LIST_FIELDS,
            "semver_major",
            "semver_minor",
            "semver_patch",
            "revision",
            "note",
            "composition",
            "build_log",
            "is_finalized_at__date",
          ],
          $filter: { id: releaseId, belongs_to__application: fleetId },
          $expand: {
            belongs_to__application: { $select: "id" },
            is_created_by__user: USER,
            release_tag: TAGS,
            release_asset: { $select: ["id", "asset_key", "asset"], $orderby: { asset_key: "asc" } },
            release_image: {
              $select: "id",
              $expand: {
                image: {
                  $select: [
                    "id",
                    "image_size",
                    "status",
                    "dockerfile",
                    "is_stored_at__image_location",
                    "content_hash",
                    "start_timestamp",
                    "end_timestamp",
                    "push_timestamp",
                    "error_message",
                  ],
                  $expand: { is_a_build_of__service: { $select: ["id", "service_name"] } },
                },
              },
            },
            is_running_on__device: { $count: {} },
            should_be_running_on__application: { $count: {} },
            should_be_running_on__device: { $count: {} },
          },
        },
      });
      return rows[0] ?? null;
    },
  });
}

/** A commit prefix a release URL may carry instead of the id: 7 to 40 hex digits with a letter in them. */
export const isCommitPrefix = (text: string) => /^[0-9a-f]{7,40}$/i.test(text) && /[a-f]/i.test(text);

/**
 * The release of a fleet a commit prefix in a URL names (spec 2 §8): its id when exactly one
 * release of the fleet starts with it, "ambiguous" when several do, else undefined.
 */
export async function resolveCommitPrefix(
  sdk: Sdk,
  fleetId: number,
  prefix: string,
): Promise<number | "ambiguous" | undefined> {
  if (!isCommitPrefix(prefix)) return undefined;
  const rows = await pineOf(sdk).get<Array<{ id: number }>>({
    resource: "release",
    options: {
      $select: "id",
      $filter: { belongs_to__application: fleetId, commit: { $startswith: prefix.toLowerCase() } },
      $top: 2,
    },
  });
  return rows.length > 1 ? "ambiguous" : rows[0]?.id;
}

export const loadRelease = (queryClient: QueryClient, sdk: Sdk, fleetId: number, releaseId: number) =>
  queryClient.ensureQueryData(releaseQuery(sdk, fleetId, releaseId));

/** The release page re-reads its release every 15 s, every 6 s while the build runs (spec 2 §9). */
export function useRelease(fleetId: number, releaseId: number) {
  const sdk = useSdk();
  return useQuery({
    ...releaseQuery(sdk, fleetId, releaseId),
    enabled: fleetId > 0 && releaseId > 0,
    refetchInterval: (query) => (query.state.data?.status === "running" ? RELEASE_LIST_POLL_MS : RELEASE_REFETCH_MS),
  });
}

/** The fleet and release of a `/…/{fleetId}/releases/{releaseId}` page, and what the caller may do. */
export function usePageRelease() {
  const params = useParams({ strict: false }) as { fleetId?: string; releaseId?: string };
  const fleetId = Number(params.fleetId);
  const releaseId = Number(params.releaseId);
  const fleet = useFleet(fleetId);
  const release = useRelease(fleetId, releaseId);
  return {
    fleetId,
    releaseId,
    fleet: fleet.data ?? undefined,
    release: release.data ?? undefined,
    releaseQuery: release,
    abilities: releaseAbilities(fleet.data?.user_access_roles),
  };
}

/** The invalidations a release write makes: the release, the fleet's lists and cards. */
export function useReleaseRefresh() {
  const queryClient = useQueryClient();
  return async (fleetId: number, releaseId?: number) => {
    await Promise.all([
      releaseId === undefined ? undefined : queryClient.invalidateQueries({ queryKey: ["release", releaseId] }),
      queryClient.invalidateQueries({ queryKey: ["fleet", fleetId] }),
      queryClient.invalidateQueries({ queryKey: ["release-picker", fleetId] }),
    ]);
  };
}

export interface PickerRelease {
  id: number;
  commit: string;
  end_timestamp: string | null;
  raw_version: string;
  known_issue_list: string | null;
  release_tag: ReleaseTag[];
}

/**
 * The releases a picker offers (spec 2 §7 "Releases"): successful and not invalidated, the
 * newest 50 with id, commit, end_timestamp, raw_version, known issues and tags.
 */
export function usePickerReleases(fleetId: number | undefined) {
  const sdk = useSdk();
  return useQuery({
    // A failed load is a danger toast (spec 2 §8 Behaviour), not the error page.
    meta: { reportErrors: true },
    queryKey: ["release-picker", fleetId],
    enabled: fleetId !== undefined && fleetId > 0,
    queryFn: () =>
      pineOf(sdk).get<PickerRelease[]>({
        resource: "release",
        options: {
          $select: ["id", "commit", "end_timestamp", "raw_version", "known_issue_list"],
          $filter: { belongs_to__application: fleetId, status: "success", is_invalidated: false },
          $expand: { release_tag: TAGS },
          $orderby: [{ created_at: "desc" }, { id: "desc" }],
          $top: RELEASE_PAGE_SIZE,
          $skip: 0,
        },
      }),
  });
}

/** One tag change of the tags dialog. */
export type TagChange = { kind: "set"; key: string; value: string } | { kind: "remove"; key: string };

/** The writes that turn `before` into `after` (keys trimmed; unchanged tags are left alone). */
export function tagChanges(
  before: ReadonlyArray<{ tag_key: string; value: string }>,
  after: ReadonlyArray<{ key: string; value: string }>,
): TagChange[] {
  const next = new Map(after.map((row) => [row.key.trim(), row.value]));
  const removed: TagChange[] = before
    .filter((tag) => !next.has(tag.tag_key))
    .map((tag) => ({ kind: "remove", key: tag.tag_key }));
  const set: TagChange[] = [...next.entries()]
    .filter(([key, value]) => before.find((tag) => tag.tag_key === key)?.value !== value)
    .map(([key, value]) => ({ kind: "set", key, value }));
  return [...removed, ...set];
}

/** Writes the tag changes of a release, 50 at a time (spec 2 §7, §9). Rejects with the first failure. */
export async function writeReleaseTags(sdk: Sdk, releaseId: number, changes: readonly TagChange[]) {
  const limiter = createConcurrencyLimiter(RELEASE_TAG_CONCURRENCY);
  const results = await Promise.allSettled(
    changes.map((change) =>
      limiter.run(() =>
        change.kind === "set"
          ? sdk.models.release.tags.set(releaseId, change.key, change.value)
          : sdk.models.release.tags.remove(releaseId, change.key),
      ),
    ),
  );
  const failed = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
  if (failed) throw failed.reason;
}

/** Deletes releases in one request by id list (spec 2 §7). */
export const deleteReleases = (sdk: Sdk, ids: readonly number[]) =>
  (sdk.pine as unknown as { delete(params: { resource: string; options: object }): Promise<unknown> }).delete({
    resource: "release",
    options: { $filter: { id: { $in: [...ids] } } },
  });

/**
 * Reads an asset with the bearer token (spec 2 §7: release assets are read with bearer
 * authentication) and saves it under its file name.
 */
export async function downloadAsset(sdk: Sdk, asset: AssetRow) {
  const href = asset.asset?.href;
  if (!href) throw new Error("The asset has no download address");
  const token = await sdk.auth.getToken();
  const response = await fetch(href, { headers: { Authorization: `Bearer ${token}` } });
  if (!response.ok) throw await responseError(response);
  saveBlob(await response.blob(), asset.asset?.filename ?? asset.asset_key.split("/").pop() ?? "asset");
}

/**
 * The version of the `flotilla` CLI the server offers, read from `{api}/cli/package.json`
 * without a token (spec 2 §7 "Keys and other"); undefined when the server does not serve it.
 */
export function useCliVersion(apiUrl: string) {
  return useQuery({
    queryKey: ["cli-version", apiUrl],
    staleTime: 10 * 60_000,
    retry: false,
    queryFn: async () => {
      try {
        const response = await fetch(`${apiUrl}/cli/package.json`, { credentials: "omit" });
        if (!response.ok) return null;
        const body = (await response.json()) as { version?: unknown };
        return typeof body.version === "string" ? body.version : null;
      } catch {
        return null;
      }
    },
  });
}
