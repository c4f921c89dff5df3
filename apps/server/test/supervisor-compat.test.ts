import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * Device endpoints balena's own Supervisor calls besides the v3 state (docs/device-protocol.md
 * "balenaOS devices"): device tags, the v2 state for Supervisors up to v12, and a target state
 * composition without the builder's `build`.
 */
let t: TestApp;
let ownerToken: string;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let device: TestDevice;
let other: TestDevice;
let release: { id: number; commit: string };
let serviceId: number;
let imageId: number;

const tagsOf = async (d: TestDevice) =>
  Object.fromEntries(
    (
      await t.db.query<{ tag_key: string; value: string }>(
        `SELECT tag_key, value FROM "device_tag" WHERE device = $1 ORDER BY tag_key`,
        [d.id],
      )
    ).rows.map((row) => [row.tag_key, row.value]),
  );

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user();
  ownerToken = owner.token;
  const org = await t.factories.organization({ name: "Supervisors", admins: [owner.user] });
  fleet = await t.factories.fleet(org, { name: "balenaos-fleet" });
  const key = await provisioningKeyFor(t, ownerToken, fleet.id);
  device = await registerDevice(t, key, fleet, { supervisor_version: "12.11.0" });
  other = await registerDevice(t, key, fleet);
  release = await t.factories.release(fleet, { commit: "feedface".padEnd(32, "0") });
  await t.db.query(`UPDATE "release" SET composition = $2 WHERE id = $1`, [
    release.id,
    JSON.stringify({
      version: "2.1",
      services: {
        main: {
          build: { context: "." },
          "x-notes": "for people",
          restart: "always",
          ports: ["80:80"],
          labels: { "io.balena.features.dbus": "1" },
        },
      },
      volumes: { data: {} },
    }),
  ]);
  serviceId = Number(
    (
      await t.db.query<{ id: number }>(
        `INSERT INTO "service" (application, service_name) VALUES ($1, 'main') RETURNING id`,
        [fleet.id],
      )
    ).rows[0]?.id,
  );
  imageId = Number(
    (
      await t.db.query<{ id: number }>(
        `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, 'registry.local/main:1', 'success') RETURNING id`,
        [serviceId],
      )
    ).rows[0]?.id,
  );
  await t.db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [imageId, release.id]);
  await t.db.query(
    `INSERT INTO "service_label" (service, label_name, value) VALUES ($1, 'io.balena.features.dbus', '1')`,
    [serviceId],
  );
  await t.db.query(`INSERT INTO "application_config_variable" (application, name, value) VALUES ($1, $2, $3)`, [
    fleet.id,
    "RESIN_SUPERVISOR_UPDATE_STRATEGY",
    "kill-then-download",
  ]);
  await t.db.query(
    `INSERT INTO "application_environment_variable" (application, name, value) VALUES ($1, 'MODE', 'x')`,
    [fleet.id],
  );
  expect(
    (await call(t, "PATCH", `/v7/application(${fleet.id})`, ownerToken, { should_be_running__release: release.id }))
      .status,
  ).toBe(200);
});
afterAll(() => t.close());

describe("PATCH /device/v3/tags", () => {
  it("creates and updates the device's tags, as the Supervisor sends them", async () => {
    await t.db.query(
      `INSERT INTO "device_tag" (device, tag_key, value) VALUES ($1, 'room', 'hall'), ($1, 'keep', 'me')`,
      [device.id],
    );
    const answer = await call(t, "PATCH", "/device/v3/tags", device.key, {
      [device.uuid]: { room: "kitchen", floor: "2", keep: "me" },
    });
    expect(answer.status).toBe(200);
    expect(await tagsOf(device)).toEqual({ floor: "2", keep: "me", room: "kitchen" });
    // The same again changes nothing and still answers 200.
    expect((await call(t, "PATCH", "/device/v3/tags", device.key, { [device.uuid]: { room: "kitchen" } })).status).toBe(
      200,
    );
  });

  it("refuses another device's uuid, bad keys, an empty body, users and unknown keys", async () => {
    expect((await call(t, "PATCH", "/device/v3/tags", device.key, { [other.uuid]: { room: "stolen" } })).status).toBe(
      401,
    );
    expect(
      (
        await call(t, "PATCH", "/device/v3/tags", device.key, {
          [device.uuid]: { room: "x" },
          [other.uuid]: { room: "stolen" },
        })
      ).status,
    ).toBe(401);
    expect(await tagsOf(other)).toEqual({});
    const reserved = await call(t, "PATCH", "/device/v3/tags", device.key, {
      [device.uuid]: { "io.balena.private": "1", fine: "1" },
    });
    expect(reserved.status).toBe(400);
    expect(reserved.text).toMatch(/reserved/);
    expect((await call(t, "PATCH", "/device/v3/tags", device.key, { [device.uuid]: { "a b": "1" } })).status).toBe(400);
    expect((await call(t, "PATCH", "/device/v3/tags", device.key, { [device.uuid]: {} })).status).toBe(400);
    expect((await call(t, "PATCH", "/device/v3/tags", device.key, {})).status).toBe(400);
    expect((await call(t, "PATCH", "/device/v3/tags", device.key, { [device.uuid]: { n: 1 } })).status).toBe(400);
    expect((await call(t, "PATCH", "/device/v3/tags", ownerToken, { [device.uuid]: { room: "x" } })).status).toBe(401);
    expect((await call(t, "PATCH", "/device/v3/tags", "not-a-key", { [device.uuid]: { room: "x" } })).status).toBe(401);
    expect(await tagsOf(device)).not.toHaveProperty("fine");
  });
});

