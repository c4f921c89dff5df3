import { getStatusCode } from "../../lib/errors.ts";
import { parseRetryAfter } from "../../lib/request-layer.ts";
import { type BatchResult, runBatch } from "./batch.ts";

/** Ids fetched and written per page when a batch runs over every device that matches a filter. */
export const ID_PAGE_SIZE = 500;
const PAGE_SIZE_KEY = "flotilla.batchPageSize";

/**
 * The page size of a run: ID_PAGE_SIZE, or a smaller one stored under `flotilla.batchPageSize`
 * (the end-to-end test watches the progress of 120 devices in pages of 50).
 */
export function idPageSize(stored: string | null): number {
  const size = Number.parseInt(stored ?? "", 10);
  return Number.isInteger(size) && size > 0 && size < ID_PAGE_SIZE ? size : ID_PAGE_SIZE;
}

export function storedIdPageSize(): number {
  try {
    return idPageSize(localStorage.getItem(PAGE_SIZE_KEY));
  } catch {
    return ID_PAGE_SIZE;
  }
}

/** The batch actions that can run over all matching devices: data API writes addressed by id. */
export const MATCHING_ACTIONS = ["move", "tag", "pin", "delete"] as const;
export type MatchingAction = (typeof MATCHING_ACTIONS)[number];
export const isMatchingAction = (key: string): key is MatchingAction =>
  (MATCHING_ACTIONS as readonly string[]).includes(key);

/**
 * The next page of ids: by id after the last one seen (keyset), not by `$skip`, because the action
 * may take devices out of the filter (delete, a tag the filter matches) and offsets would then skip
 * devices that still match.
 */
export function idPageFilter<F extends object>(filter: F, after: number | undefined) {
  return after === undefined ? filter : { $and: [filter, { id: { $gt: after } }] };
}

export interface PagedProgress {
  /** Devices done (succeeded or failed). */
  done: number;
  /** Devices that matched when the batch started; grows if more turn up on the way. */
  total: number;
}

/** Progress as a whole percent for the bar, 0 when nothing is known yet. */
export const progressPercent = (progress: PagedProgress) =>
  progress.total > 0 ? Math.min(100, Math.round((progress.done / progress.total) * 100)) : 0;

export interface PagedBatch<T> {
  /** Matching devices counted when the batch starts. */
  total: number;
  pageSize?: number;
  /** Up to `size` ids after `after` (ascending), by the list's filter. */
  fetchPage(after: number | undefined, size: number): Promise<number[]>;
  /** The action over one page; returns which ids succeeded and which failed. */
  applyPage(ids: number[]): Promise<BatchResult<T>>;
  onProgress?(progress: PagedProgress): void;
  /** Checked between pages: a page under way finishes, none starts after it. */
  signal?: AbortSignal;
}

/**
 * Runs an action over every matching device, page by page, so that 10,000 devices never sit in
 * the browser at once. The result is one batch result (spec 2 §4) over all pages; a page whose
 * id fetch fails ends the batch with what was done so far and the error.
 */
export async function runPagedBatch<T>(
  batch: PagedBatch<T>,
): Promise<BatchResult<T> & { cancelled: boolean; error?: unknown }> {
  const size = batch.pageSize ?? ID_PAGE_SIZE;
  const result: BatchResult<T> = { succeeded: [], failed: [] };
  const progress: PagedProgress = { done: 0, total: batch.total };
  batch.onProgress?.({ ...progress });
  let after: number | undefined;
  for (;;) {
    if (batch.signal?.aborted) return { ...result, cancelled: true };
    let ids: number[];
    try {
      ids = await batch.fetchPage(after, size);
    } catch (error) {
      return { ...result, cancelled: false, error };
    }
    if (ids.length === 0) break;
    const page = await batch.applyPage(ids);
    result.succeeded.push(...page.succeeded);
    result.failed.push(...page.failed);
    progress.done += ids.length;
    progress.total = Math.max(progress.total, progress.done);
    batch.onProgress?.({ ...progress });
    after = Math.max(...ids);
    if (ids.length < size) break;
  }
  return { ...result, cancelled: false };
}

/** One request for a whole page (a PATCH or DELETE over `id in (…)`): all its ids share the outcome. */
export async function wholePage(ids: number[], request: () => Promise<unknown>): Promise<BatchResult<number>> {
  try {
    await request();
    return { succeeded: ids, failed: [] };
  } catch (error) {
    return { succeeded: [], failed: ids.map((item) => ({ item, error })) };
  }
}

