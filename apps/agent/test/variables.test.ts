import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeviceRuntime, newStats } from "../src/device.ts";
import { createHttp } from "../src/protocol/http.ts";
import { registerDevice } from "../src/protocol/register.ts";
import { systemClock } from "../src/protocol/timing.ts";
import { SimulatedHost } from "../src/sim/host.ts";
import { SimulatedDevice } from "../src/sim/model.ts";
import { apiWithFleet, eventually, type TestApp } from "./support.ts";

/**
 * Variables reach a simulated device against the real API (issue #8): a device variable written in
 * the data API is pushed at once (the update trigger), the service logs it, and a boot
 * configuration variable reboots the device.
 */
let t: TestApp;
let fleet: Awaited<ReturnType<typeof apiWithFleet>>["fleet"];
let provisioningKey: string;
let ownerToken: string;
const http = createHttp({ connections: 8 });

beforeAll(async () => {
  const setup = await apiWithFleet({ paid: true });
  ({ t, fleet, provisioningKey } = setup);
  ownerToken = setup.owner.token;
  const release = await t.factories.release(fleet, { commit: "5eed".padEnd(32, "0") });
  const { rows: services } = await t.db.query<{ id: number }>(
    `INSERT INTO "service" (application, service_name) VALUES ($1, 'main') RETURNING id`,
    [fleet.id],
  );
  const { rows: images } = await t.db.query<{ id: number }>(
    `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, 'r/main', 'success') RETURNING id`,
    [services[0]?.id],
  );
  await t.db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [
    images[0]?.id,
    release.id,
  ]);
  await t.db.query(`UPDATE "application" SET should_be_running__release = $2 WHERE id = $1`, [fleet.id, release.id]);
});
afterAll(async () => {
  await http.close();
  await t.close();
});

const write = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${t.url}${path}`, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: (text.startsWith("{") ? JSON.parse(text) : {}) as Record<string, unknown> };
};

describe("variables on a simulated device", () => {
  it("logs environment changes at once and reboots for boot configuration", async () => {
    const identity = await registerDevice(http, {
      apiUrl: t.url,
      provisioningKey,
      fleetId: fleet.id,
      deviceType: "raspberrypi4-64",
    });
    const model = new SimulatedDevice({ uuid: identity.uuid, random: Math.random, provisioned: true });
    const host = new SimulatedHost({ model, clock: systemClock, rebootMs: () => 1000 });
    // The default 60 s poll: only the update trigger can bring the change within the test.
    const device = new DeviceRuntime({ http, identity, host, reportIntervalMs: 500, stats: newStats() });
    const logged = async (text: string) =>
      (await t.ctx.devices.logs.history(identity.deviceId, 5000)).some((line) => line.message === text);
    const connected = async () => {
      const { rows } = await t.db.query<{ on: boolean }>(`SELECT is_connected_to_vpn AS on FROM device WHERE id = $1`, [
        identity.deviceId,
      ]);
      return rows[0]?.on === true;
    };
    device.start();
    try {
      await eventually(() => model.targetCommit !== null && connected());
      const created = await write("POST", "/v7/device_environment_variable", {
        device: identity.deviceId,
        name: "GREETING",
        value: "hello",
      });
      expect(created.status).toBe(201);
      await eventually(() => logged("Applied environment variable GREETING to main"), 10_000);

      const fleetVar = await write("POST", "/v7/application_environment_variable", {
        application: fleet.id,
        name: "REGION",
        value: "eu",
      });
      expect(fleetVar.status).toBe(201);
      await eventually(() => logged("Applied environment variable REGION to main"), 10_000);

      expect(
        (
          await write("POST", "/v7/device_config_variable", {
            device: identity.deviceId,
            name: "BALENA_HOST_CONFIG_gpu_mem",
            value: "128",
          })
        ).status,
      ).toBe(201);
      await eventually(() => logged("Rebooting to apply the boot configuration"), 10_000);
      await eventually(async () => !(await connected()), 10_000);
      await eventually(async () => (await connected()) && (await logged("Device booted")), 15_000);
      expect(model.phase).toBe("operational");
    } finally {
      await device.shutdown();
    }
  });
});
