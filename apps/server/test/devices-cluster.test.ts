import crypto from "node:crypto";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApi, buildContext } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { openPostgres } from "../src/db/connection.ts";
import { type Database, wrapDriver } from "../src/db/index.ts";
import { migrate } from "../src/db/migrate.ts";
import { createHeartbeat } from "../src/features/devices/heartbeat.ts";
import { createFactories } from "./factories.ts";
import { adminQuery, withDatabase } from "./global-setup.ts";
import type { TestApp } from "./harness.ts";
import { connectAgent, eventually } from "./support/agent.ts";
import { call, provisioningKeyFor, registerDevice } from "./support/devices.ts";

/**
 * Two API instances sharing one PostgreSQL database and one Redis (DESIGN §4, issue 7): a blink
 * sent to the instance without the device's cloudlink socket is relayed through Redis to the one
 * with it, and target-state cache drops reach the other instance. Runs in CI (DATABASE_URL set);
 * skipped only when no PostgreSQL or Redis answers here.
 */
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

async function reachable(): Promise<string | undefined> {
  try {
    await adminQuery(databaseUrl, "SELECT 1");
  } catch (error) {
    return `PostgreSQL at ${databaseUrl} does not answer (${(error as Error).message})`;
  }
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    return `Redis at ${redisUrl} does not answer (${(error as Error).message})`;
  } finally {
    redis.disconnect();
  }
  return undefined;
}

const unreachable = await reachable();
if (unreachable) console.warn(`devices-cluster: skipped, ${unreachable}`);

type Instance = { app: FastifyInstance; ctx: Awaited<ReturnType<typeof buildContext>>; db: Database; url: string };

describe.skipIf(unreachable !== undefined)("two API instances with Redis", () => {
  const name = `flotilla_cluster_${crypto.randomBytes(6).toString("hex")}`;
  const url = withDatabase(databaseUrl, name);
  const dataDir = fs.mkdtempSync(`${process.env.TMPDIR ?? "/tmp"}/flotilla-cluster-`);
  const instances: Instance[] = [];

  async function start(): Promise<Instance> {
    const db = wrapDriver(await openPostgres(url, 5));
    const config = loadConfig({
      DATABASE_URL: url,
      REDIS_URL: redisUrl,
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
    await adminQuery(databaseUrl, `CREATE DATABASE ${name}`);
    const driver = await openPostgres(url, 1);
    await migrate(driver);
    await driver.close();
    instances.push(await start(), await start());
  });

  afterAll(async () => {
    for (const instance of instances) await instance.app.close();
    for (const instance of instances) await instance.db.close();
    await adminQuery(databaseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("relays a blink from the instance without the socket to the one with it", async () => {
    const [a, b] = instances as [Instance, Instance];
    const factories = createFactories(a.db.orm);
    const owner = await factories.user();
    const token = await a.ctx.tokens.start(owner);
    const org = await factories.organization({ name: "Cluster", admins: [owner] });
    const fleet = await factories.fleet(org, { name: "cluster-fleet" });
    const asA = { url: a.url } as TestApp;
    const asB = { url: b.url } as TestApp;
    const device = await registerDevice(asA, await provisioningKeyFor(asA, token, fleet.id), fleet);

    // The agent's socket is on B; the user asks A.
    const agent = await connectAgent(b.url, device.key);
    await eventually(async () => b.ctx.devices.relay.isConnectedHere(device.id));
    expect(a.ctx.devices.relay.isConnectedHere(device.id)).toBe(false);
    const blink = await call(asA, "POST", "/supervisor/v1/blink", token, { uuid: device.uuid });
    expect(blink).toMatchObject({ status: 200, json: { Data: "OK", Error: null } });
    expect(agent.received.map((r) => r.action)).toEqual(["blink"]);

    // A target state cached on A is dropped by a rename written through B.
    const before = await call(asA, "GET", `/device/v3/${device.uuid}/state`, device.key);
    expect(before.status).toBe(200);
    expect((await call(asB, "PATCH", `/v7/device(${device.id})`, token, { device_name: "renamed" })).status).toBe(200);
    await eventually(async () => {
      const after = await call(asA, "GET", `/device/v3/${device.uuid}/state`, device.key);
      return (after.json[device.uuid] as { name?: string } | undefined)?.name === "renamed";
    });

    // Without the socket anywhere, both instances answer device_must_be_online.
    await agent.close();
    await eventually(async () => !b.ctx.devices.relay.isConnectedHere(device.id));
    for (const instance of [asA, asB]) {
      expect(await call(instance, "POST", "/supervisor/v1/blink", token, { uuid: device.uuid })).toMatchObject({
        status: 400,
        code: "device_must_be_online",
      });
    }
  });
  it("shares heartbeats: a device calling the other instance stays online, and one instance writes each change", async () => {
    const [a] = instances as [Instance, Instance];
    const factories = createFactories(a.db.orm);
    const org = await factories.organization({ name: "Beats cluster" });
    const fleet = await factories.fleet(org, { name: "beats-cluster" });
    const device = await factories.device(fleet);
    const redis = new Redis(redisUrl);
    const prefix = `flotilla:test-${crypto.randomBytes(4).toString("hex")}:`;
    let now = Date.parse("2026-02-01T00:00:00Z");
    const writes: string[] = [];
    const db = {
      query: ((text: string, params?: unknown[]) => {
        if (text.includes("api_heartbeat_state = $1")) writes.push(String(params?.[0]));
        return a.db.query(text, params);
      }) as Database["query"],
    };
    const options = { db, redis, prefix, clock: { now: () => now }, sweepMs: 0, lastSeenFlushMs: 0 };
    const one = createHeartbeat(options);
    const two = createHeartbeat(options);
    try {
      one.seen(device.id, 60_000);
      await one.sweep();
      now += 50_000;
      two.seen(device.id, 60_000);
      await two.sweep();
      // 100 s after the call instance one saw, 50 s after the one instance two saw: still online.
      now += 50_000;
      await Promise.all([one.sweep(), two.sweep()]);
      expect(one.stateOf(device.id)).toBe("online");
      // 90 s after the last call anywhere: timeout, written once.
      now += 40_000;
      await Promise.all([one.sweep(), two.sweep()]);
      expect(writes.filter((w) => w === "timeout")).toHaveLength(1);
      const { rows } = await a.db.query<{ api_heartbeat_state: string }>(
        "SELECT api_heartbeat_state FROM device WHERE id = $1",
        [device.id],
      );
      expect(rows[0]?.api_heartbeat_state).toBe("timeout");
      expect(writes.filter((w) => w === "online")).toHaveLength(1);
    } finally {
      await one.close();
      await two.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
