import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call } from "./support/devices.ts";

/**
 * Device settings through the data API (spec 2 §4 Device switches, Support access, Custom
 * location; §5 Devices; §6 Device action permissions and Other rules).
 */
let t: TestApp;
let ownerToken: string;
let org: Awaited<ReturnType<TestApp["factories"]["organization"]>>;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;

const patch = (id: number, body: Record<string, unknown>, token = ownerToken) =>
  call(t, "PATCH", `/v7/device(${id})`, token, body);

async function row(id: number) {
  const { rows } = await t.db.query<Record<string, unknown>>("SELECT * FROM device WHERE id = $1", [id]);
  return rows[0] ?? {};
}

async function deviceWith(fields: Record<string, string | null>, on = fleet) {
  const device = await t.factories.device(on);
  const names = Object.keys(fields);
  if (names.length > 0) {
    await t.db.query(`UPDATE device SET ${names.map((n, i) => `${n} = $${i + 2}`).join(", ")} WHERE id = $1`, [
      device.id,
      ...names.map((n) => fields[n]),
    ]);
  }
  return device;
}

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user();
  ownerToken = owner.token;
  org = await t.factories.organization({ name: "Settings", admins: [owner.user] });
  fleet = await t.factories.fleet(org, { name: "settings-fleet" });
  // Paid, so that the many devices made here are not frozen beyond the free allowance.
  await paid(org.id);
});

const paid = (organization: number) =>
  t.db.query(
    `INSERT INTO "subscription" (is_for__organization, is_for__plan) SELECT $1, id FROM "plan" WHERE billing_code <> 'free' LIMIT 1`,
    [organization],
  );
afterAll(() => t.close());

describe("local mode (spec 2 §5)", () => {
  const enable = (device: number, name = "BALENA_SUPERVISOR_LOCAL_MODE") =>
    call(t, "POST", "/v7/device_config_variable", ownerToken, { device, name, value: "1" });

  it("needs supervisor 4 or later, an OS other than 1.x and a dev variant", async () => {
    const old = await deviceWith({ supervisor_version: "3.9.0", os_version: "balenaOS 2.50.0", os_variant: "dev" });
    expect(await enable(old.id)).toMatchObject({ status: 400, code: "local_mode_supervisor_too_old" });
    const none = await deviceWith({});
    expect(await enable(none.id)).toMatchObject({ status: 400, code: "local_mode_supervisor_too_old" });
    const os1 = await deviceWith({ supervisor_version: "6.0.0", os_version: "Resin OS 1.26.0", os_variant: "dev" });
    expect(await enable(os1.id, "RESIN_SUPERVISOR_LOCAL_MODE")).toMatchObject({
      status: 400,
      code: "local_mode_os_not_supported",
    });
    const prod = await deviceWith({ supervisor_version: "16.1.0", os_version: "balenaOS 6.0.13", os_variant: "prod" });
    expect(await enable(prod.id)).toMatchObject({ status: 400, code: "local_mode_dev_variant_required" });
    // Switching it off is always allowed.
    const off = await call(t, "POST", "/v7/device_config_variable", ownerToken, {
      device: prod.id,
      name: "BALENA_SUPERVISOR_LOCAL_MODE",
      value: "0",
    });
    expect(off.status).toBe(201);
    expect(
      await call(t, "PATCH", `/v7/device_config_variable(${off.json.id})`, ownerToken, { value: "1" }),
    ).toMatchObject({ status: 400, code: "local_mode_dev_variant_required" });

    // Malformed bodies are the data API's 400s, not server errors.
    for (const body of [
      { name: "BALENA_SUPERVISOR_LOCAL_MODE", value: "1" },
      { device: "x", name: "A", value: "1" },
    ]) {
      expect((await call(t, "POST", "/v7/device_config_variable", ownerToken, body)).status).toBe(400);
    }

    const dev = await deviceWith({ supervisor_version: "16.1.0", os_version: "balenaOS 6.0.13", os_variant: "dev" });
    expect((await enable(dev.id)).status).toBe(201);
    const read = await call(t, "GET", `/v7/device(${dev.id})?$select=is_in_local_mode`, ownerToken);
    expect(read.json.d).toEqual([{ is_in_local_mode: true }]);
  });
});

