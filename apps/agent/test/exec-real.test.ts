import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeviceRuntime } from "../src/device.ts";
import { createHttp } from "../src/protocol/http.ts";
import { registerDevice } from "../src/protocol/register.ts";
import { RealHost } from "../src/real/host.ts";
import { readOsVersion } from "../src/real/metrics.ts";
import { apiWithFleet, eventually, type TestApp } from "./support.ts";

/**
 * A bulk command (docs/bulk-commands.md) on a real agent: the real host (no container engine)
 * registered with the real API, its command run for real with `sh -c` on this machine.
 */
let t: TestApp;
let token: string;
let device: DeviceRuntime;

beforeAll(async () => {
  const setup = await apiWithFleet();
  t = setup.t;
  token = setup.owner.token;
  const http = createHttp({ connections: 2 });
  const identity = await registerDevice(http, {
    apiUrl: t.url,
    provisioningKey: setup.provisioningKey,
    fleetId: setup.fleet.id,
    deviceType: "raspberrypi4-64",
    supervisorVersion: "17.0.0",
    osVersion: readOsVersion() ?? undefined,
  });
  device = new DeviceRuntime({ http, identity, host: new RealHost({ allowReboot: false }), reportIntervalMs: 60_000 });
  device.start();
  await eventually(() => t.ctx.devices.relay.isConnectedHere(identity.deviceId));
});
afterAll(async () => {
  await device?.shutdown();
  await t?.close();
});

const post = async (body: unknown) => {
  const response = await fetch(`${t.url}/command/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: number }).id;
};
const finished = (id: number) =>
  eventually(async () => {
    const response = await fetch(`${t.url}/command/v1/runs/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const run = (await response.json()) as {
      status: string;
      devices: { state: string; exit_code: number | null; output: string; reason: string | null }[];
    };
    return run.status === "running" ? undefined : run;
  });

describe("a bulk command on a real agent", () => {
  it("runs with sh -c on the host: its output (stdout and stderr) and exit code", async () => {
    const id = await post({
      command: "echo $((6 * 7)); uname -s; echo warn >&2; exit 5",
      devices: [device.identity.uuid],
    });
    const run = await finished(id);
    expect(run.devices[0]).toMatchObject({ state: "failed", exit_code: 5 });
    expect(run.devices[0]?.output).toContain("42\nLinux\n");
    expect(run.devices[0]?.output).toContain("warn\n");
  });

  it("times out: the agent kills the command at the timeout", async () => {
    const started = Date.now();
    const id = await post({ command: "sleep 30", devices: [device.identity.uuid], timeout_s: 1 });
    const run = await finished(id);
    expect(run.devices[0]?.state).toBe("timed_out");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a service without a container engine fails with the agent's reason", async () => {
    const id = await post({ command: "true", devices: [device.identity.uuid], target: { service: "main" } });
    const run = await finished(id);
    expect(run.devices[0]).toMatchObject({ state: "failed", reason: "Service not found: main" });
  });
});
