import { setTimeout as sleep, setImmediate as yieldToEventLoop } from "node:timers/promises";

/**
 * Rows per statement of the batched device writes. A statement on PGlite runs on the event loop:
 * 2,000 rows of reported metrics hold it about 60 ms, 250 rows under 10 ms, so device calls are
 * answered between the pieces of a large batch. On PostgreSQL a few more statements cost nothing.
 */
export const ROWS_PER_STATEMENT = 250;

/** PostgreSQL's deadlock_detected: the statement was chosen as the victim and did nothing. */
const DEADLOCK = "40P01";
const DEADLOCK_ATTEMPTS = 3;

/**
 * Runs a batched write again when PostgreSQL picked it as a deadlock's victim. The batched writers
 * (reports, heartbeat, cloudlink state, last-seen times) update the same device rows side by
 * side, each in its own order; under thousands of devices they sometimes lock each other
 * (scripts/bench-scale.ts saw it while 6,000 devices provisioned), and a victim is safe to rerun.
 */
export async function retryOnDeadlock<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if ((error as { code?: unknown })?.code !== DEADLOCK || attempt >= DEADLOCK_ATTEMPTS) throw error;
      await sleep(Math.random() * 50 * attempt);
    }
  }
}

let lane: Promise<unknown> = Promise.resolve();

/**
 * One batched device write at a time in this process, in the order they come. Reports, heartbeat
 * states, last-seen times and cloudlink states each update many device rows in one statement, in
 * the order their join meets them: side by side they deadlocked each other while 6,000 devices
 * came up (scripts/bench-scale.ts). In one lane they cannot; a deadlock with another instance's
 * writes is run again.
 */
export function inDeviceWriteLane<T>(write: () => Promise<T>): Promise<T> {
  const run = lane.then(() => retryOnDeadlock(write));
  lane = run.catch(() => undefined);
  return run;
}

/** Runs `write` over `rows` in pieces of at most `size`, letting the event loop run in between. */
export async function inPieces<T>(rows: T[], write: (piece: T[]) => Promise<unknown>, size = ROWS_PER_STATEMENT) {
  for (let start = 0; start < rows.length; start += size) {
    if (start > 0) await yieldToEventLoop();
    const piece = rows.slice(start, start + size);
    await inDeviceWriteLane(() => write(piece));
  }
}
