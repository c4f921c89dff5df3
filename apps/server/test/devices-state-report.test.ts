import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStateReports } from "../src/features/devices/state-report.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/** Current state reports (docs/device-protocol.md "Current state"): validation and batched writes. */
let t: TestApp;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
let device: TestDevice;
let other: TestDevice;

const report = (d: TestDevice, body: unknown, headers?: Record<string, string>) =>
  call(t, "PATCH", "/device/v3/state", d.key, body, headers);

async function columns(id: number) {
  const { rows } = await t.db.query<Record<string, unknown>>(
    `SELECT status, os_version, supervisor_version, ip_address, cpu_usage, cpu_temp, memory_usage, memory_total,
            storage_usage, is_undervolted, provisioning_state, provisioning_progress, update_status,
            last_update_status_event, is_running__release, api_heartbeat_state, last_connectivity_event
       FROM device WHERE id = $1`,
    [id],
  );
  return rows[0] ?? {};
}

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user();
  const org = await t.factories.organization({ name: "Reports", admins: [owner.user] });
  fleet = await t.factories.fleet(org, { name: "report-fleet" });
  const key = await provisioningKeyFor(t, owner.token, fleet.id);
  device = await registerDevice(t, key, fleet);
  other = await registerDevice(t, key, fleet);
});
afterAll(() => t.close());

