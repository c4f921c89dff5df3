import fs from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import pg from "pg";

/**
 * One interface over the embedded PGlite and a PostgreSQL server, so every feature runs the
 * same code on both. A `Connection` is held by one caller at a time: the pool hands one out per
 * transaction, and PGlite, which is a single connection, is handed out under a mutex.
 */
export type Row = Record<string, unknown>;

export type QueryResult<T = Row> = { rows: T[]; rowCount: number };

export interface Queryable {
  query<T = Row>(text: string, params?: unknown[]): Promise<QueryResult<T>>;
  /** Rows as arrays of values, in column order (what drizzle's proxy driver wants). */
  queryArrays(text: string, params?: unknown[]): Promise<unknown[][]>;
}

export interface Driver extends Queryable {
  readonly kind: "pglite" | "postgres";
  /** Runs `fn` on one connection inside BEGIN … COMMIT (ROLLBACK on error). */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** PGlite only: the data directory as a tarball, to start test databases from. */
  dump?(): Promise<Blob>;
}

/**
 * A promise-chain mutex: PGlite is one connection, so statements and transactions take turns.
 * PGlite runs a statement on the event loop and resolves it in a microtask: a queue of statements
 * would run back to back with no I/O in between (2,000 device-key checks expiring together held
 * the device path for seconds). A caller that has to wait therefore starts on a later turn of
 * the event loop; one that finds the connection free starts at once.
 */
class Mutex {
  #tail: Promise<unknown> = Promise.resolve();
  #pending = 0;
  run<T>(fn: () => Promise<T>): Promise<T> {
    const waits = this.#pending > 0;
    this.#pending += 1;
    const start = waits ? this.#tail.then(() => new Promise<void>((resolve) => setImmediate(resolve))) : this.#tail;
    const result = start.then(fn).finally(() => {
      this.#pending -= 1;
    });
    this.#tail = result.catch(() => undefined);
    return result;
  }
}

export async function openPglite(options: { dataDir?: string; loadDataDir?: Blob }): Promise<Driver> {
  if (options.dataDir) fs.mkdirSync(options.dataDir, { recursive: true });
  const db = new PGlite({
    // Log search's text index (migration 0024_log_retention).
    extensions: { pg_trgm },
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  });
  await db.waitReady;
  const mutex = new Mutex();
  const raw: Queryable = {
    async query<T>(text: string, params: unknown[] = []) {
      const result = await db.query<T>(text, params);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async queryArrays(text: string, params: unknown[] = []) {
      const result = await db.query<unknown[]>(text, params, { rowMode: "array" });
      return result.rows;
    },
  };
  return {
    kind: "pglite",
    query: (text, params) => mutex.run(() => raw.query(text, params)),
    queryArrays: (text, params) => mutex.run(() => raw.queryArrays(text, params)),
    transaction: (fn) =>
      mutex.run(async () => {
        await db.exec("BEGIN");
        try {
          const result = await fn(raw);
          await db.exec("COMMIT");
          return result;
        } catch (error) {
          await db.exec("ROLLBACK");
          throw error;
        }
      }),
    close: () => mutex.run(() => db.close()),
    dump: () => mutex.run(() => db.dumpDataDir("gzip")),
  };
}

export async function openPostgres(url: string, poolSize: number): Promise<Driver> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 10_000,
    options: "-c jit=off",
  });
  // An idle client that errors (e.g. the server restarts) must not crash the process.
  pool.on("error", () => undefined);
  const over = (client: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(text: string, params: unknown[] = []) {
      const result = await client.query(text, params);
      return { rows: result.rows as T[], rowCount: result.rowCount ?? result.rows.length };
    },
    async queryArrays(text: string, params: unknown[] = []) {
      const result = await client.query({ text, values: params, rowMode: "array" });
      return result.rows as unknown[][];
    },
  });
  // Fail at start, with the server's own words, when the database cannot be reached.
  const probe = await pool.connect();
  probe.release();
  return {
    kind: "postgres",
    ...over(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await fn(over(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

export function pgliteDir(dataDir: string): string {
  return path.join(dataDir, "pglite");
}
