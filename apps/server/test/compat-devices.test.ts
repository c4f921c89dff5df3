import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * balena's device rules (issue compat-3), through the real balena-sdk: a device's users write what
 * it reports (metrics, `is_online`, `last_connectivity_event`, `is_running__release`) until it
 * reports again; a device that never connected is `inactive`; the supervisor state of an offline
 * device answers "No online device(s) found".
 */
let t: TestApp;
let org: Awaited<ReturnType<TestApp["factories"]["organization"]>>;
let ownerToken: string;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let provisioningKey: string;
let owner: BalenaSDK;
let observer: BalenaSDK;

const sdkAs = async (token: string): Promise<BalenaSDK> => {
  const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(token);
  return sdk;
};

const report = (device: TestDevice, fields: Record<string, unknown>) =>
  call(t, "PATCH", "/device/v3/state", device.key, { [device.uuid]: fields });

const METRICS = [
  "cpu_usage",
  "cpu_temp",
  "memory_usage",
  "memory_total",
  "storage_block_device",
  "storage_usage",
  "storage_total",
] as const;

async function read(device: TestDevice, fields: readonly string[]) {
  return (await owner.models.device.get(device.uuid, { $select: fields as never })) as unknown as Record<
    string,
    unknown
  >;
}

beforeAll(async () => {
  t = await createTestApp();
  const admin = await t.factories.user();
  org = await t.factories.organization({ name: "Compat devices", admins: [admin.user] });
  ownerToken = admin.token;
  fleet = await t.factories.fleet(org, { name: "compat-devices" });
  const watcher = await t.factories.user();
  await t.factories.fleetMember(watcher.user, fleet, "observer");
  provisioningKey = await provisioningKeyFor(t, admin.token, fleet.id);
  owner = await sdkAs(admin.token);
  observer = await sdkAs(watcher.token);
});
afterAll(() => t.close());

describe("reported fields written by the device's users", () => {
  it("lets the owner write the metrics, last_connectivity_event and is_running__release (pine.patch of device)", async () => {
    const device = await registerDevice(t, provisioningKey, fleet);
    const release = await t.factories.release(fleet);
    const written = {
      cpu_usage: 34,
      cpu_temp: 51,
      memory_usage: 812,
      memory_total: 3906,
      storage_block_device: "/dev/mmcblk0p6",
      storage_usage: 2048,
      storage_total: 28000,
      last_connectivity_event: "2019-05-13T16:14:00.000Z",
    };
    await owner.pine.patch({
      resource: "device",
      options: { $filter: { uuid: device.uuid } },
      body: { ...written, is_running__release: release.id },
    });
    expect(await read(device, [...Object.keys(written), "is_running__release"])).toEqual({
      ...written,
      is_running__release: { __id: release.id },
    });
    // Those who may only read the device may not.
    await expect(
      observer.pine.patch({ resource: "device", id: device.id, body: { cpu_usage: 99 } }),
    ).rejects.toMatchObject({ statusCode: 401 });
    expect((await read(device, ["cpu_usage"])).cpu_usage).toBe(34);
  });

  it("shows the device's own values again once it reports them, even unchanged since its last report", async () => {
    const device = await registerDevice(t, provisioningKey, fleet);
    const reported = {
      cpu_usage: 20,
      cpu_temp: 45,
      memory_usage: 500,
      memory_total: 4000,
      storage_block_device: "/dev/sda1",
      storage_usage: 100,
      storage_total: 1000,
    };
    expect((await report(device, reported)).status).toBe(200);
    await t.ctx.devices.reports.flush();
    await owner.pine.patch({
      resource: "device",
      id: device.id,
      body: { cpu_usage: 90, memory_usage: 3999, storage_block_device: "/dev/written" },
    });
    expect(await read(device, METRICS)).toMatchObject({
      cpu_usage: 90,
      memory_usage: 3999,
      storage_block_device: "/dev/written",
    });
    // The same report as before: the device's values are written over the user's.
    expect((await report(device, reported)).status).toBe(200);
    await t.ctx.devices.reports.flush();
    expect(await read(device, METRICS)).toEqual(reported);
  });

  it("keeps a user's write over a report received before it and not yet written", async () => {
    const device = await registerDevice(t, provisioningKey, fleet);
    expect((await report(device, { cpu_usage: 30, cpu_temp: 40 })).status).toBe(200);
    await owner.pine.patch({ resource: "device", id: device.id, body: { cpu_usage: 60 } });
    await t.ctx.devices.reports.flush();
    expect(await read(device, ["cpu_usage", "cpu_temp"])).toEqual({ cpu_usage: 60, cpu_temp: 40 });
  });

  it("keeps a written is_online until the device's connectivity speaks, and counts it as a connectivity event", async () => {
    const device = await registerDevice(t, provisioningKey, fleet);
    expect(await read(device, ["is_online", "last_connectivity_event"])).toEqual({
      is_online: false,
      last_connectivity_event: null,
    });
    const before = Date.now();
    await owner.pine.patch({ resource: "device", id: device.id, body: { is_online: true } });
    const online = await read(device, ["is_online", "last_connectivity_event", "api_heartbeat_state"]);
    expect(online).toMatchObject({ is_online: true, api_heartbeat_state: "unknown" });
    expect(Date.parse(String(online.last_connectivity_event))).toBeGreaterThanOrEqual(before - 1000);
    await owner.pine.patch({ resource: "device", id: device.id, body: { is_online: false } });
    expect((await read(device, ["is_online"])).is_online).toBe(false);
    // The device polls: the heartbeat says online, whatever was written.
    expect((await call(t, "GET", `/device/v3/${device.uuid}/state`, device.key)).status).toBe(200);
    await t.ctx.devices.heartbeat.sweep();
    expect((await read(device, ["is_online"])).is_online).toBe(true);
  });

  it("refuses an is_online that is no boolean", async () => {
    const device = await registerDevice(t, provisioningKey, fleet);
    await expect(
      owner.pine.patch({ resource: "device", id: device.id, body: { is_online: "yes" } as never }),
    ).rejects.toMatchObject({ statusCode: 400 });
  });
});