describe("switches, support access and custom location", () => {
  it("switches the public URL on and off", async () => {
    const device = await deviceWith({});
    expect((await patch(device.id, { is_web_accessible: true })).status).toBe(200);
    expect((await row(device.id)).is_web_accessible).toBe(true);
    expect((await patch(device.id, { is_web_accessible: false })).status).toBe(200);
    expect((await row(device.id)).is_web_accessible).toBe(false);
  });

  it("grants support access until a future date (ms) and revokes it with null", async () => {
    const device = await deviceWith({});
    const until = Date.now() + 5 * 24 * 3600 * 1000;
    expect((await patch(device.id, { is_accessible_by_support_until__date: until })).status).toBe(200);
    const stored = new Date(String((await row(device.id)).is_accessible_by_support_until__date)).getTime();
    expect(Math.abs(stored - until)).toBeLessThan(1000);
    expect(await patch(device.id, { is_accessible_by_support_until__date: Date.now() - 60_000 })).toMatchObject({
      status: 400,
      code: "support_access_in_past",
      text: "Support access date-time cannot be earlier than now",
    });
    expect((await patch(device.id, { is_accessible_by_support_until__date: null })).status).toBe(200);
    expect((await row(device.id)).is_accessible_by_support_until__date).toBeNull();
  });

  it("sets and unsets a custom location of numbers only", async () => {
    const device = await deviceWith({});
    expect((await patch(device.id, { custom_latitude: "52.52", custom_longitude: "-13.4" })).status).toBe(200);
    expect(await row(device.id)).toMatchObject({ custom_latitude: "52.52", custom_longitude: "-13.4" });
    for (const bad of [{ custom_latitude: "north" }, { custom_longitude: "1e3" }, { custom_latitude: "91" }]) {
      expect(await patch(device.id, bad)).toMatchObject({ status: 400, code: "invalid_parameter" });
    }
    expect((await patch(device.id, { custom_latitude: "", custom_longitude: "" })).status).toBe(200);
    expect(await row(device.id)).toMatchObject({ custom_latitude: null, custom_longitude: null });
  });
});

describe("deactivation (spec 2 §4, §5)", () => {
  it("needs a paid plan, and refuses an already inactive device", async () => {
    const free = await t.factories.organization({ name: "Free settings" });
    const owner = await t.factories.user();
    const freeFleet = await t.factories.fleet(free, { name: "free-fleet" });
    await t.factories.fleetMember(owner.user, freeFleet, "operator");
    const device = await t.factories.device(freeFleet);
    expect(await patch(device.id, { is_active: false }, owner.token)).toMatchObject({
      status: 402,
      code: "device_deactivation_paid_only",
    });
    const paidFleet = await t.factories.fleet(org, { name: "paid-fleet" });
    await t.factories.fleetMember(owner.user, paidFleet, "operator");
    const paidDevice = await t.factories.device(paidFleet);
    expect((await patch(paidDevice.id, { is_active: false }, owner.token)).status).toBe(200);
    expect((await row(paidDevice.id)).is_active).toBe(false);
    const status = await call(t, "GET", `/v7/device(${paidDevice.id})?$select=overall_status`, owner.token);
    expect(status.json.d).toEqual([{ overall_status: "inactive" }]);
    expect(await patch(paidDevice.id, { is_active: false }, owner.token)).toMatchObject({
      status: 400,
      code: "device_already_inactive",
    });
    // An online device (heartbeat or cloudlink) cannot be deactivated (spec 2 §8).
    const online = await deviceWith({ api_heartbeat_state: "online" }, paidFleet);
    expect(await patch(online.id, { is_active: false }, owner.token)).toMatchObject({
      status: 400,
      code: "device_must_be_offline",
    });
    await t.db.query(`UPDATE device SET api_heartbeat_state = 'offline', is_connected_to_vpn = true WHERE id = $1`, [
      online.id,
    ]);
    expect(await patch(online.id, { is_active: false }, owner.token)).toMatchObject({ code: "device_must_be_offline" });
    expect((await row(online.id)).is_active).toBe(true);
    // A safe operator may update devices but not deactivate them.
    const safe = await t.factories.user();
    await t.factories.fleetMember(safe.user, paidFleet, "safe-operator");
    const other = await t.factories.device(paidFleet);
    expect(await patch(other.id, { is_active: false }, safe.token)).toMatchObject({ status: 403 });
  });
});

