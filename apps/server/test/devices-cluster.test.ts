import crypto from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import type { Database } from "../src/db/index.ts";
import { createHeartbeat } from "../src/features/devices/heartbeat.ts";
import { vpnConnected, vpnDisconnected } from "../src/features/devices/queries.ts";
import { createFactories } from "./factories.ts";
import type { TestApp } from "./harness.ts";
import { connectAgent, eventually } from "./support/agent.ts";
import { clusterUnreachable, type Instance, clusterRedisUrl as redisUrl, useTwoInstances } from "./support/cluster.ts";
import { call, provisioningKeyFor, registerDevice } from "./support/devices.ts";

/**
 * Two API instances sharing one PostgreSQL database and one Redis (DESIGN §4, issue 7): a blink
 * sent to the instance without the device's cloudlink socket is relayed through Redis to the one
 * with it, and target-state cache drops reach the other instance. Runs in CI (DATABASE_URL set);
 * skipped only when no PostgreSQL or Redis answers here.
 */
const unreachable = await clusterUnreachable();
if (unreachable) console.warn(`devices-cluster: skipped, ${unreachable}`);

describe.skipIf(unreachable !== undefined)("two API instances with Redis", () => {
  const instances = useTwoInstances("cluster");

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

  it("keeps a device connected when its old socket's close is written after its new socket's connect", async () => {
    const [a] = instances as [Instance, Instance];
    const factories = createFactories(a.db.orm);
    const org = await factories.organization({ name: "Vpn cluster" });
    const device = await factories.device(await factories.fleet(org, { name: "vpn-cluster" }));
    const connected = async () =>
      (await a.db.query<{ c: boolean }>("SELECT is_connected_to_vpn AS c FROM device WHERE id = $1", [device.id]))
        .rows[0]?.c;
    // The old socket on one instance, the device's new one on the other: the old close comes last.
    const old = (await vpnConnected(a.db, [device.id])).get(device.id);
    const renewed = (await vpnConnected(a.db, [device.id])).get(device.id);
    await vpnDisconnected(a.db, [{ id: device.id, since: old }]);
    expect(await connected()).toBe(true);
    await vpnDisconnected(a.db, [{ id: device.id, since: renewed }]);
    expect(await connected()).toBe(false);
  });
});