describe("PATCH /device/v3/state", () => {
  it("keeps the report in memory and writes it with the next flush", async () => {
    const release = await t.factories.release(fleet);
    const answer = await report(device, {
      [device.uuid]: {
        status: "Idle",
        os_version: "balenaOS 6.0.13",
        supervisor_version: "16.1.0",
        ip_address: "192.168.1.20 10.0.0.2",
        cpu_usage: 12.4,
        cpu_temp: 48.6,
        memory_usage: 512,
        memory_total: 4096,
        storage_usage: 1200,
        is_undervolted: false,
        provisioning_state: "",
        provisioning_progress: null,
        update_status: "idle",
        apps: { [fleet.uuid]: { release_uuid: release.commit, releases: {} } },
        unknown_field: "ignored",
      },
    });
    expect(answer.status).toBe(200);
    expect(await columns(device.id)).toMatchObject({ status: null, cpu_usage: null });
    expect(t.ctx.devices.reports.pendingCount()).toBe(1);
    await t.ctx.devices.reports.flush();
    expect(await columns(device.id)).toMatchObject({
      status: "Idle",
      os_version: "balenaOS 6.0.13",
      supervisor_version: "16.1.0",
      ip_address: "192.168.1.20 10.0.0.2",
      cpu_usage: 12,
      cpu_temp: 49,
      memory_usage: 512,
      memory_total: 4096,
      storage_usage: 1200,
      provisioning_state: null,
      provisioning_progress: null,
      update_status: null,
      is_running__release: release.id,
    });
  });

  it("writes only what changed since", async () => {
    const same = { status: "Idle", cpu_usage: 12.4, memory_usage: 512 };
    await report(device, { [device.uuid]: same });
    expect(t.ctx.devices.reports.pendingCount()).toBe(0);
    await report(device, { [device.uuid]: { ...same, cpu_usage: 80, update_status: "downloading" } });
    expect(t.ctx.devices.reports.pendingCount()).toBe(1);
    await t.ctx.devices.reports.flush();
    const after = await columns(device.id);
    expect(after).toMatchObject({ cpu_usage: 80, update_status: "downloading", status: "Idle" });
    expect(after.last_update_status_event).not.toBeNull();
  });

  it("records service statuses of a known release as image and service installs", async () => {
    const release = await t.factories.release(fleet);
    const { rows: services } = await t.db.query<{ id: number }>(
      `INSERT INTO "service" (application, service_name) VALUES ($1, 'web') RETURNING id`,
      [fleet.id],
    );
    const { rows: images } = await t.db.query<{ id: number }>(
      `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, 'registry.local/web', 'success') RETURNING id`,
      [services[0]?.id],
    );
    const imageId = Number(images[0]?.id);
    await t.db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [imageId, release.id]);
    const services_ = (status: string, download_progress: number | null) => ({
      [other.uuid]: {
        apps: {
          [fleet.uuid]: {
            release_uuid: release.commit,
            releases: {
              [release.commit]: {
                update_status: "downloading",
                services: { web: { image: "web", status, download_progress }, unknown: { status: "Running" } },
              },
            },
          },
        },
      },
    });
    expect((await report(other, services_("Downloading", 40))).status).toBe(200);
    await t.ctx.devices.reports.flush();
    const installs = async () =>
      (
        await t.db.query(
          `SELECT installs__image, is_provided_by__release, status, download_progress FROM image_install WHERE device = $1`,
          [other.id],
        )
      ).rows;
    expect(await installs()).toEqual([
      { installs__image: imageId, is_provided_by__release: release.id, status: "Downloading", download_progress: 40 },
    ]);
    await report(other, services_("Running", null));
    await t.ctx.devices.reports.flush();
    expect(await installs()).toEqual([
      { installs__image: imageId, is_provided_by__release: release.id, status: "Running", download_progress: null },
    ]);
    const { rows: serviceInstalls } = await t.db.query(
      "SELECT installs__service FROM service_install WHERE device = $1",
      [other.id],
    );
    expect(serviceInstalls).toEqual([{ installs__service: services[0]?.id }]);
  });

  it("ends the installs of images the device no longer reports (a dropped download after a rollback)", async () => {
    const makeRelease = async (name: string) => {
      const release = await t.factories.release(fleet);
      const { rows } = await t.db.query<{ id: number }>(
        `INSERT INTO "service" (application, service_name) VALUES ($1, $2)
           ON CONFLICT (application, service_name) DO UPDATE SET service_name = EXCLUDED.service_name RETURNING id`,
        [fleet.id, name],
      );
      const { rows: images } = await t.db.query<{ id: number }>(
        `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, $2, 'success') RETURNING id`,
        [rows[0]?.id, `registry.local/${name}-${release.id}`],
      );
      const image = Number(images[0]?.id);
      await t.db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [image, release.id]);
      return { ...release, image };
    };
    const [running, dropped] = [await makeRelease("api"), await makeRelease("api")];
    const releasesReport = (releases: Record<string, string>) => ({
      [device.uuid]: {
        apps: {
          [fleet.uuid]: {
            release_uuid: running.commit,
            releases: Object.fromEntries(
              Object.entries(releases).map(([commit, status]) => [
                commit,
                { services: { api: { image: "api", status, download_progress: status === "Downloading" ? 0 : null } } },
              ]),
            ),
          },
        },
      },
    });
    const installs = async () =>
      (
        await t.db.query<{ image: number; status: string }>(
          `SELECT installs__image AS image, status FROM image_install WHERE device = $1 ORDER BY installs__image`,
          [device.id],
        )
      ).rows;
    const both = { [running.commit]: "Running", [dropped.commit]: "Downloading" };
    expect((await report(device, releasesReport(both))).status).toBe(200);
    await t.ctx.devices.reports.flush();
    expect(await installs()).toEqual([
      { image: running.image, status: "Running" },
      { image: dropped.image, status: "Downloading" },
    ]);
    // The target went back: the device reports only what it runs.
    await report(device, releasesReport({ [running.commit]: "Running" }));
    await t.ctx.devices.reports.flush();
    expect(await installs()).toEqual([{ image: running.image, status: "Running" }]);
    // And the same download, started again, shows again.
    await report(device, releasesReport(both));
    await t.ctx.devices.reports.flush();
    expect(await installs()).toHaveLength(2);
  });

  it("counts as a heartbeat", async () => {
    await report(other, { [other.uuid]: { status: "Idle" } });
    await t.ctx.devices.heartbeat.sweep();
    const after = await columns(other.id);
    expect(after.api_heartbeat_state).toBe("online");
    expect(after.last_connectivity_event).not.toBeNull();
  });

  it("refuses other devices' reports, bad values and oversized bodies", async () => {
    expect((await report(device, { [other.uuid]: { status: "Idle" } })).status).toBe(401);
    expect((await report(device, { [device.uuid]: { cpu_usage: 250 } })).status).toBe(400);
    expect((await report(device, { [device.uuid]: { update_status: "exploding" } })).status).toBe(400);
    expect((await report(device, { [device.uuid]: {}, [other.uuid]: {} })).status).toBe(400);
    expect((await report(device, [1, 2])).status).toBe(400);
    const big = { [device.uuid]: { status: "x".repeat(70 * 1024) } };
    expect((await report(device, big)).status).toBe(413);
    expect((await call(t, "PATCH", "/device/v3/state", undefined, { [device.uuid]: {} })).status).toBe(401);
  });

  it("answers without browser headers (helmet, CORS): only devices call it", async () => {
    const origin = t.ctx.config.publicUrl;
    const reported = await report(device, { [device.uuid]: { status: "Idle" } }, { origin });
    expect(reported.status).toBe(200);
    expect(reported.headers.get("x-content-type-options")).toBeNull();
    expect(reported.headers.get("access-control-allow-origin")).toBeNull();
    // The target state is read by the dashboard's diagnostics page too: it keeps both.
    const state = await call(t, "GET", `/device/v3/${device.uuid}/state`, device.key, undefined, { origin });
    expect(state.status).toBe(200);
    expect(state.headers.get("x-content-type-options")).toBe("nosniff");
    expect(state.headers.get("access-control-allow-origin")).toBe(origin);
  });

  it("writes a change whose write failed with the next flush, even when the device reports it no more", async () => {
    let failNext = true;
    const reports = createStateReports({
      db: {
        query: ((sql: string, params?: unknown[]) => {
          if (failNext && sql.includes('UPDATE "device"')) {
            failNext = false;
            return Promise.reject(new Error("deadlock detected"));
          }
          return t.db.query(sql, params);
        }) as typeof t.db.query,
      },
      flushMs: 0,
    });
    const target = { id: other.id, fleet: fleet.id };
    await reports.record(target, { provisioning_state: "Configuring", provisioning_progress: 35 });
    await expect(reports.flush()).rejects.toThrow("deadlock detected");
    await reports.record(target, { provisioning_state: "Configuring", provisioning_progress: 35, cpu_usage: 20 });
    await reports.flush();
    expect(await columns(other.id)).toMatchObject({ provisioning_progress: 35, cpu_usage: 20 });
    await reports.close();
  });

  it("writes what is left in memory when the server stops", async () => {
    await t.ctx.devices.reports.flush();
    await report(device, { [device.uuid]: { status: "Rebooting" } });
    expect(t.ctx.devices.reports.pendingCount()).toBe(1);
    await t.ctx.devices.reports.close();
    expect((await columns(device.id)).status).toBe("Rebooting");
  });
});
