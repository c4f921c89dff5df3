import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/** Target state (docs/device-protocol.md): shape, ETag/304, and cache drops on writes that change it. */
let t: TestApp;
let ownerToken: string;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let device: TestDevice;
let other: TestDevice;

type State = Record<string, { name: string; config: Record<string, string>; apps: Record<string, AppState> }>;
type AppState = { id: number; name: string; class: string; releases: Record<string, ReleaseState> };
type ReleaseState = {
  id: number;
  services: Record<string, Record<string, unknown>>;
  volumes: unknown;
  networks: unknown;
};

const poll = (d: TestDevice, etag?: string) =>
  call(t, "GET", `/device/v3/${d.uuid}/state`, d.key, undefined, etag ? { "if-none-match": etag } : {});

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user();
  ownerToken = owner.token;
  const org = await t.factories.organization({ name: "Targets", admins: [owner.user] });
  fleet = await t.factories.fleet(org, { name: "target-fleet" });
  const key = await provisioningKeyFor(t, ownerToken, fleet.id);
  device = await registerDevice(t, key, fleet);
  other = await registerDevice(t, key, fleet);
});
afterAll(() => t.close());

describe("GET /device/v3/{uuid}/state", () => {
  it("answers the contract's shape with the default poll interval and no release", async () => {
    const answer = await poll(device);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("etag")).toMatch(/^".+"$/);
    const state = answer.json as State;
    expect(state).toEqual({
      [device.uuid]: {
        name: device.uuid.slice(0, 7),
        config: { BALENA_SUPERVISOR_POLL_INTERVAL: "60000" },
        apps: { [fleet.uuid]: { id: fleet.id, name: "target-fleet", class: "fleet", releases: {} } },
      },
    });
  });

  it("answers 304 to a poll with the current ETag, without reading the database", async () => {
    const first = await poll(device);
    const etag = first.headers.get("etag") ?? "";
    const original = t.db.query;
    let reads = 0;
    t.db.query = ((...args: Parameters<typeof original>) => {
      reads += 1;
      return original(...args);
    }) as typeof original;
    try {
      const again = await poll(device, etag);
      expect(again.status).toBe(304);
      expect(again.text).toBe("");
    } finally {
      t.db.query = original;
    }
    expect(reads).toBe(0);
  });

  it("changes with fleet and device config variables, the device's winning", async () => {
    const before = (await poll(device)).headers.get("etag") ?? "";
    expect(
      (
        await call(t, "POST", "/v7/application_config_variable", ownerToken, {
          application: fleet.id,
          name: "BALENA_SUPERVISOR_POLL_INTERVAL",
          value: "30000",
        })
      ).status,
    ).toBe(201);
    const changed = await poll(device, before);
    expect(changed.status).toBe(200);
    expect((changed.json as State)[device.uuid]?.config.BALENA_SUPERVISOR_POLL_INTERVAL).toBe("30000");
    expect(changed.headers.get("etag")).not.toBe(before);
    const created = await call(t, "POST", "/v7/device_config_variable", ownerToken, {
      device: device.id,
      name: "BALENA_SUPERVISOR_POLL_INTERVAL",
      value: "20000",
    });
    expect(created.status).toBe(201);
    expect((await poll(device)).json[device.uuid]).toMatchObject({
      config: { BALENA_SUPERVISOR_POLL_INTERVAL: "20000" },
    });
    // The other device keeps the fleet's value.
    expect((await poll(other)).json[other.uuid]).toMatchObject({
      config: { BALENA_SUPERVISOR_POLL_INTERVAL: "30000" },
    });
  });

  it("follows a rename and a pinned release with its services", async () => {
    expect((await call(t, "PATCH", `/v7/device(${device.id})`, ownerToken, { device_name: "kiosk" })).status).toBe(200);
    expect((await poll(device)).json[device.uuid]).toMatchObject({ name: "kiosk" });

    const release = await t.factories.release(fleet, { commit: "c0ffee".padEnd(32, "0") });
    await t.db.query(`UPDATE "release" SET composition = $2 WHERE id = $1`, [
      release.id,
      JSON.stringify({ services: { main: { restart: "always" } } }),
    ]);
    const { rows: services } = await t.db.query<{ id: number }>(
      `INSERT INTO "service" (application, service_name) VALUES ($1, 'main') RETURNING id`,
      [fleet.id],
    );
    const serviceId = Number(services[0]?.id);
    const { rows: images } = await t.db.query<{ id: number }>(
      `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, 'registry.local/main:1', 'success') RETURNING id`,
      [serviceId],
    );
    const imageId = Number(images[0]?.id);
    await t.db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [imageId, release.id]);
    await t.db.query(`INSERT INTO "service_environment_variable" (service, name, value) VALUES ($1, 'MODE', 'kiosk')`, [
      serviceId,
    ]);
    const env = await call(t, "POST", "/v7/application_environment_variable", ownerToken, {
      application: fleet.id,
      name: "REGION",
      value: "eu",
    });
    expect(env.status).toBe(201);

    const pinned = await call(t, "PATCH", `/v7/device(${device.id})`, ownerToken, {
      is_pinned_on__release: release.id,
    });
    expect(pinned.status).toBe(200);
    const state = (await poll(device)).json as State;
    const releases = state[device.uuid]?.apps[fleet.uuid]?.releases ?? {};
    expect(releases).toEqual({
      [release.commit]: {
        id: release.id,
        services: {
          main: {
            id: serviceId,
            image_id: imageId,
            image: "registry.local/main:1",
            environment: { REGION: "eu", MODE: "kiosk" },
            labels: {},
            running: true,
            composition: { restart: "always" },
          },
        },
        volumes: {},
        networks: {},
      },
    });
    // Unpinned, the fleet tracks its latest final release: the same one here.
    await call(t, "PATCH", `/v7/device(${device.id})`, ownerToken, { is_pinned_on__release: null });
    const tracking = (await poll(device)).json as State;
    expect(Object.keys(tracking[device.uuid]?.apps[fleet.uuid]?.releases ?? {})).toEqual([release.commit]);
  });

  it("answers only the device itself and users who may read it", async () => {
    expect((await call(t, "GET", `/device/v3/${other.uuid}/state`, device.key)).status).toBe(401);
    expect((await call(t, "GET", `/device/v3/${device.uuid}/state`, undefined)).status).toBe(401);
    const sdk = await call(t, "GET", `/device/v2/${device.uuid}/state`, ownerToken);
    expect(sdk.status).toBe(200);
    // balena-sdk's getSupervisorTargetState reads v2 by default: its shape (supervisor-compat.test.ts).
    expect(Object.keys(sdk.json)).toEqual(["local", "dependent"]);
    expect((await call(t, "GET", `/device/v3/${device.uuid}/state`, ownerToken)).json).toHaveProperty([device.uuid]);
    const stranger = await t.factories.user();
    const refused = await call(t, "GET", `/device/v2/${device.uuid}/state`, stranger.token);
    expect(refused).toMatchObject({ status: 404, code: "device_not_found" });
    expect((await call(t, "GET", `/device/v2/${"0".repeat(32)}/state`, ownerToken)).status).toBe(404);
  });
});

describe("device keys", () => {
  it("are trusted from memory on the hot path, and a deleted device's key stops at once", async () => {
    const key = await provisioningKeyFor(t, ownerToken, fleet.id);
    const doomed = await registerDevice(t, key, fleet);
    expect((await poll(doomed)).status).toBe(200);
    // Checked once, the key is not read again.
    const original = t.db.query;
    let reads = 0;
    t.db.query = ((...args: Parameters<typeof original>) => {
      reads += 1;
      return original(...args);
    }) as typeof original;
    try {
      const again = await poll(doomed);
      expect(again.status).toBe(200);
    } finally {
      t.db.query = original;
    }
    expect(reads).toBe(0);
    // Deleting the device (its keys go with it) is felt at once, not after the cache's 10 minutes.
    expect((await call(t, "DELETE", `/v7/device(${doomed.id})`, ownerToken)).status).toBe(200);
    expect((await poll(doomed)).status).toBe(401);
  });
});
