import { isDiscontinuedDeviceType } from "@flotilla/domain";
import { type BalenaSDK, getSdk } from "balena-sdk";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { seedDemo } from "../src/features/demo/seed.ts";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Spec 2 §5 "Fleet name", "Creating a fleet", "Fleet changes" and the free plan, through the
 * real balena-sdk and plain HTTP against /v7.
 */
let t: TestApp;
let sdk: BalenaSDK;
let owner: Awaited<ReturnType<TestApp["factories"]["user"]>>;
let developer: Awaited<ReturnType<TestApp["factories"]["user"]>>;
let acme: { id: number; handle: string };
let globex: { id: number; handle: string };
let elsewhere: { id: number; handle: string };

/** balena's words for a taken fleet name (balena-cli looks for "unique"); the dashboard's are the spec's. */
const NAME_TAKEN = '"organization" and "app_name" must be unique.';

/** The spec's params the API sends with an error the dashboard words itself (x-flotilla-error-params). */
const paramsOf = (error: unknown) => {
  const header = (error as { responseHeaders?: Headers }).responseHeaders?.get("x-flotilla-error-params");
  return header ? JSON.parse(decodeURIComponent(header)) : undefined;
};

beforeAll(async () => {
  t = await createTestApp();
  owner = await t.factories.user({ email: "owner@example.com", password: "owner-password" });
  developer = await t.factories.user();
  const stranger = await t.factories.user();
  acme = await t.factories.organization({ name: "Acme", admins: [owner.user], members: [developer.user] });
  globex = await t.factories.organization({ name: "Globex", admins: [owner.user] });
  elsewhere = await t.factories.organization({ name: "Elsewhere", admins: [stranger.user], members: [owner.user] });
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.login({ email: "owner@example.com", password: "owner-password" });
});
afterAll(() => t.close());