describe("the target state's composition", () => {
  it("leaves out the builder's build and compose extension fields, keeps the rest", async () => {
    const state = await call(t, "GET", `/device/v3/${device.uuid}/state`, device.key);
    expect(state.status).toBe(200);
    const services = (
      state.json[device.uuid] as {
        apps: Record<string, { releases: Record<string, { services: Record<string, { composition: unknown }> }> }>;
      }
    ).apps[fleet.uuid]?.releases[release.commit]?.services;
    expect(services?.main?.composition).toEqual({
      restart: "always",
      ports: ["80:80"],
      labels: { "io.balena.features.dbus": "1" },
    });
  });
});

describe("GET /device/v2/{uuid}/state", () => {
  it("answers the v2 shape: local name, config and the fleet's app by id, services by id", async () => {
    const answer = await call(t, "GET", `/device/v2/${device.uuid}/state`, device.key);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("etag")).toMatch(/^".+"$/);
    expect(answer.json).toEqual({
      local: {
        name: device.uuid.slice(0, 7),
        config: expect.objectContaining({
          BALENA_SUPERVISOR_POLL_INTERVAL: "60000",
          RESIN_SUPERVISOR_UPDATE_STRATEGY: "kill-then-download",
        }),
        apps: {
          [String(fleet.id)]: {
            name: "balenaos-fleet",
            commit: release.commit,
            releaseId: release.id,
            services: {
              [String(serviceId)]: {
                restart: "always",
                ports: ["80:80"],
                imageId,
                serviceName: "main",
                image: "registry.local/main:1",
                running: true,
                environment: { MODE: "x" },
                labels: { "io.balena.features.dbus": "1", "io.resin.update.strategy": "kill-then-download" },
              },
            },
            volumes: { data: {} },
            networks: {},
          },
        },
      },
      dependent: { apps: {}, devices: {} },
    });
    const again = await call(t, "GET", `/device/v2/${device.uuid}/state`, device.key, undefined, {
      "if-none-match": answer.headers.get("etag") ?? "",
    });
    expect(again.status).toBe(304);
    // Its ETag is its own, not the v3 one.
    const v3 = await call(t, "GET", `/device/v3/${device.uuid}/state`, device.key);
    expect(v3.headers.get("etag")).not.toBe(answer.headers.get("etag"));
  });

  it("answers an app without services before the fleet has a release, and 401 for another device", async () => {
    const owner = await t.factories.user();
    const org = await t.factories.organization({ name: "Empty", admins: [owner.user] });
    const empty = await t.factories.fleet(org, { name: "empty-fleet" });
    const fresh = await registerDevice(t, await provisioningKeyFor(t, owner.token, empty.id), empty);
    const answer = await call(t, "GET", `/device/v2/${fresh.uuid}/state`, fresh.key);
    expect((answer.json as { local: { apps: unknown } }).local.apps).toEqual({
      [String(empty.id)]: { name: "empty-fleet", services: {}, volumes: {}, networks: {} },
    });
    expect((await call(t, "GET", `/device/v2/${device.uuid}/state`, fresh.key)).status).toBe(401);
  });
});

describe("PATCH /device/v2/{uuid}/state", () => {
  it("records a v2 report: the device's fields, the running commit and service statuses by image", async () => {
    const answer = await call(t, "PATCH", `/device/v2/${device.uuid}/state`, device.key, {
      local: {
        status: "Idle",
        os_version: "balenaOS 2.50.1",
        supervisor_version: "12.11.0",
        ip_address: "192.168.1.20",
        api_port: "48484",
        api_secret: "secret",
        cpu_usage: 12,
        memory_total: 1024,
        is_on__commit: release.commit,
        apps: {
          [String(fleet.id)]: {
            services: {
              [String(imageId)]: { releaseId: release.id, status: "Running", download_progress: null },
              // Another fleet's or an unknown image is left out.
              "999999": { releaseId: release.id, status: "Running" },
            },
          },
        },
      },
      dependent: { apps: {}, devices: {} },
    });
    expect(answer.status).toBe(200);
    await t.ctx.devices.reports.flush();
    await expect
      .poll(
        async () =>
          (
            await t.db.query(
              `SELECT status, os_version, ip_address, api_port, is_running__release FROM "device" WHERE id = $1`,
              [device.id],
            )
          ).rows[0],
        { timeout: 15_000, interval: 250 },
      )
      .toEqual({
        status: "Idle",
        os_version: "balenaOS 2.50.1",
        ip_address: "192.168.1.20",
        api_port: 48484,
        is_running__release: release.id,
      });
    await expect
      .poll(
        async () =>
          (await t.db.query(`SELECT installs__image, status FROM "image_install" WHERE device = $1`, [device.id])).rows,
        { timeout: 15_000, interval: 250 },
      )
      .toEqual([{ installs__image: imageId, status: "Running" }]);
  });

  it("refuses another device's uuid, a user, and a malformed body", async () => {
    expect(
      (await call(t, "PATCH", `/device/v2/${other.uuid}/state`, device.key, { local: { status: "Idle" } })).status,
    ).toBe(401);
    expect(
      (await call(t, "PATCH", `/device/v2/${device.uuid}/state`, ownerToken, { local: { status: "Idle" } })).status,
    ).toBe(401);
    expect(
      (await call(t, "PATCH", `/device/v2/${device.uuid}/state`, device.key, { local: { cpu_usage: "lots" } })).status,
    ).toBe(400);
  });
});