/**
 * Which devices of a page get a new tag row and which an update of the one they have: the tag
 * is unique per device and key, so existing ones take a PATCH over `$filter`, the rest a POST each.
 */
export function splitTagWrites(ids: readonly number[], tagged: ReadonlyArray<number>) {
  const has = new Set(tagged);
  return { update: ids.filter((id) => has.has(id)), create: ids.filter((id) => !has.has(id)) };
}

/** The atomicity group of a page's new tags in its `$batch`. */
export const NEW_TAGS_GROUP = "new-tags";

/**
 * A page's new tags as one `POST /v7/$batch` (the data API's JSON batch, as on pinejs): a POST
 * per device, all in one atomicity group, which the server writes in one transaction and as
 * fast as one request (apps/server/src/odata/batch.ts); each still passes the permission and the
 * hooks a POST of it would.
 */
export function newTagsBatch(devices: readonly number[], key: string, value: string) {
  return {
    requests: devices.map((device) => ({
      id: String(device),
      method: "POST",
      url: "device_tag",
      body: { device, tag_key: key, value },
      atomicityGroup: NEW_TAGS_GROUP,
    })),
  };
}

export interface BatchAnswer {
  responses?: Array<{ id: string; status: number; body?: unknown }>;
}

/**
 * The devices the batch of `newTagsBatch` tagged, or undefined when it tagged none: the group
 * was refused as a whole (a device the user may not tag, a conflict), and posting the tags one
 * by one tells which devices are refused and lets the others through.
 */
export function newTagsOutcome(devices: readonly number[], answer: BatchAnswer): BatchResult<number> | undefined {
  const created = new Set(
    (answer.responses ?? []).filter((response) => response.status === 201).map((response) => Number(response.id)),
  );
  return devices.every((device) => created.has(device)) ? { succeeded: [...devices], failed: [] } : undefined;
}

/** How often a page's batch is tried again after the rate limit refused it. */
const RATE_LIMIT_ATTEMPTS = 3;

/** The wait a 429 asks for (its Retry-After), 10 s when it names none, at most a minute. */
function retryAfterMs(error: unknown): number {
  const headers = (error as { responseHeaders?: { get?(name: string): string | null } }).responseHeaders;
  const waited = parseRetryAfter(typeof headers?.get === "function" ? headers.get("Retry-After") : null);
  return Math.min(waited ?? 10_000, 60_000);
}

/** What `createNewTags` sends through pine: a row's POST, and the batch by URL (pine's `post` takes no URL). */
export interface TagPine {
  post(params: { resource: string; body: Record<string, unknown> }): Promise<unknown>;
  request(params: { method: "POST"; url: string; body: unknown }): Promise<unknown>;
}

/**
 * New tags for `devices`: one `$batch` (`newTagsBatch`), or, when the server refuses it as a
 * whole or cannot take it, a POST per device, `concurrency` at a time, so the batch report names
 * the devices refused and the others are tagged.
 */
export async function createNewTags(
  pine: TagPine,
  devices: readonly number[],
  tag: { key: string; value: string },
  concurrency: number,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<BatchResult<number>> {
  if (devices.length === 0) return { succeeded: [], failed: [] };
  const body = newTagsBatch(devices, tag.key, tag.value);
  for (let attempt = 1; ; attempt += 1) {
    try {
      const answer = (await pine.request({ method: "POST", url: "$batch", body })) as BatchAnswer;
      const outcome = newTagsOutcome(devices, answer);
      if (outcome) return outcome;
      break;
    } catch (error) {
      // Each request of a batch counts against the rate limit: over it, posting one by one
      // would only be refused too, so the page waits for the limit's window and tries again.
      if (getStatusCode(error) === 429) {
        if (attempt > RATE_LIMIT_ATTEMPTS) return { succeeded: [], failed: devices.map((item) => ({ item, error })) };
        await sleep(retryAfterMs(error));
        continue;
      }
      // Refused or unreachable as a whole: the POSTs below answer for each device.
      break;
    }
  }
  return runBatch(
    [...devices],
    (device) => pine.post({ resource: "device_tag", body: { device, tag_key: tag.key, value: tag.value } }),
    concurrency,
  );
}