/** A raw request to the data API: status, error code header and body text. */
async function v7(token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${t.url}/v7/${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const params = response.headers.get("x-flotilla-error-params");
  return {
    status: response.status,
    code: response.headers.get("x-flotilla-error-code"),
    params: params ? JSON.parse(decodeURIComponent(params)) : undefined,
    text: await response.text(),
  };
}

const typeId = async (table: "device_type" | "application_type", slug: string) => {
  const { rows } = await t.db.query<{ id: number }>(`SELECT id FROM "${table}" WHERE slug = $1`, [slug]);
  return Number(rows[0]?.id);
};
const fleetRow = async (id: number) =>
  (
    await t.db.query<Record<string, unknown>>(
      `SELECT a.*, o.handle FROM application a JOIN organization o ON o.id = a.organization WHERE a.id = $1`,
      [id],
    )
  ).rows[0];

describe("fleet name (spec 2 §5)", () => {
  const LENGTH_RULE =
    "It is necessary that each application has an app name that has a Length (Type) that is greater than or equal to 4 and is less than or equal to 100.";
  const CHARACTERS = "App name may only contain [a-zA-Z0-9_-]";
  it.each([
    ["", LENGTH_RULE, "A name is required"],
    ["abc", LENGTH_RULE, "The name should be at least 4 characters long"],
    ["a".repeat(101), LENGTH_RULE, "The name should not be more than 100 characters long"],
    ["my fleet", CHARACTERS, "The name can only contain alphanumeric characters, hyphens or underscores"],
    ["-fleet", CHARACTERS, "The name can only contain alphanumeric characters, hyphens or underscores"],
    ["_fleet", CHARACTERS, "The name can only contain alphanumeric characters, hyphens or underscores"],
  ])(
    "refuses %j on create and rename, in balena's words (the spec's go to the dashboard)",
    async (name, words, problem) => {
      const created = await sdk.models.application
        .create({ name, deviceType: "raspberrypi4-64", organization: "acme" })
        .catch((error: unknown) => error);
      expect(created).toMatchObject({ statusCode: 400, message: expect.stringContaining(words) });
      expect(paramsOf(created)).toEqual({ problem });
      const fleet = await t.factories.fleet(acme);
      const renamed = await sdk.models.application.rename(fleet.id, name).catch((error: unknown) => error);
      expect(renamed).toMatchObject({ statusCode: 400, message: expect.stringContaining(words) });
    },
  );

  it("is unique case-insensitively per organization, for every class, on create and rename", async () => {
    await t.factories.fleet(acme, { name: "Weather" });
    await t.factories.fleet(acme, { name: "camera-block", className: "block" });
    await expect(
      sdk.models.application.create({ name: "WEATHER", deviceType: "raspberrypi4-64", organization: "acme" }),
    ).rejects.toThrow(NAME_TAKEN);
    await expect(
      sdk.models.application.create({
        name: "Camera-Block",
        deviceType: "raspberrypi4-64",
        organization: "acme",
        applicationClass: "block",
      }),
    ).rejects.toThrow(NAME_TAKEN);
    const other = await t.factories.fleet(acme, { name: "rename-me" });
    await expect(sdk.models.application.rename(other.id, "weather")).rejects.toThrow(NAME_TAKEN);
    // Another organization may use the name; renaming to the same name in another case is fine.
    const created = await sdk.models.application.create({
      name: "weather",
      deviceType: "raspberrypi4-64",
      organization: "globex",
    });
    expect(created.slug).toBe("globex/weather");
    await sdk.models.application.rename(other.id, "Rename-Me");
    expect((await fleetRow(other.id))?.slug).toBe("acme/rename-me");
  });

  it("answers the catalogue code with the text", async () => {
    const response = await v7(owner.token, "POST", "application", {
      app_name: "sensors",
      organization: acme.id,
      is_for__device_type: await typeId("device_type", "raspberrypi4-64"),
    });
    expect(response.status).toBe(201);
    const again = await v7(owner.token, "POST", "application", {
      app_name: "SENSORS",
      organization: acme.id,
      is_for__device_type: await typeId("device_type", "raspberrypi4-64"),
    });
    expect(again).toMatchObject({ status: 409, code: "already_used", text: NAME_TAKEN });
    // The dashboard words it with the spec's text and these params (apps/web lib/errors.ts).
    expect(again.params).toEqual({ type: "fleet" });
  });
});

describe("creating a fleet (spec 2 §5)", () => {
  it("needs name, device type and organization: missing required attributes", async () => {
    const deviceType = await typeId("device_type", "raspberrypi4-64");
    for (const body of [
      { organization: acme.id, is_for__device_type: deviceType },
      { app_name: "no-org-fleet", is_for__device_type: deviceType },
      { app_name: "no-type-fleet", organization: acme.id },
    ]) {
      expect(await v7(owner.token, "POST", "application", body)).toMatchObject({
        status: 400,
        code: "missing_required_attributes",
        text: "missing required attributes",
      });
    }
  });

  it("refuses a device type that does not exist, without a 500", async () => {
    const response = await v7(owner.token, "POST", "application", {
      app_name: "ghost-type",
      organization: acme.id,
      is_for__device_type: 999999,
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
  });

  it("refuses a paid-only fleet type without a paid plan, on create and on change", async () => {
    const essentials = await typeId("application_type", "essentials");
    await t.db.query("UPDATE application_type SET requires_payment = true WHERE id = $1", [essentials]);
    try {
      const created = await v7(owner.token, "POST", "application", {
        app_name: "paid-type",
        organization: acme.id,
        is_for__device_type: await typeId("device_type", "raspberrypi4-64"),
        application_type: essentials,
      });
      expect(created).toMatchObject({
        status: 402,
        code: "application_type_paid_only",
        text: "This fleet type needs a paid plan: essentials",
      });
      const fleet = await t.factories.fleet(acme, { name: "free-typed" });
      const changed = await v7(owner.token, "PATCH", `application(${fleet.id})`, { application_type: essentials });
      expect(changed).toMatchObject({ status: 402, code: "application_type_paid_only" });
    } finally {
      await t.db.query("UPDATE application_type SET requires_payment = false WHERE id = $1", [essentials]);
    }
  });

  it("refuses a fleet type the device type cannot run: multicontainer, or an OS range no version meets", async () => {
    const microservices = await typeId("application_type", "microservices");
    const essentials = await typeId("application_type", "essentials");
    const create = async (name: string, deviceType: string, applicationType: number) =>
      v7(owner.token, "POST", "application", {
        app_name: name,
        organization: acme.id,
        is_for__device_type: await typeId("device_type", deviceType),
        application_type: applicationType,
      });
    expect(await create("multi-on-pi1", "raspberry-pi", microservices)).toMatchObject({
      status: 400,
      code: "application_type_not_available",
      text: "This fleet type is not available: microservices",
    });
    expect((await create("essentials-on-pi1", "raspberry-pi", essentials)).status).toBe(201);
    await t.db.query("UPDATE application_type SET needs__os_version_range = '>=9.0.0' WHERE id = $1", [essentials]);
    try {
      expect(await create("upcoming-type", "raspberrypi4-64", essentials)).toMatchObject({
        status: 400,
        code: "application_type_not_available",
      });
      const fleet = await t.factories.fleet(acme, { name: "os-typed" });
      const changed = await v7(owner.token, "PATCH", `application(${fleet.id})`, { application_type: essentials });
      expect(changed).toMatchObject({ status: 400, code: "application_type_not_available" });
    } finally {
      await t.db.query("UPDATE application_type SET needs__os_version_range = NULL WHERE id = $1", [essentials]);
    }
  });

  it("refuses a discontinued device type for fleets and devices: Discontinued device type: {type}", async () => {
    const artik = await typeId("device_type", "artik10");
    const created = await v7(owner.token, "POST", "application", {
      app_name: "artik-fleet",
      organization: acme.id,
      is_for__device_type: artik,
    });
    expect(created).toMatchObject({
      status: 400,
      code: "discontinued_device_type",
      text: "Discontinued device type: artik10",
    });
    const fleet = await t.factories.fleet(acme, { name: "armv7-fleet", deviceType: "raspberrypi3" });
    const changed = await v7(owner.token, "PATCH", `application(${fleet.id})`, { is_for__device_type: artik });
    expect(changed).toMatchObject({ status: 400, code: "discontinued_device_type" });
    const device = await v7(owner.token, "POST", "device", {
      belongs_to__application: fleet.id,
      is_of__device_type: artik,
      device_name: "old-board",
    });
    expect(device).toMatchObject({ status: 400, text: "Discontinued device type: artik10" });
  });

  it("is for organization administrators only", async () => {
    const response = await v7(developer.token, "POST", "application", {
      app_name: "by-a-member",
      organization: acme.id,
      is_for__device_type: await typeId("device_type", "raspberrypi4-64"),
    });
    expect(response.status).toBe(401);
  });
});

describe("fleet changes (spec 2 §5)", () => {
  it("refuses to rename a legacy fleet", async () => {
    const fleet = await t.factories.fleet(acme, { name: "old-timer" });
    await t.db.query("UPDATE application SET application_type = $1 WHERE id = $2", [
      await typeId("application_type", "legacy-v1"),
      fleet.id,
    ]);
    await expect(sdk.models.application.rename(fleet.id, "new-timer")).rejects.toThrow(
      "cannot rename classic and legacy applications",
    );
  });

  it("stores an empty repository URL as null; legacy types need one before going public", async () => {
    const fleet = await t.factories.fleet(acme, { name: "public-one" });
    await sdk.pine.patch({
      resource: "application",
      id: fleet.id,
      body: { is_stored_at__repository_url: "https://github.com/acme/app" },
    });
    expect((await fleetRow(fleet.id))?.is_stored_at__repository_url).toBe("https://github.com/acme/app");
    await sdk.pine.patch({ resource: "application", id: fleet.id, body: { is_stored_at__repository_url: "" } });
    expect((await fleetRow(fleet.id))?.is_stored_at__repository_url).toBeNull();
    // Not legacy: public without a URL is fine.
    await sdk.pine.patch({ resource: "application", id: fleet.id, body: { is_public: true } });
    await sdk.pine.patch({ resource: "application", id: fleet.id, body: { is_public: false } });
    const legacy = await typeId("application_type", "legacy-v2");
    await t.db.query("UPDATE application SET application_type = $1 WHERE id = $2", [legacy, fleet.id]);
    await expect(sdk.pine.patch({ resource: "application", id: fleet.id, body: { is_public: true } })).rejects.toThrow(
      "must first enter repo url",
    );
    await sdk.pine.patch({
      resource: "application",
      id: fleet.id,
      body: { is_public: true, is_stored_at__repository_url: "https://github.com/acme/app" },
    });
    expect((await fleetRow(fleet.id))?.is_public).toBe(true);
  });

  it("grants support access until a future date, refuses the past, revokes with null", async () => {
    const fleet = await t.factories.fleet(acme, { name: "supported" });
    // Stored to the second.
    const until = Math.ceil((Date.now() + 5 * 24 * 3600 * 1000) / 1000) * 1000;
    await sdk.models.application.grantSupportAccess(fleet.id, until);
    expect(new Date(String((await fleetRow(fleet.id))?.is_accessible_by_support_until__date)).getTime()).toBe(until);
    // The SDK refuses a past date itself; the server does too.
    expect(
      await v7(owner.token, "PATCH", `application(${fleet.id})`, {
        is_accessible_by_support_until__date: Date.now() - 60_000,
      }),
    ).toMatchObject({
      status: 400,
      code: "support_access_in_past",
      text: "Support access date-time cannot be earlier than now",
    });
    await sdk.models.application.revokeSupportAccess(fleet.id);
    expect((await fleetRow(fleet.id))?.is_accessible_by_support_until__date).toBeNull();
    const garbage = await v7(owner.token, "PATCH", `application(${fleet.id})`, {
      is_accessible_by_support_until__date: "not a date",
    });
    expect(garbage.status).toBe(400);
  });

  it("changes the default device type only within the CPU architecture", async () => {
    const fleet = await t.factories.fleet(acme, { name: "arch-fleet" });
    await sdk.pine.patch({
      resource: "application",
      id: fleet.id,
      body: { is_for__device_type: await typeId("device_type", "raspberrypi5") },
    });
    expect((await fleetRow(fleet.id))?.is_for__device_type).toBe(await typeId("device_type", "raspberrypi5"));
    const response = await v7(owner.token, "PATCH", `application(${fleet.id})`, {
      is_for__device_type: await typeId("device_type", "intel-nuc"),
    });
    expect(response).toMatchObject({
      status: 400,
      code: "no_compatible_architecture",
      text: "no compatible cpu architecture found",
    });
  });

  it("changes the device type of several fleets only when they share the architecture", async () => {
    const a = await t.factories.fleet(acme, { name: "multi-a" });
    const b = await t.factories.fleet(acme, { name: "multi-b", deviceType: "raspberrypi3-64" });
    const c = await t.factories.fleet(acme, { name: "multi-c", deviceType: "raspberrypi3" });
    const pi5 = await typeId("device_type", "raspberrypi5");
    const same = await v7(owner.token, "PATCH", `application?$filter=id in (${a.id},${b.id})`, {
      is_for__device_type: pi5,
    });
    expect(same.status).toBe(200);
    expect((await fleetRow(b.id))?.is_for__device_type).toBe(pi5);
    const mixed = await v7(owner.token, "PATCH", `application?$filter=id in (${a.id},${c.id})`, {
      is_for__device_type: await typeId("device_type", "raspberrypi4-64"),
    });
    expect(mixed).toMatchObject({ status: 400, code: "no_compatible_architecture" });
    expect((await fleetRow(a.id))?.is_for__device_type).toBe(pi5);
    const renameMany = await v7(owner.token, "PATCH", `application?$filter=id in (${a.id},${b.id})`, {
      app_name: "same-name",
    });
    expect(renameMany.status).toBe(400);
  });

  it("changes the fleet type with application.change-type; a developer may not", async () => {
    const fleet = await t.factories.fleet(acme, { name: "typed-fleet" });
    const essentials = await typeId("application_type", "essentials");
    await sdk.pine.patch({ resource: "application", id: fleet.id, body: { application_type: essentials } });
    expect((await fleetRow(fleet.id))?.application_type).toBe(essentials);
    await t.factories.fleetMember(developer.user, fleet, "developer");
    const response = await v7(developer.token, "PATCH", `application(${fleet.id})`, {
      application_type: await typeId("application_type", "microservices"),
    });
    expect(response.status).toBe(403);
    expect((await fleetRow(fleet.id))?.application_type).toBe(essentials);
  });
});

describe("transfer of ownership (spec 2 §5)", () => {
  it("moves the fleet to an organization the caller administers, with its new slug", async () => {
    const fleet = await t.factories.fleet(acme, { name: "travelling" });
    await t.factories.device(fleet);
    await sdk.pine.patch({ resource: "application", id: fleet.id, body: { organization: globex.id } });
    const row = await fleetRow(fleet.id);
    expect(row).toMatchObject({ organization: globex.id, slug: "globex/travelling" });
    expect((await sdk.models.application.get(fleet.id)).slug).toBe("globex/travelling");
  });

  it("leaves the source organization's teams and the members who are not in the target behind", async () => {
    const fleet = await t.factories.fleet(acme, { name: "with-people" });
    const both = await t.factories.user();
    await t.db.query(
      `INSERT INTO organization_membership ("user", is_member_of__organization, organization_membership_role)
       SELECT $1, o, r.id FROM unnest($2::int[]) AS o, organization_membership_role r WHERE r.name = 'member'`,
      [both.user.id, [acme.id, globex.id]],
    );
    await t.factories.fleetMember(developer.user, fleet, "developer");
    await t.factories.fleetMember(both.user, fleet, "observer");
    await t.factories.team(acme, { members: [developer.user], fleets: [{ fleet, role: "developer" }] });
    await sdk.pine.patch({ resource: "application", id: fleet.id, body: { organization: globex.id } });
    const members = await t.db.query<{ user: number }>(
      'SELECT "user" FROM user_application_membership WHERE is_member_of__application = $1',
      [fleet.id],
    );
    expect(members.rows.map((r) => r.user)).toEqual([both.user.id]);
    const teams = await t.db.query("SELECT 1 FROM team_application_access WHERE grants_access_to__application = $1", [
      fleet.id,
    ]);
    expect(teams.rows).toEqual([]);
    expect(await v7(developer.token, "GET", `application(${fleet.id})`)).toMatchObject({
      status: 200,
      text: '{"d":[]}',
    });
  });

  it("refuses a target without access to the fleet's private device type", async () => {
    const fleet = await t.factories.fleet(acme, { name: "private-type" });
    await t.db.query("UPDATE device_type SET is_private = true WHERE id = $1", [fleet.is_for__device_type]);
    await t.db.query(
      "INSERT INTO organization_has_private_access_to_device_type (organization, has_private_access_to__device_type) VALUES ($1, $2)",
      [acme.id, fleet.is_for__device_type],
    );
    try {
      const response = await v7(owner.token, "PATCH", `application(${fleet.id})`, { organization: globex.id });
      expect(response).toMatchObject({
        status: 400,
        code: "invalid_device_type",
        text: "Invalid device type: raspberrypi4-64",
      });
    } finally {
      await t.db.query("UPDATE device_type SET is_private = false WHERE id = $1", [fleet.is_for__device_type]);
      await t.db.query("DELETE FROM organization_has_private_access_to_device_type");
    }
  });

  it("refuses a target the caller does not administer", async () => {
    const fleet = await t.factories.fleet(acme, { name: "stay-home" });
    const response = await v7(owner.token, "PATCH", `application(${fleet.id})`, { organization: elsewhere.id });
    expect(response).toMatchObject({ status: 403, code: "transfer_target_admin_required" });
    expect((await fleetRow(fleet.id))?.organization).toBe(acme.id);
  });

  it("refuses a target that has a resource of the same name", async () => {
    await t.factories.fleet(globex, { name: "Duplicate" });
    const fleet = await t.factories.fleet(acme, { name: "duplicate" });
    const response = await v7(owner.token, "PATCH", `application(${fleet.id})`, { organization: globex.id });
    expect(response).toMatchObject({ status: 409, code: "already_used", text: NAME_TAKEN });
  });

  it("needs application.transfer: a fleet developer may not, even to an organization they administer", async () => {
    const fleet = await t.factories.fleet(acme, { name: "dev-fleet" });
    await t.factories.fleetMember(developer.user, fleet, "developer");
    const home = await t.factories.organization({ name: "Dev Home", admins: [developer.user] });
    const response = await v7(developer.token, "PATCH", `application(${fleet.id})`, { organization: home.id });
    expect(response).toMatchObject({ status: 403, code: "forbidden" });
    expect((await fleetRow(fleet.id))?.organization).toBe(acme.id);
  });

  it("refuses, naming the actor type and right, a write to a fleet or device the caller reads but may not change", async () => {
    const fleet = await t.factories.fleet(acme, { name: "read-only-fleet" });
    await t.factories.fleetMember(developer.user, fleet, "developer");
    const removal = await v7(developer.token, "DELETE", `application(${fleet.id})`);
    expect(removal).toMatchObject({
      status: 401,
      text: "Unauthorized: user lacks the permission to delete application.",
    });
    expect(await fleetRow(fleet.id)).toBeDefined();

    const device = await t.factories.device(fleet);
    const safe = await t.factories.user();
    await t.factories.fleetMember(safe.user, fleet, "safe-operator");
    const deletion = await v7(safe.token, "DELETE", `device(${device.id})`);
    expect(deletion).toMatchObject({ status: 401, text: "Unauthorized: user lacks the permission to delete device." });
    const { rows } = await t.db.query("SELECT id FROM device WHERE id = $1", [device.id]);
    expect(rows).toHaveLength(1);

    // The public OS catalogue's fleets are readable by all, changeable by none of them.
    const { rows: catalogue } = await t.db.query<{ id: number }>(
      "SELECT a.id FROM application a JOIN organization o ON o.id = a.organization WHERE o.handle = 'balena_os' LIMIT 1",
    );
    const osFleet = Number(catalogue[0]?.id);
    const pin = await v7(developer.token, "PATCH", `application(${osFleet})`, { should_track_latest_release: false });
    expect(pin).toMatchObject({ status: 401, text: "Unauthorized: user lacks the permission to update application." });

    // A row the caller cannot read is not told apart from a missing one.
    const hidden = await t.factories.fleet(elsewhere, { name: "not-yours" });
    expect(await v7(developer.token, "DELETE", `application(${hidden.id})`)).toMatchObject({ status: 200 });
    expect(await fleetRow(hidden.id)).toBeDefined();
  });

  it("refuses to move to or from a frozen organization", async () => {
    const fleet = await t.factories.fleet(acme, { name: "cold-fleet" });
    await t.db.query("UPDATE organization SET is_frozen = true WHERE id = $1", [globex.id]);
    try {
      const response = await v7(owner.token, "PATCH", `application(${fleet.id})`, { organization: globex.id });
      expect(response).toMatchObject({ status: 403, code: "organization_frozen" });
    } finally {
      await t.db.query("UPDATE organization SET is_frozen = false WHERE id = $1", [globex.id]);
    }
  });
});

describe("free plan device allowance (spec 2 §5, spec-decisions 13)", () => {
  it("exposes the allowance and the total, and refuses the 11th device", async () => {
    const org = await t.factories.organization({ name: "Tiny", admins: [owner.user] });
    const fleet = await t.factories.fleet(org, { name: "tiny-fleet" });
    for (let i = 0; i < 9; i++) await t.factories.device(fleet);
    const deviceType = await typeId("device_type", "raspberrypi4-64");
    const add = () =>
      v7(owner.token, "POST", "device", {
        belongs_to__application: fleet.id,
        is_of__device_type: deviceType,
        device_name: "added-device",
      });
    expect((await add()).status).toBe(201);
    expect(await add()).toMatchObject({
      status: 402,
      code: "free_plan_allowance_reached",
      text: "free plan allowance reached",
    });
    await t.factories.device(fleet);
    expect(await add()).toMatchObject({ status: 402, text: "provisioned more devices than free allowance" });
    const read = await v7(
      owner.token,
      "GET",
      `organization(${org.id})?$select=total_device_count,free_plan_device_allowance,has_frozen_free_devices`,
    );
    expect(JSON.parse(read.text).d[0]).toEqual({
      total_device_count: 11,
      free_plan_device_allowance: 10,
      has_frozen_free_devices: true,
    });
    // A paid plan has no allowance.
    await t.db.query(
      `INSERT INTO "subscription" (is_for__organization, is_for__plan) SELECT $1, id FROM "plan" WHERE billing_code <> 'free' LIMIT 1`,
      [org.id],
    );
    const paid = await v7(
      owner.token,
      "GET",
      `organization(${org.id})?$select=free_plan_device_allowance,has_frozen_free_devices`,
    );
    expect(JSON.parse(paid.text).d[0]).toEqual({ free_plan_device_allowance: null, has_frozen_free_devices: false });
    expect((await add()).status).toBe(201);
  });

  it("freezes the devices beyond the first 10 by id on a free plan, and thaws them", async () => {
    const org = await t.factories.organization({ name: "Chilly", admins: [owner.user] });
    const fleet = await t.factories.fleet(org, { name: "chilly-fleet" });
    const other = await t.factories.fleet(org, { name: "chilly-app", className: "app" });
    const devices = [];
    for (let i = 0; i < 11; i++) devices.push(await t.factories.device(i % 2 ? other : fleet));
    devices.push(await t.factories.device(fleet));
    const frozen = async () => {
      const read = await v7(
        owner.token,
        "GET",
        `device?$select=id,is_frozen&$filter=belongs_to__application/organization eq ${org.id}&$orderby=id asc`,
      );
      return (JSON.parse(read.text).d as { id: number; is_frozen: boolean }[]).map((d) => d.is_frozen);
    };
    expect(await frozen()).toEqual([...Array(10).fill(false), true, true]);
    const filtered = await v7(
      owner.token,
      "GET",
      `device?$select=id&$filter=is_frozen eq true and belongs_to__application/organization eq ${org.id}`,
    );
    expect(JSON.parse(filtered.text).d).toHaveLength(2);
    await t.db.query("DELETE FROM device WHERE id = $1", [devices[0]?.id]);
    expect(await frozen()).toEqual([...Array(10).fill(false), true]);
    await t.db.query(
      `INSERT INTO "subscription" (is_for__organization, is_for__plan) SELECT $1, id FROM "plan" WHERE billing_code <> 'free' LIMIT 1`,
      [org.id],
    );
    expect(await frozen()).toEqual(Array(11).fill(false));
  });
});

describe("demo (issue #6)", () => {
  it("organization Demo owns fleet demo-fleet and a block, for raspberrypi4-64", async () => {
    const config = loadConfig({
      FLOTILLA_DATA_DIR: t.config.dataDir,
      FLOTILLA_DEMO: "1",
      FLOTILLA_DEMO_PASSWORD: "demo-password-1",
    });
    await seedDemo(t.db, config, pino({ level: "silent" }), true);
    const demo = getSdk({ apiUrl: t.url, dataDirectory: false });
    await demo.auth.login({ email: "demo@example.com", password: "demo-password-1" });
    // Directly accessible: every user also reads the public OS catalogue's fleets (migration 0013).
    const owned = await demo.models.application.getAllDirectlyAccessible({
      $select: ["app_name", "slug", "is_of__class"],
      $expand: { is_for__device_type: { $select: "slug" } },
      $orderby: { app_name: "asc" },
    });
    expect(owned).toMatchObject([
      { app_name: "demo-block", slug: "demo/demo-block", is_of__class: "block" },
      { app_name: "demo-fleet", slug: "demo/demo-fleet", is_of__class: "fleet" },
    ]);
    expect(owned.map((a) => (a.is_for__device_type as unknown as { slug: string }[])[0]?.slug)).toEqual([
      "raspberrypi4-64",
      "raspberrypi4-64",
    ]);
    // Two releases built by the builder (issue #9); the fleet tracks the latest, of three services.
    const releases = await demo.models.release.getAllByApplication("demo/demo-fleet", {
      $select: ["id", "raw_version", "status", "is_final", "build_log"],
      $expand: { release_image: { $select: "id" } },
    });
    expect(releases.map((r) => [r.raw_version, r.status, r.is_final, r.release_image?.length])).toEqual([
      ["1.1.0", "success", true, 3],
      ["1.0.0", "success", true, 2],
    ]);
    expect(releases[1]?.build_log).toContain("[worker] Using prebuilt image alpine:3.20");
    const fleet = await demo.models.application.get("demo/demo-fleet", {
      $select: ["should_track_latest_release", "should_be_running__release"],
    });
    expect(fleet).toMatchObject({
      should_track_latest_release: true,
      should_be_running__release: { __id: releases[0]?.id },
    });
  });
});

describe("device type catalogue (spec 2 §4, §8)", () => {
  it("carries the available OS versions, multicontainer support and a discontinued type", async () => {
    const contract = async (slug: string) =>
      (
        await t.db.query<{ contract: Record<string, unknown> }>(`SELECT contract FROM device_type WHERE slug = $1`, [
          slug,
        ])
      ).rows[0]?.contract as { state?: string; data: Record<string, unknown> } | undefined;
    expect((await contract("raspberrypi4-64"))?.data.osVersions).toEqual({ oldest: "2.83.10", newest: "6.2.4" });
    expect((await contract("raspberry-pi"))?.data.supportsMulticontainer).toBe(false);
    const artik = await contract("artik10");
    expect(artik?.state).toBe("DISCONTINUED");
    expect(isDiscontinuedDeviceType(artik)).toBe(true);
  });
});

describe("fleet members", () => {
  it("are listed by username across pages, as the dashboard asks (ORG-074)", async () => {
    const people = [];
    for (const name of ["zed", "amy", "mia"])
      people.push((await t.factories.user({ username: `${name}-ordered` })).user);
    const org = await t.factories.organization({ name: "Ordered", admins: [owner.user], members: people });
    const fleet = await t.factories.fleet(org, { name: "ordered" });
    for (const person of people) await t.factories.fleetMember(person, fleet, "observer");
    const page = async (skip: number) => {
      const response = await fetch(
        `${t.url}/v7/user_application_membership?$filter=is_member_of__application eq ${fleet.id}&$expand=user($select=username)&$orderby=user/username asc,id asc&$top=2&$skip=${skip}`,
        { headers: { authorization: `Bearer ${owner.token}` } },
      );
      expect(response.status).toBe(200);
      const body = (await response.json()) as { d: { user: { username: string }[] }[] };
      return body.d.map((row) => row.user[0]?.username.split("-")[0]);
    };
    expect([...(await page(0)), ...(await page(2))]).toEqual(["amy", "mia", "zed"]);
  });
});
