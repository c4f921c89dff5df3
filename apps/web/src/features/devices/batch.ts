import { errorText, getStatusCode, isUpdateRequired } from "../../lib/errors.ts";

/** Outcome of running one action over several selected items (spec 2 §4 "Batch actions"). */
export interface BatchResult<T> {
  succeeded: T[];
  failed: Array<{ item: T; error: unknown }>;
}

/** Runs `action` over the items, at most `concurrency` at a time, and collects what failed. */
export async function runBatch<T>(
  items: readonly T[],
  action: (item: T) => Promise<unknown>,
  concurrency = 10,
): Promise<BatchResult<T>> {
  const result: BatchResult<T> = { succeeded: [], failed: [] };
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      try {
        await action(item);
        result.succeeded.push(item);
      } catch (error) {
        result.failed.push({ item, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return result;
}

/** The supervisor answers 423 when an update lock blocks the action (balena's SupervisorLocked). */
export function isUpdateLocked(error: unknown): boolean {
  return getStatusCode(error) === 423 || (error as { code?: unknown })?.code === "BalenaSupervisorLockedError";
}

export type BatchReport<T = unknown> =
  | { severity: "success" }
  | { severity: "error"; message: string }
  | { severity: "warning"; failedCount: number; message: string }
  | { severity: "locked"; lockedCount: number }
  | { severity: "update_required"; denied: T[] };

/**
 * A batch succeeds when at least one item succeeded; when all fail it is an error ("Operation
 * failed with: …"); a partial failure is a warning naming how many failed; an update lock asks
 * whether to force instead; devices that need an update first are named (user-actions.ts).
 */
export function batchReport<T>(result: BatchResult<T>): BatchReport<T> {
  const locked = result.failed.filter((failure) => isUpdateLocked(failure.error));
  if (locked.length > 0) return { severity: "locked", lockedCount: locked.length };
  const denied = result.failed.filter((failure) => isUpdateRequired(failure.error)).map((failure) => failure.item);
  if (denied.length > 0) return { severity: "update_required", denied };
  if (result.failed.length === 0) return { severity: "success" };
  const first = result.failed[0];
  const message = `Operation failed with: ${errorText(first?.error)}`;
  if (result.succeeded.length === 0) return { severity: "error", message };
  return { severity: "warning", failedCount: result.failed.length, message };
}