describe("moving a device (spec 2 §5, §6 Other rules)", () => {
  it("moves to a fleet of the same architecture and leaves the pinned release behind", async () => {
    const target = await t.factories.fleet(org, { name: "move-target" });
    const release = await t.factories.release(fleet);
    const device = await deviceWith({});
    expect((await patch(device.id, { is_pinned_on__release: release.id })).status).toBe(200);
    const otherRelease = await t.factories.release(target);
    expect(await patch(device.id, { is_pinned_on__release: otherRelease.id })).toMatchObject({
      status: 400,
      code: "device_release_not_in_fleet",
    });
    expect((await patch(device.id, { belongs_to__application: target.id })).status).toBe(200);
    expect(await row(device.id)).toMatchObject({ belongs_to__application: target.id, is_pinned_on__release: null });
  });

  it("refuses a fleet of another CPU architecture", async () => {
    const amd64 = await t.factories.fleet(org, { name: "nuc-fleet", deviceType: "intel-nuc" });
    const device = await deviceWith({});
    expect(await patch(device.id, { belongs_to__application: amd64.id })).toMatchObject({
      status: 400,
      code: "no_compatible_architecture",
    });
  });

  it("changes the device type only to one of the fleet's CPU architecture", async () => {
    const typeId = async (slug: string) =>
      Number((await t.db.query<{ id: number }>("SELECT id FROM device_type WHERE slug = $1", [slug])).rows[0]?.id);
    const device = await deviceWith({});
    // settings-fleet is an aarch64 fleet (raspberrypi4-64); artik10 is armv7hf.
    expect(await patch(device.id, { is_of__device_type: await typeId("artik10") })).toMatchObject({
      status: 400,
      code: "no_compatible_architecture",
    });
    expect((await row(device.id)).is_of__device_type).toBe(fleet.is_for__device_type);
    expect((await patch(device.id, { is_of__device_type: await typeId("raspberrypi3-64") })).status).toBe(200);
    expect((await row(device.id)).is_of__device_type).toBe(await typeId("raspberrypi3-64"));
  });

  it("only lets roles that may move devices into the target fleet do so", async () => {
    const target = await t.factories.fleet(org, { name: "guarded-target" });
    const device = await deviceWith({});
    const operator = await t.factories.user();
    await t.factories.fleetMember(operator.user, fleet, "operator");
    // An operator of the source only: a fleet they cannot see is no target (the data API's 400).
    expect((await patch(device.id, { belongs_to__application: target.id }, operator.token)).status).toBe(400);
    // An observer of the target sees it but cannot move devices into it.
    await t.factories.fleetMember(operator.user, target, "observer");
    expect(await patch(device.id, { belongs_to__application: target.id }, operator.token)).toMatchObject({
      status: 403,
      code: "device_move_target_forbidden",
    });
    const safe = await t.factories.user();
    await t.factories.fleetMember(safe.user, fleet, "safe-operator");
    await t.factories.fleetMember(safe.user, target, "operator");
    expect((await patch(device.id, { belongs_to__application: target.id }, safe.token)).status).toBe(403);
    // Operator on both: allowed.
    const mover = await t.factories.user();
    await t.factories.fleetMember(mover.user, fleet, "operator");
    await t.factories.fleetMember(mover.user, target, "operator");
    expect((await patch(device.id, { belongs_to__application: target.id }, mover.token)).status).toBe(200);
    expect((await row(device.id)).belongs_to__application).toBe(target.id);
  });
});

describe("frozen devices (spec 2 §4)", () => {
  it("refuses user changes while frozen, still accepts deletion", async () => {
    const frozenOrg = await t.factories.organization({ name: "Frozen settings" });
    const owner = await t.factories.user();
    const frozenFleet = await t.factories.fleet(frozenOrg, { name: "frozen-fleet" });
    await t.factories.fleetMember(owner.user, frozenFleet, "developer");
    const device = await t.factories.device(frozenFleet);
    await t.db.query("UPDATE organization SET is_frozen = true WHERE id = $1", [frozenOrg.id]);
    expect(await patch(device.id, { device_name: "thawed?" }, owner.token)).toMatchObject({
      status: 403,
      code: "device_frozen",
    });
    expect(
      await call(t, "POST", "/v7/device_config_variable", owner.token, { device: device.id, name: "X", value: "1" }),
    ).toMatchObject({ status: 403, code: "device_frozen" });
    for (const resource of ["device_tag", "device_environment_variable"]) {
      const key = resource === "device_tag" ? "tag_key" : "name";
      expect(
        await call(t, "POST", `/v7/${resource}`, owner.token, { device: device.id, [key]: "K", value: "v" }),
      ).toMatchObject({ status: 403, code: "device_frozen" });
    }
    expect((await call(t, "DELETE", `/v7/device(${device.id})`, owner.token)).status).toBe(200);
    expect(await row(device.id)).toEqual({});
  });
});
