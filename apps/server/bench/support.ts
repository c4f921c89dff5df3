import pg from "pg";
import type { Driver } from "../src/db/connection.ts";

/** The benches' PostgreSQL server: DATABASE_URL, which must be on this machine. */
const baseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(baseUrl).hostname)) {
  throw new Error(`bench: DATABASE_URL must point at this machine, not ${new URL(baseUrl).hostname}`);
}

/** The URL of another database on the same server. */
export function withDatabase(database: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** One statement on the server's `postgres` database (CREATE / DROP DATABASE). */
export async function admin(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDatabase("postgres") });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Statements run through `counting(driver)` so far (a transaction counts as one). */
export let statements = 0;
export function counting(driver: Driver): Driver {
  return {
    ...driver,
    kind: driver.kind,
    query: (text, params) => {
      statements += 1;
      return driver.query(text, params);
    },
    queryArrays: (text, params) => {
      statements += 1;
      return driver.queryArrays(text, params);
    },
    transaction: (fn) => {
      statements += 1;
      return driver.transaction(fn);
    },
  };
}
