import type { Database } from "../../db/index.ts";
import {
  listLogRetentions,
  pruneLogLinesBefore,
  pruneOrganizationLogLinesBefore,
  pruneOrganizationLogLinesBeyond,
} from "./log-queries.ts";

/**
 * Device log retention (docs/logs.md): lines older than FLOTILLA_DEVICE_LOG_RETENTION_DAYS (device
 * time) go, and each organization may keep less: a shorter age and at most N lines per device.
 * The per-device cap FLOTILLA_DEVICE_LOG_LINES is applied as lines are written (device-logs.ts).
 */

export const LOG_RETENTION_INTERVAL_MS = 10 * 60 * 1000;
/** Lines deleted per statement: each batch is a short transaction, never one holding millions of rows. */
export const LOG_PRUNE_BATCH = 5000;
const LOG_RETENTION_LOCK = 0x6c6f6773; // "logs"
const DAY_MS = 24 * 60 * 60 * 1000;

export type LogRetentionOptions = {
  /** The server's maximum age in days. */
  maxAgeDays: number;
  /** The server's lines per device (an organization's cap is at most this). */
  maxLinesPerDevice: number;
  now?: number;
  batch?: number;
};

/**
 * Prunes what retention no longer keeps, in batches; answers the lines deleted. Each batch takes
 * the advisory lock in its own transaction: an instance that finds it taken stops, so one
 * instance prunes at a time (two interleaving between batches would only both delete what is due).
 */
export async function runLogRetention(db: Database, options: LogRetentionOptions): Promise<number> {
  const now = options.now ?? Date.now();
  const batch = options.batch ?? LOG_PRUNE_BATCH;
  let total = 0;
  /** Runs `prune` until it deletes less than a batch; false when another instance holds the lock. */
  const drain = async (prune: (tx: Pick<Database, "query">) => Promise<number>): Promise<boolean> => {
    for (;;) {
      const deleted = await db.transaction(async (tx) => {
        const { rows } = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [
          LOG_RETENTION_LOCK,
        ]);
        return rows[0]?.locked ? prune(tx) : -1;
      });
      if (deleted < 0) return false;
      total += deleted;
      if (deleted < batch) return true;
    }
  };
  if (!(await drain((tx) => pruneLogLinesBefore(tx, now - options.maxAgeDays * DAY_MS, batch)))) return total;
  for (const own of await listLogRetentions(db)) {
    if (own.maxAgeDays !== null && own.maxAgeDays < options.maxAgeDays) {
      const cutoff = now - own.maxAgeDays * DAY_MS;
      if (!(await drain((tx) => pruneOrganizationLogLinesBefore(tx, own.organization, cutoff, batch)))) return total;
    }
    if (own.maxLinesPerDevice !== null && own.maxLinesPerDevice < options.maxLinesPerDevice) {
      const keep = own.maxLinesPerDevice;
      if (!(await drain((tx) => pruneOrganizationLogLinesBeyond(tx, own.organization, keep, batch)))) return total;
    }
  }
  return total;
}
