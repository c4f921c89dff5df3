import crypto from "node:crypto";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll } from "vitest";
import { buildApi, buildContext } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { openPostgres } from "../../src/db/connection.ts";
import { type Database, wrapDriver } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { adminQuery, withDatabase } from "../global-setup.ts";

/**
 * Two API instances sharing one PostgreSQL database and one Redis (DESIGN §4): the set-up of every
 * cluster test. Runs in CI (DATABASE_URL set); skipped only when no PostgreSQL or Redis answers.
 */
export const clusterDatabaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const clusterRedisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export type Instance = {
  app: FastifyInstance;
  ctx: Awaited<ReturnType<typeof buildContext>>;
  db: Database;
  url: string;
};

/** Why a cluster test cannot run here, or undefined when PostgreSQL and Redis both answer. */
export async function clusterUnreachable(): Promise<string | undefined> {
  try {
    await adminQuery(clusterDatabaseUrl, "SELECT 1");
  } catch (error) {
    return `PostgreSQL at ${clusterDatabaseUrl} does not answer (${(error as Error).message})`;
  }
  const redis = new Redis(clusterRedisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    return `Redis at ${clusterRedisUrl} does not answer (${(error as Error).message})`;
  } finally {
    redis.disconnect();
  }
  return undefined;
}

/**
 * Inside a describe: a fresh, migrated database and two instances on it, closed and dropped after
 * the suite. The returned array is filled before the first test runs.
 */
export function useTwoInstances(label: string): Instance[] {
  const name = `flotilla_${label}_${crypto.randomBytes(6).toString("hex")}`;
  const url = withDatabase(clusterDatabaseUrl, name);
  const dataDir = fs.mkdtempSync(`${process.env.TMPDIR ?? "/tmp"}/flotilla-${label}-`);
  const instances: Instance[] = [];

  async function start(): Promise<Instance> {
    const db = wrapDriver(await openPostgres(url, 5));
    const config = loadConfig({
      DATABASE_URL: url,
      REDIS_URL: clusterRedisUrl,
      FLOTILLA_DATA_DIR: dataDir,
      FLOTILLA_CAPTCHA: "off",
      FLOTILLA_SECRET: "cluster-test-secret-of-at-least-32-bytes",
      LOG_LEVEL: "silent",
    });
    const ctx = await buildContext(config, db);
    const app = await buildApi(ctx, pino({ level: "silent" }));
    await app.listen({ port: 0, host: "127.0.0.1" });
    return { app, ctx, db, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
  }

  beforeAll(async () => {
    await adminQuery(clusterDatabaseUrl, `CREATE DATABASE ${name}`);
    const driver = await openPostgres(url, 1);
    await migrate(driver);
    await driver.close();
    instances.push(await start(), await start());
  });

  afterAll(async () => {
    // A test may have stopped an instance already (to see what happens to its sessions).
    for (const instance of instances) if (instance.app.server.listening) await instance.app.close();
    for (const instance of instances) await instance.db.close();
    await adminQuery(clusterDatabaseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  return instances;
}
