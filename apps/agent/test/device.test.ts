import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeviceRuntime, newStats } from "../src/device.ts";
import { CloudlinkClient, ok } from "../src/protocol/cloudlink.ts";
import { createHttp } from "../src/protocol/http.ts";
import { LogStream } from "../src/protocol/log-stream.ts";
import { type Identity, registerDevice } from "../src/protocol/register.ts";
import { StateReporter } from "../src/protocol/state-report.ts";
import { pollIntervalOf, TargetStateClient } from "../src/protocol/target-state.ts";
import { systemClock } from "../src/protocol/timing.ts";
import { SimulatedHost } from "../src/sim/host.ts";
import { SimulatedDevice } from "../src/sim/model.ts";
import { startSimulator } from "../src/sim/simulator.ts";
import { apiWithFleet, eventually, type TestApp } from "./support.ts";

/** The device path against the real API: target state, state reports, log stream, cloudlink, simulator. */
let t: TestApp;
let fleet: { id: number };
let provisioningKey: string;
let ownerToken: string;
const http = createHttp({ connections: 8 });

beforeAll(async () => {
  const setup = await apiWithFleet({ paid: true });
  ({ t, fleet, provisioningKey } = setup);
  ownerToken = setup.owner.token;
});
afterAll(async () => {
  await http.close();
  await t.close();
});

const register = (): Promise<Identity> =>
  registerDevice(http, { apiUrl: t.url, provisioningKey, fleetId: fleet.id, deviceType: "raspberrypi4-64" });

async function deviceRow(uuid: string) {
  const { rows } = await t.db.query<Record<string, unknown>>(
    `SELECT status, cpu_usage, memory_total, os_version, is_connected_to_vpn, api_heartbeat_state, provisioning_state
       FROM device WHERE uuid = $1`,
    [uuid],
  );
  return rows[0] ?? {};
}

