import crypto from "node:crypto";
import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * Details of balena's data API that balena-sdk and scripts rely on (issue #22): reported device
 * fields users may write, balena's tag key rules, whoami for device and provisioning keys, and a
 * fleet's default state.
 */
let t: TestApp;
let org: Awaited<ReturnType<TestApp["factories"]["organization"]>>;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let device: TestDevice;
let provisioningKey: string;
const tokens: Record<string, string> = {};

const sdkAs = async (token: string): Promise<BalenaSDK> => {
  const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(token);
  return sdk;
};

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user();
  tokens.owner = owner.token;
  org = await t.factories.organization({ name: "Details", admins: [owner.user] });
  fleet = await t.factories.fleet(org, { name: "detailed" });
  const observer = await t.factories.user();
  await t.factories.fleetMember(observer.user, fleet, "observer");
  tokens.observer = observer.token;
  tokens.stranger = (await t.factories.user()).token;
  provisioningKey = await provisioningKeyFor(t, owner.token, fleet.id);
  device = await registerDevice(t, provisioningKey, fleet);
});
afterAll(() => t.close());

describe("reported device fields", () => {
  it("lets the device's owner write os_version, os_variant, supervisor_version and the addresses", async () => {
    const sdk = await sdkAs(tokens.owner ?? "");
    const written = {
      os_version: "balenaOS 6.1.0",
      os_variant: "dev",
      supervisor_version: "17.0.1",
      mac_address: "aa:bb:cc:dd:ee:ff 11:22:33:44:55:66",
      ip_address: "10.0.0.2 192.168.1.20",
      public_address: "203.0.113.9",
      status: "Idle",
      cpu_id: "0x0000001",
      is_undervolted: true,
      provisioning_state: "",
    };
    await sdk.pine.patch({ resource: "device", id: device.id, body: written });
    const read = await sdk.pine.get({
      resource: "device",
      id: device.id,
      options: { $select: Object.keys(written) as never },
    });
    expect(read).toMatchObject(written);
  });

  it("refuses balena's out-of-range values with its words, writing nothing", async () => {
    const patch = (body: Record<string, unknown>) => call(t, "PATCH", `/v7/device(${device.id})`, tokens.owner, body);
    const variant = await patch({ os_variant: "beta", os_version: "balenaOS 9" });
    expect(variant.status).toBe(400);
    expect(variant.text).toContain('os_variant must be "prod", "dev" or null');
    const long = await patch({ supervisor_version: "1".repeat(21) });
    expect(long.status).toBe(400);
    expect(long.text).toContain(
      "It is necessary that each device that has a supervisor version, has a supervisor version that has a Length (Type) that is less than or equal to 20.",
    );
    const { rows } = await t.db.query<{ os_version: string }>(`SELECT os_version FROM "device" WHERE id = $1`, [
      device.id,
    ]);
    expect(rows[0]?.os_version).toBe("balenaOS 6.1.0");
  });

  it("still refuses those who may only read the device", async () => {
    const answer = await call(t, "PATCH", `/v7/device(${device.id})`, tokens.observer, { os_version: "x" });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    const { rows } = await t.db.query<{ os_version: string }>(`SELECT os_version FROM "device" WHERE id = $1`, [
      device.id,
    ]);
    expect(rows[0]?.os_version).toBe("balenaOS 6.1.0");
  });
});

describe("tag keys", () => {
  it("follows balena's rules for device, fleet and release tags, through balena-sdk", async () => {
    const sdk = await sdkAs(tokens.owner ?? "");
    await sdk.models.device.tags.set(device.uuid, "location", "attic");
    await expect(sdk.models.device.tags.set(device.uuid, "io.balena.managed", "1")).rejects.toThrow(
      "Tag keys beginning with io.balena. are reserved.",
    );
    await expect(sdk.models.device.tags.set(device.uuid, "io.resin.x", "1")).rejects.toThrow(
      "Tag keys beginning with io.resin. are reserved.",
    );
    await expect(sdk.models.application.tags.set(fleet.id, "my key", "1")).rejects.toThrow(
      "Tag keys cannot contain whitespace.",
    );
    const release = await t.factories.release(fleet);
    await expect(sdk.models.release.tags.set(release.id, "io.balena.x", "1")).rejects.toThrow(
      "Tag keys beginning with io.balena. are reserved.",
    );
    await sdk.models.release.tags.set(release.id, "v".repeat(164), "long");
    const tags = await sdk.models.device.tags.getAllByDevice(device.uuid);
    expect(tags.map((tag) => tag.tag_key)).toEqual(["location"]);
  });
});

