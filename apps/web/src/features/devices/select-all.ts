import type { BatchResult } from "./batch.ts";

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
