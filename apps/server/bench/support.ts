import crypto from "node:crypto";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import pino from "pino";
import { buildApi, buildContext } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { type Driver, openPglite, openPostgres, pgliteDir } from "../src/db/connection.ts";
import { wrapDriver } from "../src/db/index.ts";
import { migrate } from "../src/db/migrate.ts";

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

/**
 * The real API in this process on a throwaway database (PGlite in a temporary directory, or a
 * `flotilla_bench_<random>` database next to DATABASE_URL), its statements counted, rate limits
 * out of the way. `stop` closes it and removes the database.
 */
export async function startBenchApi(kind: "pglite" | "postgres") {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-bench-"));
  const database = `flotilla_bench_${crypto.randomBytes(4).toString("hex")}`;
  if (kind === "postgres") await admin(`CREATE DATABASE ${database}`);
  const config = loadConfig({
    ...(kind === "postgres" ? { DATABASE_URL: withDatabase(database) } : {}),
    FLOTILLA_DATA_DIR: dataDir,
    FLOTILLA_CAPTCHA: "off",
    FLOTILLA_RATE_LIMIT: "10000000",
    LOG_LEVEL: "silent",
  });
  const driver = counting(
    config.databaseUrl
      ? await openPostgres(config.databaseUrl, config.databasePoolSize)
      : await openPglite({ dataDir: pgliteDir(config.dataDir) }),
  );
  await migrate(driver);
  const db = wrapDriver(driver);
  const ctx = await buildContext(config, db);
  const app = await buildApi(ctx, pino({ level: "silent" }));
  await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    config,
    db,
    ctx,
    origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    label: kind === "pglite" ? "PGlite" : `PostgreSQL (pool ${config.databasePoolSize})`,
    async stop() {
      await app.close();
      await db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (kind === "postgres") await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}
