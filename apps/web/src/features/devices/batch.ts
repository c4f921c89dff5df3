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

/**
 * Other failures next to the locked or update-required ones: how many, and their texts, so that
 * none goes unreported.
 */
export interface OtherFailures {
  count: number;
  message: string;
}

export type BatchReport<T = unknown> =
  | { severity: "success" }
  | { severity: "error"; message: string }
  | { severity: "warning"; failedCount: number; message: string }
  | { severity: "locked"; lockedCount: number; others?: OtherFailures }
  | { severity: "update_required"; denied: T[]; others?: OtherFailures };

/**
 * "Operation failed with: …" naming every different failure once, with how many items it hit
 * when more than one: "Operation failed with: No online device(s) found. (×3); Supervisor locked.".
 */
export function failureMessage(
  failed: ReadonlyArray<{ error: unknown }>,
  describe: (error: unknown) => string = errorText,
): string {
  const counts = new Map<string, number>();
  for (const failure of failed) {
    const text = describe(failure.error);
    counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  const parts = [...counts].map(([text, count]) => (count > 1 ? `${text} (×${count})` : text));
  return `Operation failed with: ${parts.join("; ")}`;
}

/**
 * A batch succeeds only when every item succeeded; when all fail it is an error ("Operation
 * failed with: …"); a partial failure is a warning naming how many failed and every failure's
 * text; an update lock asks whether to force instead; devices that need an update first are
 * named (user-actions.ts). Failures of another kind next to those are reported too (`others`).
 */
export function batchReport<T>(
  result: BatchResult<T>,
  describe: (error: unknown) => string = errorText,
): BatchReport<T> {
  const locked = result.failed.filter((failure) => isUpdateLocked(failure.error));
  const denied = result.failed.filter((failure) => !isUpdateLocked(failure.error) && isUpdateRequired(failure.error));
  const rest = result.failed.filter((failure) => !locked.includes(failure) && !denied.includes(failure));
  const others = rest.length > 0 ? { others: { count: rest.length, message: failureMessage(rest, describe) } } : {};
  if (locked.length > 0) return { severity: "locked", lockedCount: locked.length, ...others };
  if (denied.length > 0)
    return { severity: "update_required", denied: denied.map((failure) => failure.item), ...others };
  if (result.failed.length === 0) return { severity: "success" };
  const message = failureMessage(result.failed, describe);
  if (result.succeeded.length === 0) return { severity: "error", message };
  return { severity: "warning", failedCount: result.failed.length, message };
}
