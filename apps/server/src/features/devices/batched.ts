import DataLoader from "dataloader";
import { inDeviceWriteLane, ROWS_PER_STATEMENT } from "./batches.ts";

/**
 * Look-ups that every device makes when it (re)connects, gathered into one statement per turn of
 * the event loop: after a restart thousands of devices arrive at once, and one statement each
 * would queue thousands on the pool. `load` answers for one key; `loadMany` runs for the batch.
 */
export function batchedLookup<K, V>(loadMany: (keys: readonly K[]) => Promise<Map<K, V>>) {
  const loader = new DataLoader<K, V | undefined>(
    async (keys) => {
      const found = await loadMany(keys);
      return keys.map((key) => found.get(key));
    },
    { cache: false, maxBatchSize: ROWS_PER_STATEMENT, batchScheduleFn: (run) => setImmediate(run) },
  );
  return (key: K) => loader.load(key);
}

/**
 * Writes gathered for `delayMs` into one statement, run in the device write lane (batches.ts), so
 * that a later write of the same row never lands before an earlier one. `write` gets the items in
 * call order and may answer an array with a result (R) for each, in the same order.
 */
export function batchedWrite<T, R = undefined>(write: (items: readonly T[]) => Promise<unknown>, delayMs: number) {
  const loader = new DataLoader<T, R | undefined>(
    async (items) => {
      const results = await inDeviceWriteLane(() => write(items));
      return items.map((_, index) => (Array.isArray(results) ? (results[index] as R | undefined) : undefined));
    },
    { cache: false, maxBatchSize: ROWS_PER_STATEMENT, batchScheduleFn: (run) => setTimeout(run, delayMs) },
  );
  return (item: T) => loader.load(item);
}
