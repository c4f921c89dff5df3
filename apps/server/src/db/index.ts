import { drizzle } from "drizzle-orm/pg-proxy";
import type { Config } from "../config.ts";
import { type Driver, openPglite, openPostgres, pgliteDir, type Queryable } from "./connection.ts";
import { migrate } from "./migrate.ts";
import * as schema from "./schema/index.ts";

export type { Queryable, Row } from "./connection.ts";
export { schema };

/** Drizzle over any Queryable: the same typed queries run on PGlite and PostgreSQL, in or out of a transaction. */
export function ormFor(q: Queryable) {
  return drizzle(
    async (text, params, method) => {
      if (method === "all") return { rows: await q.queryArrays(text, params) };
      const { rows } = await q.query(text, params);
      return { rows };
    },
    { schema },
  );
}

export type Orm = ReturnType<typeof ormFor>;
export type Tx = Queryable & { orm: Orm };

export type Database = {
  readonly kind: Driver["kind"];
  query: Queryable["query"];
  orm: Orm;
  /** One connection, one transaction: hold no other connection while inside. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
};

export function wrapDriver(driver: Driver): Database {
  return {
    kind: driver.kind,
    query: (text, params) => driver.query(text, params),
    orm: ormFor(driver),
    // The transaction's drizzle instance is built on first use: building one walks the whole
    // schema, which costs more than the statements of a short transaction (device registration).
    transaction: (fn) =>
      driver.transaction((q) => {
        let orm: Orm | undefined;
        const tx: Tx = {
          query: (text, params) => q.query(text, params),
          queryArrays: (text, params) => q.queryArrays(text, params),
          get orm() {
            orm ??= ormFor(q);
            return orm;
          },
        };
        return fn(tx);
      }),
    close: () => driver.close(),
  };
}

/** Opens the configured database (PostgreSQL when DATABASE_URL is set, else PGlite in the data dir) and migrates it. */
export async function openDatabase(config: Pick<Config, "databaseUrl" | "databasePoolSize" | "dataDir">) {
  const driver = config.databaseUrl
    ? await openPostgres(config.databaseUrl, config.databasePoolSize)
    : await openPglite({ dataDir: pgliteDir(config.dataDir) });
  try {
    const applied = await migrate(driver);
    return { db: wrapDriver(driver), applied };
  } catch (error) {
    await driver.close().catch(() => undefined);
    throw error;
  }
}
