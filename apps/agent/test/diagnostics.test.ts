import type { CheckReport } from "@flotilla/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttp } from "../src/protocol/http.ts";
import { startSimulator } from "../src/sim/simulator.ts";
import { apiWithFleet, eventually, type TestApp } from "./support.ts";

/**
 * Health checks and diagnostics through the device actions service (issue #10): the API relays
 * `GET|POST /v1/{uuid}/{checks|diagnose}` over cloudlink to a simulated device, which runs them.
 */
let t: TestApp;
let ownerToken: string;
let observerToken: string;
let simulator: Awaited<ReturnType<typeof startSimulator>>;
let uuid: string;
const http = createHttp({ connections: 4 });

beforeAll(async () => {
  const setup = await apiWithFleet({ paid: true });
  t = setup.t;
  ownerToken = setup.owner.token;
  const observer = await t.factories.user();
  await t.factories.fleetMember(observer.user, setup.fleet, "observer");
  observerToken = observer.token;
  simulator = await startSimulator({
    apiUrl: t.url,
    provisioningKey: setup.provisioningKey,
    fleetId: setup.fleet.id,
    count: 1,
    intervalMs: 2000,
    disconnectChance: 0,
    http,
    log: () => {},
  });
  uuid = simulator.devices[0]?.uuid ?? "";
  await eventually(async () => {
    const { rows } = await t.db.query(`SELECT 1 FROM device WHERE uuid = $1 AND is_connected_to_vpn`, [uuid]);
    return rows.length > 0;
  }, 20_000);
}, 60_000);
afterAll(async () => {
  await simulator?.stop();
  await http.close();
  await t?.close();
});

async function call(method: string, path: string, token = ownerToken) {
  const response = await fetch(`${t.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(method === "POST" ? { "content-type": "application/json" } : {}) },
    ...(method === "POST" ? { body: JSON.stringify({ parameters: {} }) } : {}),
  });
  return { status: response.status, body: (await response.json()) as CheckReport & { code?: string } };
}

describe("device actions service: checks and diagnose", () => {
  it("runs health checks: idle, then in progress, then done with named results", async () => {
    expect((await call("GET", `/v1/${uuid}/checks`)).body).toMatchObject({ status: "idle", checks: [], lastRun: null });
    const started = await call("POST", `/v1/${uuid}/checks`);
    expect(started).toMatchObject({ status: 202, body: { status: "in_progress" } });
    const done = await eventually(async () => {
      const { body } = await call("GET", `/v1/${uuid}/checks`);
      return body.status === "done" ? body : undefined;
    });
    expect(done.checks.map((c) => c.name)).toEqual([
      "check_disk_space",
      "check_memory",
      "check_temperature",
      "check_under_voltage",
      "check_clock",
      "check_networking",
      "check_container_engine",
    ]);
    expect(done.checks.every((c) => typeof c.success === "boolean" && c.status.length > 0)).toBe(true);
    expect(Date.parse(String(done.lastRun))).toBeGreaterThan(Date.now() - 60_000);
  });

  it("answers only reports in one of the five states (spec 2 §4), else a 502 naming the state", async () => {
    const relay = t.ctx.devices.relay;
    const original = relay.request;
    relay.request = async () => ({ status: 200, body: { status: "halfway", checks: [] } });
    try {
      const answer = await call("GET", `/v1/${uuid}/checks`);
      expect(answer).toMatchObject({ status: 502, body: { code: "diagnostics_state_invalid" } });
      expect(JSON.stringify(answer.body)).toContain("unknown health check state: halfway");
    } finally {
      relay.request = original;
    }
    const states = ["configuring", "done", "error", "idle", "in_progress"];
    expect(states).toContain((await call("GET", `/v1/${uuid}/checks`)).body.status);
  });

  it("runs diagnostics, whose report carries the device's own text", async () => {
    expect((await call("POST", `/v1/${uuid}/diagnose`)).status).toBe(202);
    const done = await eventually(async () => {
      const { body } = await call("GET", `/v1/${uuid}/diagnose`);
      return body.status === "done" ? body : undefined;
    });
    expect(done.stdout).toContain("flotilla-agent");
    expect(done.diagnose_version).toMatch(/^flotilla-agent /);
  });

  it("needs device.access_diagnostics, hides other tenants' devices and knows only its two actions", async () => {
    expect((await call("GET", `/v1/${uuid}/checks`, observerToken)).status).toBe(403);
    const stranger = await t.factories.user();
    expect((await call("GET", `/v1/${uuid}/checks`, stranger.token)).status).toBe(404);
    expect((await call("GET", `/v1/${uuid}/reboot`)).status).toBe(404);
  });

  it("answers device_must_be_online once the device is gone", async () => {
    await simulator.stop();
    const answer = await eventually(async () => {
      const reply = await call("GET", `/v1/${uuid}/checks`);
      return reply.status === 400 ? reply : undefined;
    });
    expect(answer.body.code).toBe("device_must_be_online");
  });
});
