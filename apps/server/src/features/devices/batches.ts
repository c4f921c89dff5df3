import { setImmediate as yieldToEventLoop } from "node:timers/promises";

/**
 * Rows per statement of the batched device writes. A statement on PGlite runs on the event loop:
 * 2,000 rows of reported metrics hold it about 60 ms, 250 rows under 10 ms, so device calls are
 * answered between the pieces of a large batch. On PostgreSQL a few more statements cost nothing.
 */
export const ROWS_PER_STATEMENT = 250;

/** Runs `write` over `rows` in pieces of at most `size`, letting the event loop run in between. */
export async function inPieces<T>(rows: T[], write: (piece: T[]) => Promise<unknown>, size = ROWS_PER_STATEMENT) {
  for (let start = 0; start < rows.length; start += size) {
    if (start > 0) await yieldToEventLoop();
    await write(rows.slice(start, start + size));
  }
}