async function relay(action: string, body: Record<string, unknown>) {
  const response = await fetch(`${t.url}/supervisor/v1/${action}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // text body
  }
  return { status: response.status, body: json };
}

describe("target state", () => {
  it("answers 200 with an ETag, then 304 for If-None-Match, with the poll interval in config", async () => {
    const identity = await register();
    const client = new TargetStateClient(http, t.url, identity.uuid, identity.deviceKey);
    const first = await client.fetch();
    expect(first.changed).toBe(true);
    expect(client.etag).toBeTruthy();
    expect(first.state?.config).toHaveProperty("BALENA_SUPERVISOR_POLL_INTERVAL");
    expect(pollIntervalOf(first.state)).toBeGreaterThanOrEqual(1000);
    expect(Object.keys(first.state?.apps ?? {})).toHaveLength(1);
    const second = await client.fetch();
    expect(second).toEqual({ state: first.state, changed: false });
  });
});

describe("state report", () => {
  it("the first report is full, later ones carry what changed, and the API keeps them", async () => {
    const identity = await register();
    const reporter = new StateReporter(http, t.url, identity.uuid, identity.deviceKey);
    const full = {
      status: "Idle",
      os_version: "balenaOS 6.1.0",
      cpu_usage: 12,
      memory_usage: 900,
      memory_total: 3794,
      provisioning_state: "",
      provisioning_progress: null,
    };
    expect(await reporter.report(full)).toEqual(full);
    expect(await reporter.report({ ...full, cpu_usage: 40 })).toEqual({ cpu_usage: 40 });
    expect(await reporter.report({ ...full, cpu_usage: 40 })).toEqual({});
    await eventually(async () => (await deviceRow(identity.uuid)).cpu_usage === 40, 20_000);
    expect(await deviceRow(identity.uuid)).toMatchObject({
      status: "Idle",
      memory_total: 3794,
      os_version: "balenaOS 6.1.0",
    });
  });

  it("refuses a report with another device's key", async () => {
    const a = await register();
    const b = await register();
    const reporter = new StateReporter(http, t.url, a.uuid, b.deviceKey);
    await expect(reporter.report({ status: "Idle" })).rejects.toThrow(/state report failed: 401/);
  });
});

describe("log stream", () => {
  it("sends batched NDJSON lines the API keeps", async () => {
    const identity = await register();
    const stream = new LogStream({
      http,
      apiUrl: t.url,
      uuid: identity.uuid,
      deviceKey: identity.deviceKey,
      flushMs: 50,
    });
    for (let i = 0; i < 250; i++) stream.push({ message: `line ${i}`, timestamp: Date.now(), serviceId: 1 });
    await stream.stop();
    expect(stream.sent).toBe(250);
    const lines = await eventually(async () => {
      const held = await t.ctx.devices.logs.history(identity.deviceId, 5000);
      return held.length >= 250 ? held : null;
    });
    expect(lines.at(-1)).toMatchObject({ message: "line 249" });
  });
});

describe("log stream after idle", () => {
  it("ends an idle stream and opens a new one for later lines, losing none", async () => {
    const identity = await register();
    const stream = new LogStream({
      http,
      apiUrl: t.url,
      uuid: identity.uuid,
      deviceKey: identity.deviceKey,
      flushMs: 20,
      idleMs: 100,
    });
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 10; i++) stream.push({ message: `r${round} l${i}`, timestamp: Date.now() });
      await new Promise((resolve) => setTimeout(resolve, round % 2 ? 150 : 90));
    }
    await stream.stop();
    const lines = await eventually(async () => {
      const held = await t.ctx.devices.logs.history(identity.deviceId, 5000);
      return held.length >= 50 ? held : null;
    });
    expect(lines.map((line) => line.message)).toContain("r4 l9");
  });
});

describe("cloudlink", () => {
  it("connects with the device key, answers relayed actions and reconnects after a drop", async () => {
    const identity = await register();
    const seen: string[] = [];
    const client = new CloudlinkClient({
      apiUrl: t.url,
      deviceKey: identity.deviceKey,
      handler: (action, data) => {
        seen.push(`${action}${data.force ? "!" : ""}`);
        return action === "device" ? { status: 200, body: { status: "Idle" } } : ok();
      },
    });
    client.start();
    try {
      await eventually(async () => (await deviceRow(identity.uuid)).is_connected_to_vpn === true);
      expect(await relay("blink", { uuid: identity.uuid })).toEqual({ status: 200, body: { Data: "OK", Error: null } });
      expect(await relay("reboot", { deviceId: identity.deviceId, data: { force: true } })).toMatchObject({
        status: 200,
      });
      expect(await relay("device", { uuid: identity.uuid })).toMatchObject({ status: 200, body: { status: "Idle" } });
      expect(seen).toEqual(["blink", "reboot!", "device"]);
      client.drop();
      await eventually(() => client.connects >= 2 && client.connected);
      // The socket is open a moment before the API has attached it to the device.
      await eventually(async () => (await relay("blink", { uuid: identity.uuid })).status === 200);
    } finally {
      client.stop();
    }
    await eventually(async () => (await deviceRow(identity.uuid)).is_connected_to_vpn === false);
    expect(await relay("blink", { uuid: identity.uuid })).toMatchObject({ status: 400 });
  });

  it("a bad device key is refused and retried with backoff", async () => {
    const client = new CloudlinkClient({ apiUrl: t.url, deviceKey: "nope-nope-nope-nope", handler: () => ok() });
    client.start();
    try {
      // Refused (closed 4001 right after the upgrade) and tried again, with a growing ceiling.
      await eventually(() => client.backoff.attempt >= 2, 15_000);
      expect(client.backoff.ceiling()).toBeGreaterThanOrEqual(4000);
    } finally {
      client.stop();
    }
  });
});

describe("a simulated device over the whole protocol", () => {
  it("reboots: Rebooting, offline, back online; an update lock answers 423 unless forced", async () => {
    const identity = await register();
    const model = new SimulatedDevice({ uuid: identity.uuid, random: Math.random, provisioned: true });
    const host = new SimulatedHost({ model, clock: systemClock, rebootMs: () => 1500 });
    const stats = newStats();
    const device = new DeviceRuntime({ http, identity, host, reportIntervalMs: 500, stats });
    device.start();
    try {
      await eventually(async () => (await deviceRow(identity.uuid)).is_connected_to_vpn === true);
      expect(await relay("reboot", { deviceId: identity.deviceId, data: { force: false } })).toMatchObject({
        status: 200,
      });
      await eventually(async () => (await deviceRow(identity.uuid)).is_connected_to_vpn === false);
      await eventually(async () => (await deviceRow(identity.uuid)).is_connected_to_vpn === true);
      await eventually(async () => (await deviceRow(identity.uuid)).status === "Idle", 20_000);
      model.updateLock = true;
      expect(await relay("restart", { deviceId: identity.deviceId, data: {} })).toMatchObject({ status: 423 });
      expect(await relay("reboot", { deviceId: identity.deviceId, data: { force: true } })).toMatchObject({
        status: 200,
      });
      expect(stats.reportErrors).toBe(0);
      expect(stats.polls).toBeGreaterThanOrEqual(2);
    } finally {
      await device.shutdown();
    }
  });

  it("updates to the fleet's new release after an update action, with download progress", async () => {
    const identity = await register();
    const model = new SimulatedDevice({ uuid: identity.uuid, random: Math.random, provisioned: true });
    const host = new SimulatedHost({ model, clock: systemClock });
    const device = new DeviceRuntime({ http, identity, host, reportIntervalMs: 300, stats: newStats() });
    const seen = new Set<string>();
    const watch = setInterval(() => seen.add(`${model.status}/${model.updateStatus}`), 20);
    device.start();
    try {
      await eventually(async () => (await deviceRow(identity.uuid)).is_connected_to_vpn === true);
      const release = await t.factories.release(fleet);
      const pin = await fetch(`${t.url}/v7/application(${fleet.id})`, {
        method: "PATCH",
        headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` },
        body: JSON.stringify({ should_be_running__release: release.id }),
      });
      expect(pin.status).toBe(200);
      expect(await relay("update", { deviceId: identity.deviceId, data: { force: false } })).toMatchObject({
        status: 200,
      });
      await eventually(() => model.currentCommit === release.commit, 20_000);
      expect([...seen]).toEqual(expect.arrayContaining(["Downloading/downloading", "Starting/applying changes"]));
      expect(`${model.status}/${model.updateStatus}`).toBe("Idle/done");
      await eventually(async () => {
        const { rows } = await t.db.query<{ is_running__release: number | null }>(
          "SELECT is_running__release FROM device WHERE uuid = $1",
          [identity.uuid],
        );
        return rows[0]?.is_running__release === release.id;
      }, 20_000);
    } finally {
      clearInterval(watch);
      await device.shutdown();
    }
  });

  it("a deleted device is refused on its next poll and the simulator stops it", async () => {
    const logs: string[] = [];
    const simulator = await startSimulator({
      apiUrl: t.url,
      provisioningKey,
      fleetId: fleet.id,
      count: 1,
      intervalMs: 1000,
      disconnectChance: 0,
      http,
      log: (line) => logs.push(line),
    });
    const [device] = simulator.devices;
    try {
      if (!device) throw new Error("no device");
      await eventually(async () => (await deviceRow(device.uuid)).is_connected_to_vpn === true);
      const removed = await fetch(`${t.url}/v7/device(${device.deviceId})`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${ownerToken}` },
      });
      expect(removed.status).toBe(200);
      device.runtime.pollNow();
      await eventually(() => !device.runtime.online).catch((error) => {
        throw new Error(`${error.message}; simulator said: ${logs.join(" / ")}`);
      });
      expect(logs.join("\n")).toContain(`device ${device.uuid} is no longer accepted by the API`);
    } finally {
      await simulator.stop();
    }
  });

  it("startSimulator: devices register, provision and turn operational", async () => {
    const actions: string[] = [];
    const simulator = await startSimulator({
      onAction: (uuid, action, _data, status) => actions.push(`${uuid}: ${action} ${status}`),
      apiUrl: t.url,
      provisioningKey,
      fleetId: fleet.id,
      count: 3,
      intervalMs: 2000,
      disconnectChance: 0,
      http,
      log: () => {},
    });
    try {
      expect(simulator.devices).toHaveLength(3);
      const uuids = simulator.devices.map((d) => d.uuid);
      const filter = encodeURIComponent(`belongs_to__application eq ${fleet.id}`);
      const statuses = async () => {
        const response = await fetch(`${t.url}/v7/device?$select=uuid,overall_status&$filter=${filter}`, {
          headers: { authorization: `Bearer ${ownerToken}` },
        });
        const { d } = (await response.json()) as { d: { uuid: string; overall_status: string }[] };
        return d.filter((row) => uuids.includes(row.uuid)).map((row) => row.overall_status);
      };
      // Provisioning shows as configuring with a progress, then the devices turn operational.
      const progress = async () => {
        const { rows } = await t.db.query<{ provisioning_progress: number | null; provisioning_state: string | null }>(
          "SELECT provisioning_progress, provisioning_state FROM device WHERE uuid = ANY($1)",
          [uuids],
        );
        return rows;
      };
      await eventually(async () => (await progress()).some((row) => row.provisioning_progress !== null), 20_000, 200);
      expect(await statuses()).toContain("configuring");
      await eventually(
        async () => simulator.devices.every((device) => device.host.model.phase === "operational"),
        40_000,
        500,
      );
      await eventually(async () => (await statuses()).every((s) => s === "operational"), 20_000, 500);
      expect((await progress()).every((row) => row.provisioning_progress === null)).toBe(true);
      const [first] = uuids;
      await eventually(async () => (await deviceRow(first ?? "")).is_connected_to_vpn === true);
      expect(await relay("blink", { uuid: first })).toMatchObject({ status: 200 });
      expect(actions).toEqual([`${first}: blink 200`]);
      expect(simulator.stats.reportErrors).toBe(0);
    } finally {
      await simulator.stop();
    }
  }, 60_000);

  it("starts on the OS and supervisor it is given; an old supervisor is asked to update first", async () => {
    const simulator = await startSimulator({
      apiUrl: t.url,
      provisioningKey,
      fleetId: fleet.id,
      count: 1,
      intervalMs: 1000,
      disconnectChance: 0,
      osVersion: "balenaOS 5.1.20",
      supervisorVersion: "6.6.11",
      http,
      log: () => {},
    });
    try {
      const uuid = simulator.devices[0]?.uuid ?? "";
      await eventually(async () => (await deviceRow(uuid)).is_connected_to_vpn === true, 20_000, 200);
      const { rows } = await t.db.query<{ os_version: string; supervisor_version: string }>(
        "SELECT os_version, supervisor_version FROM device WHERE uuid = $1",
        [uuid],
      );
      expect(rows[0]).toEqual({ os_version: "balenaOS 5.1.20", supervisor_version: "6.6.11" });
      expect(await relay("blink", { uuid })).toEqual({ status: 400, body: { error: "updateRequired" } });
    } finally {
      await simulator.stop();
    }
  }, 60_000);

  it("keeps what a device updated to in --state-dir: restarted, it runs the new OS", async () => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-sim-state-"));
    const start = () =>
      startSimulator({
        apiUrl: t.url,
        provisioningKey,
        fleetId: fleet.id,
        count: 1,
        intervalMs: 1000,
        disconnectChance: 0,
        updateStepMs: 20,
        rebootMs: 100,
        stateDir,
        http,
        log: () => {},
      });
    try {
      const first = await start();
      const uuid = first.devices[0]?.uuid ?? "";
      try {
        await eventually(async () => (await deviceRow(uuid)).is_connected_to_vpn === true, 20_000, 200);
        const answer = await fetch(`${t.url}/v2/${uuid}/resinhup`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` },
          body: JSON.stringify({ parameters: { target_version: "6.2.4" } }),
        });
        expect(answer.status).toBe(202);
        await eventually(async () => first.devices[0]?.host.model.osVersion === "balenaOS 6.2.4", 20_000, 100);
      } finally {
        await first.stop();
      }
      const second = await start();
      try {
        expect(second.devices.map((device) => device.uuid)).toEqual([uuid]);
        expect(second.devices[0]?.host.model.osVersion).toBe("balenaOS 6.2.4");
      } finally {
        await second.stop();
      }
    } finally {
      fs.rmSync(stateDir, { recursive: true, force: true });
    }
  }, 60_000);
});
