import crypto from "node:crypto";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import { inject } from "vitest";
import { buildApi, buildContext } from "../src/app.ts";
import { type Config, loadConfig } from "../src/config.ts";
import { openPglite, openPostgres } from "../src/db/connection.ts";
import { type Database, wrapDriver } from "../src/db/index.ts";
import { createFactories } from "./factories.ts";
import { adminQuery, withDatabase } from "./global-setup.ts";

declare module "vitest" {
  export interface ProvidedContext {
    pgliteSnapshot: string;
    templateDatabase: string;
  }
}

/** A throwaway database: a copy of the migrated snapshot (PGlite) or template (PostgreSQL). */
export async function createTestDatabase(): Promise<{ db: Database; drop(): Promise<void> }> {
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    const name = `flotilla_test_${crypto.randomBytes(6).toString("hex")}`;
    await adminQuery(databaseUrl, `CREATE DATABASE ${name} TEMPLATE ${inject("templateDatabase")}`);
    const db = wrapDriver(await openPostgres(withDatabase(databaseUrl, name), 5));
    return {
      db,
      async drop() {
        await db.close();
        await adminQuery(databaseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
    };
  }
  const snapshot = new Blob([fs.readFileSync(inject("pgliteSnapshot"))]);
  const db = wrapDriver(await openPglite({ loadDataDir: snapshot }));
  return { db, drop: () => db.close() };
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;

/**
 * Boots the API on a throwaway database and a free port. `url` is for real HTTP clients
 * (balena-sdk, fetch); `app.inject` is there for quick requests.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: { routes?: (app: FastifyInstance) => void; host?: string } = {},
) {
  const { db, drop } = await createTestDatabase();
  const dataDir = fs.mkdtempSync(`${process.env.TMPDIR ?? "/tmp"}/flotilla-test-`);
  const config: Config = loadConfig({
    FLOTILLA_DATA_DIR: dataDir,
    FLOTILLA_CAPTCHA: "off",
    LOG_LEVEL: "silent",
    ...env,
  });
  const ctx = await buildContext(config, db);
  const app = await buildApi(ctx, pino({ level: config.logLevel }));
  options.routes?.(app);
  const host = options.host ?? "127.0.0.1";
  await app.listen({ port: 0, host });
  const url = `${config.tls ? "https" : "http"}://${host}:${(app.server.address() as AddressInfo).port}`;

  const make = createFactories(db.orm);
  const factories = {
    ...make,
    /** A verified user and a session token for it. */
    async user(overrides: { email?: string; password?: string; username?: string } = {}) {
      const password = overrides.password ?? "correct-horse-battery";
      const created = await make.user({ ...overrides, password });
      const token = await ctx.tokens.start(created);
      return { user: created, password, token };
    },
  };

  return {
    app,
    ctx,
    db,
    config,
    url,
    factories,
    async close() {
      await app.close();
      await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