describe("a device that never connected", () => {
  it("is inactive (device.getStatus), then disconnected once it was online (balena-sdk's own fixture)", async () => {
    const device = await registerDevice(t, provisioningKey, fleet);
    expect(await owner.models.device.getStatus(device.uuid)).toBe("inactive");
    expect(await owner.models.device.getStatus(device.id)).toBe("inactive");
    await owner.pine.patch({ resource: "device", id: device.id, body: { is_online: true } });
    await owner.pine.patch({ resource: "device", id: device.id, body: { is_online: false } });
    expect(await owner.models.device.getStatus(device.uuid)).toBe("disconnected");
  });

  it("is configuring while it reports provisioning progress, and operational once online", async () => {
    const device = await registerDevice(t, provisioningKey, fleet);
    await owner.pine.patch({ resource: "device", id: device.id, body: { provisioning_progress: 40 } });
    expect(await owner.models.device.getStatus(device.uuid)).toBe("configuring");
    await owner.pine.patch({ resource: "device", id: device.id, body: { provisioning_progress: null } });
    expect(await owner.models.device.getStatus(device.uuid)).toBe("inactive");
    expect((await call(t, "GET", `/device/v3/${device.uuid}/state`, device.key)).status).toBe(200);
    await t.ctx.devices.heartbeat.sweep();
    // Online on its heartbeat, not on cloudlink: reduced functionality, as balena says without its VPN.
    expect(await owner.models.device.getStatus(device.uuid)).toBe("reduced-functionality");
  });

  it("is counted as inactive in the fleet's device_count_grouped_by_status (pine.get of application)", async () => {
    const counted = await t.factories.fleet(org, { name: "compat-counts" });
    const key = await provisioningKeyFor(t, ownerToken, counted.id);
    await registerDevice(t, key, counted);
    const seen = await registerDevice(t, key, counted);
    await owner.pine.patch({ resource: "device", id: seen.id, body: { is_online: false } });
    const [row] = await owner.pine.get({
      resource: "application",
      options: { $select: ["device_count_grouped_by_status"] as never, $filter: { id: counted.id } },
    });
    expect((row as unknown as { device_count_grouped_by_status: unknown }).device_count_grouped_by_status).toEqual({
      inactive: 1,
      disconnected: 1,
    });
  });
});

describe("the supervisor of an offline device", () => {
  it("device.getSupervisorState answers balena's 'No online device(s) found'", async () => {
    const device = await registerDevice(t, provisioningKey, fleet);
    await expect(owner.models.device.getSupervisorState(device.uuid)).rejects.toThrow("No online device(s) found");
    // As balena-cli sends it: the text is the body's `message`; the dashboard's keyed error stays.
    const raw = await call(t, "POST", "/supervisor/v1/device", ownerToken, { uuid: device.uuid, method: "GET" });
    expect(raw).toMatchObject({
      status: 400,
      code: "device_must_be_online",
      json: { message: "No online device(s) found" },
    });
  });
});