describe("whoami for keys that are no users", () => {
  it("answers a device key with its device, and a provisioning key with its fleet", async () => {
    const asDevice = await sdkAs(device.key);
    expect(await asDevice.auth.whoami()).toEqual({
      id: expect.any(Number),
      actorType: "device",
      actorTypeId: device.id,
      uuid: device.uuid,
    });
    const asFleet = await call(t, "GET", "/actor/v1/whoami", provisioningKey);
    expect(asFleet.json).toEqual({
      id: expect.any(Number),
      actorType: "application",
      actorTypeId: fleet.id,
      slug: fleet.slug,
    });
    expect((await call(t, "GET", "/actor/v1/whoami", "not-a-key")).status).toBe(401);
  });
});

describe("GET /device/v3/fleet/{uuid}/state", () => {
  it("answers a fleet's default state to its users, keys and devices, and 401 to anyone else", async () => {
    const commit = crypto.randomBytes(16).toString("hex");
    const release = await t.factories.release(fleet, { commit });
    await t.db.query(`UPDATE "application" SET should_be_running__release = $2 WHERE id = $1`, [fleet.id, release.id]);
    await call(t, "POST", "/v7/application_config_variable", tokens.owner, {
      application: fleet.id,
      name: "BALENA_SUPERVISOR_POLL_INTERVAL",
      value: "900000",
    });
    await call(t, "POST", "/v7/device_config_variable", tokens.owner, {
      device: device.id,
      name: "BALENA_HOST_CONFIG_gpu_mem",
      value: "64",
    });
    const path = `/device/v3/fleet/${fleet.uuid}/state`;
    const owner = await call(t, "GET", path, tokens.owner);
    expect(owner.status).toBe(200);
    expect(owner.json).toEqual({
      [fleet.uuid]: {
        name: fleet.app_name,
        config: { BALENA_SUPERVISOR_POLL_INTERVAL: "900000" },
        apps: {
          [fleet.uuid]: {
            id: fleet.id,
            name: fleet.app_name,
            is_host: false,
            class: "fleet",
            releases: { [commit]: { id: release.id, services: {}, volumes: {}, networks: {} } },
          },
        },
      },
    });
    for (const token of [tokens.observer, provisioningKey, device.key]) {
      expect((await call(t, "GET", path, token)).status).toBe(200);
    }
    expect((await call(t, "GET", `${path}?releaseUuid=${commit}`, tokens.owner)).status).toBe(200);
    // As balena-cli asks: a trailing slash, and an empty releaseUuid (the fleet's target).
    const slashed = await call(t, "GET", `${path}/?releaseUuid=`, tokens.owner);
    expect(slashed.status).toBe(200);
    expect(slashed.json).toEqual(owner.json);
    expect((await call(t, "GET", `${path}?releaseUuid=${"0".repeat(32)}`, tokens.owner)).status).toBe(401);
    expect((await call(t, "GET", path, tokens.stranger)).status).toBe(401);
    expect((await call(t, "GET", `/device/v3/fleet/${"f".repeat(32)}/state`, tokens.owner)).status).toBe(401);
  });
});

describe("device API keys", () => {
  it("are listed to those who may read the device, with balena-sdk", async () => {
    const observer = await sdkAs(tokens.observer ?? "");
    const keys = await observer.models.apiKey.getDeviceApiKeysByDevice(device.uuid);
    expect(keys.length).toBeGreaterThanOrEqual(1);
    expect(keys[0]).not.toHaveProperty("key");
    const stranger = await sdkAs(tokens.stranger ?? "");
    await expect(stranger.models.apiKey.getDeviceApiKeysByDevice(device.uuid)).rejects.toThrow(/not found/i);
    const { rows } = await t.db.query<{ actor: number }>(`SELECT actor FROM "device" WHERE id = $1`, [device.id]);
    const direct = await call(t, "GET", `/v7/api_key?$filter=is_of__actor eq ${rows[0]?.actor}`, tokens.stranger);
    expect(direct.json).toEqual({ d: [] });
  });
});

describe("compatible CPU architectures", () => {
  it("moves and registers a 64-bit ARM device into a 32-bit ARM fleet, not the other way", async () => {
    const armv7 = await t.factories.fleet(org, { name: "armv7-fleet", deviceType: "raspberrypi3" });
    const sdk = await sdkAs(tokens.owner ?? "");
    await sdk.models.device.move(device.uuid, armv7.id);
    const { rows } = await t.db.query<{ fleet: number }>(
      `SELECT belongs_to__application AS fleet FROM "device" WHERE id = $1`,
      [device.id],
    );
    expect(rows[0]?.fleet).toBe(armv7.id);
    const key = await provisioningKeyFor(t, tokens.owner ?? "", armv7.id);
    const registered = await registerDevice(t, key, armv7, { device_type: "raspberrypi4-64" });
    expect(registered.id).toBeGreaterThan(0);
    const older = await registerDevice(t, key, armv7, { device_type: "raspberrypi3" });
    const back = await call(t, "PATCH", `/v7/device(${older.id})`, tokens.owner, { belongs_to__application: fleet.id });
    expect(back).toMatchObject({ status: 400, code: "no_compatible_architecture" });
  });
});
