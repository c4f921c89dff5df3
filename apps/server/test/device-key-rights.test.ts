import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * What a device key may do under /v7 (data-api/permissions.ts `deviceKeyPermissions`,
 * docs/device-protocol.md "balenaOS devices"): what balena's Supervisor needs, scoped to the
 * device and its fleet. Every right is checked with its refusal for another device of the same
 * fleet (`sibling`), a device of another fleet of the same organization (`neighbour`) and a
 * device of another organization (`stranger`).
 */
let t: TestApp;
let ownerToken: string;
type Fleet = Awaited<ReturnType<TestApp["factories"]["fleet"]>>;
type Setup = { fleet: Fleet; release: number; service: number; image: number };
let home: Setup;
let nextDoor: Setup;
let abroad: Setup;
let device: TestDevice;
let sibling: TestDevice;
let neighbour: TestDevice;
let stranger: TestDevice;
let organizationA: number;
let organizationB: number;
const installs = new Map<number, number>();

type Rows = { d: Record<string, unknown>[] };
const rows = (answer: { json: unknown }) => (answer.json as Rows).d;
const ids = (answer: { json: unknown }) => rows(answer).map((row) => Number(row.id));
/** The public OS catalogue is anyone's to read: only the test's own rows count. */
const among = (answer: { json: unknown }, known: number[]) => ids(answer).filter((id) => known.includes(id));

async function fleetWithRelease(org: { id: number; handle: string }, name: string): Promise<Setup> {
  const fleet = await t.factories.fleet(org, { name });
  const release = await t.factories.release(fleet);
  const service = Number(
    (
      await t.db.query<{ id: number }>(
        `INSERT INTO "service" (application, service_name) VALUES ($1, 'main') RETURNING id`,
        [fleet.id],
      )
    ).rows[0]?.id,
  );
  const image = Number(
    (
      await t.db.query<{ id: number }>(
        `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, $2, 'success') RETURNING id`,
        [service, `registry.local/${name}:1`],
      )
    ).rows[0]?.id,
  );
  await t.db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [image, release.id]);
  return { fleet, release: release.id, service, image };
}

async function install(d: TestDevice, setup: Setup) {
  const { rows: made } = await t.db.query<{ id: number }>(
    `INSERT INTO "service_install" (device, installs__service) VALUES ($1, $2) RETURNING id`,
    [d.id, setup.service],
  );
  installs.set(d.id, Number(made[0]?.id));
  await t.db.query(
    `INSERT INTO "image_install" (device, installs__image, is_provided_by__release, status) VALUES ($1, $2, $3, 'Running')`,
    [d.id, setup.image, setup.release],
  );
}

async function seedVariables(d: TestDevice, label: string) {
  await t.db.query(`INSERT INTO "device_config_variable" (device, name, value) VALUES ($1, 'RESIN_SUPERVISOR_X', $2)`, [
    d.id,
    label,
  ]);
  await t.db.query(`INSERT INTO "device_environment_variable" (device, name, value) VALUES ($1, 'MODE', $2)`, [
    d.id,
    label,
  ]);
  await t.db.query(`INSERT INTO "device_tag" (device, tag_key, value) VALUES ($1, 'room', $2)`, [d.id, label]);
  await t.db.query(
    `INSERT INTO "device_service_environment_variable" (service_install, name, value) VALUES ($1, 'LEVEL', $2)`,
    [installs.get(d.id), label],
  );
}

const storedValues = async (table: string, where: string, params: unknown[]) =>
  (await t.db.query<{ value: string }>(`SELECT value FROM "${table}" WHERE ${where}`, params)).rows.map((r) => r.value);

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user();
  ownerToken = owner.token;
  const strangerOwner = await t.factories.user();
  const orgA = await t.factories.organization({ name: "Device Rights A", admins: [owner.user] });
  const orgB = await t.factories.organization({ name: "Device Rights B", admins: [strangerOwner.user] });
  organizationA = orgA.id;
  organizationB = orgB.id;
  home = await fleetWithRelease(orgA, "home");
  nextDoor = await fleetWithRelease(orgA, "next-door");
  abroad = await fleetWithRelease(orgB, "abroad");
  const homeKey = await provisioningKeyFor(t, ownerToken, home.fleet.id);
  device = await registerDevice(t, homeKey, home.fleet);
  sibling = await registerDevice(t, homeKey, home.fleet);
  neighbour = await registerDevice(t, await provisioningKeyFor(t, ownerToken, nextDoor.fleet.id), nextDoor.fleet);
  stranger = await registerDevice(t, await provisioningKeyFor(t, strangerOwner.token, abroad.fleet.id), abroad.fleet);
  await install(device, home);
  await install(sibling, home);
  await install(neighbour, nextDoor);
  await install(stranger, abroad);
  for (const [d, label] of [
    [device, "mine"],
    [sibling, "sibling"],
    [neighbour, "neighbour"],
    [stranger, "stranger"],
  ] as const) {
    await seedVariables(d, label);
  }
});
afterAll(() => t.close());

const others = () =>
  [
    ["another device of its fleet", () => sibling],
    ["a device of another fleet", () => neighbour],
    ["a device of another organization", () => stranger],
  ] as const;

describe("device config variables", () => {
  it("creates its own, as the Supervisor does on first boot (balena-sdk's pine client)", async () => {
    // What balena's Supervisor sends (src/api-binder/index.ts reportInitialEnv), through the SDK's pine.
    const sdk: BalenaSDK = getSdk({ apiUrl: t.url, dataDirectory: false });
    await sdk.auth.logout();
    const created = (await sdk.pine.post({
      resource: "device_config_variable",
      body: { device: device.id, name: "RESIN_HOST_FIREWALL_MODE", value: "" },
      passthrough: { headers: { Authorization: `Bearer ${device.key}` } },
    })) as { id: number; value: string };
    expect(created).toMatchObject({ value: "" });
    expect(
      await storedValues("device_config_variable", "device = $1 AND name = 'RESIN_HOST_FIREWALL_MODE'", [device.id]),
    ).toEqual([""]);
    // The target state carries it.
    const state = await call(t, "GET", `/device/v3/${device.uuid}/state`, device.key);
    expect((state.json[device.uuid] as { config: Record<string, string> }).config.RESIN_HOST_FIREWALL_MODE).toBe("");
  });

  it("reads and updates its own, and nobody else's", async () => {
    const read = await call(t, "GET", "/v7/device_config_variable?$select=id,device,value", device.key);
    expect(read.status).toBe(200);
    expect(new Set(rows(read).map((row) => (row.device as { __id: number }).__id))).toEqual(new Set([device.id]));
    const patched = await call(
      t,
      "PATCH",
      `/v7/device_config_variable?$filter=device eq ${device.id} and name eq 'RESIN_SUPERVISOR_X'`,
      device.key,
      { value: "changed" },
    );
    expect(patched.status).toBe(200);
    expect(
      await storedValues("device_config_variable", "device = $1 AND name = 'RESIN_SUPERVISOR_X'", [device.id]),
    ).toEqual(["changed"]);
  });

  for (const [who, pick] of others()) {
    it(`refuses ${who}'s: create, update, read`, async () => {
      const victim = pick();
      const created = await call(t, "POST", "/v7/device_config_variable", device.key, {
        device: victim.id,
        name: "RESIN_HOST_FIREWALL_MODE",
        value: "off",
      });
      expect(created.status).toBeGreaterThanOrEqual(400);
      expect(created.status).toBeLessThan(500);
      await call(
        t,
        "PATCH",
        `/v7/device_config_variable?$filter=device eq ${victim.id} and name eq 'RESIN_SUPERVISOR_X'`,
        device.key,
        { value: "hijacked" },
      );
      expect(
        await storedValues("device_config_variable", "device = $1 AND name LIKE 'RESIN_%'", [victim.id]),
      ).not.toContain("hijacked");
      expect(
        await storedValues("device_config_variable", "device = $1 AND name = 'RESIN_HOST_FIREWALL_MODE'", [victim.id]),
      ).toEqual([]);
      const read = await call(t, "GET", `/v7/device_config_variable?$filter=device eq ${victim.id}`, device.key);
      expect(rows(read)).toEqual([]);
    });
  }
});

describe("device environment variables", () => {
  it("creates, reads, updates and deletes its own", async () => {
    const created = await call(t, "POST", "/v7/device_environment_variable", device.key, {
      device: device.id,
      name: "NEW_ONE",
      value: "1",
    });
    expect(created.status).toBe(201);
    const read = await call(t, "GET", "/v7/device_environment_variable?$select=id,device,name", device.key);
    expect(new Set(rows(read).map((row) => (row.device as { __id: number }).__id))).toEqual(new Set([device.id]));
    const id = Number(created.json.id);
    expect((await call(t, "PATCH", `/v7/device_environment_variable(${id})`, device.key, { value: "2" })).status).toBe(
      200,
    );
    expect(await storedValues("device_environment_variable", "id = $1", [id])).toEqual(["2"]);
    expect((await call(t, "DELETE", `/v7/device_environment_variable(${id})`, device.key)).status).toBe(200);
    expect(await storedValues("device_environment_variable", "id = $1", [id])).toEqual([]);
  });

  for (const [who, pick] of others()) {
    it(`refuses ${who}'s: create, update, delete, read`, async () => {
      const victim = pick();
      const created = await call(t, "POST", "/v7/device_environment_variable", device.key, {
        device: victim.id,
        name: "INTRUDER",
        value: "1",
      });
      expect(created.status).toBeGreaterThanOrEqual(400);
      expect(created.status).toBeLessThan(500);
      const [row] = (
        await t.db.query<{ id: number }>(
          `SELECT id FROM "device_environment_variable" WHERE device = $1 AND name = 'MODE'`,
          [victim.id],
        )
      ).rows;
      await call(t, "PATCH", `/v7/device_environment_variable(${row?.id})`, device.key, { value: "hijacked" });
      await call(t, "DELETE", `/v7/device_environment_variable(${row?.id})`, device.key);
      expect(await storedValues("device_environment_variable", "device = $1", [victim.id])).toEqual([
        expect.not.stringMatching(/hijacked/),
      ]);
      expect(rows(await call(t, "GET", `/v7/device_environment_variable(${row?.id})`, device.key))).toEqual([]);
    });
  }
});

describe("device service environment variables", () => {
  it("creates, reads and updates its own on a service install of its own", async () => {
    const created = await call(t, "POST", "/v7/device_service_environment_variable", device.key, {
      service_install: installs.get(device.id),
      name: "ANSWER",
      value: "42",
    });
    expect(created.status).toBe(201);
    const read = await call(t, "GET", "/v7/device_service_environment_variable?$select=id,service_install", device.key);
    expect(new Set(rows(read).map((row) => (row.service_install as { __id: number }).__id))).toEqual(
      new Set([installs.get(device.id)]),
    );
    const id = Number(created.json.id);
    expect(
      (await call(t, "PATCH", `/v7/device_service_environment_variable(${id})`, device.key, { value: "43" })).status,
    ).toBe(200);
    expect(await storedValues("device_service_environment_variable", "id = $1", [id])).toEqual(["43"]);
  });

  for (const [who, pick] of others()) {
    it(`refuses ${who}'s`, async () => {
      const victim = pick();
      const created = await call(t, "POST", "/v7/device_service_environment_variable", device.key, {
        service_install: installs.get(victim.id),
        name: "INTRUDER",
        value: "1",
      });
      expect(created.status).toBeGreaterThanOrEqual(400);
      expect(created.status).toBeLessThan(500);
      await call(
        t,
        "PATCH",
        `/v7/device_service_environment_variable?$filter=service_install eq ${installs.get(victim.id)}`,
        device.key,
        { value: "hijacked" },
      );
      expect(
        await storedValues("device_service_environment_variable", "service_install = $1", [installs.get(victim.id)]),
      ).toEqual([expect.not.stringMatching(/hijacked/)]);
    });
  }
});

describe("device tags", () => {
  it("reads its own tags as the Supervisor asks for them, and no one else's", async () => {
    const mine = await call(
      t,
      "GET",
      `/v7/device_tag?$select=id,tag_key,value&$filter=device eq ${device.id}`,
      device.key,
    );
    expect(rows(mine)).toEqual([{ id: expect.any(Number), tag_key: "room", value: "mine" }]);
    const all = await call(t, "GET", "/v7/device_tag?$select=value", device.key);
    expect(rows(all).map((row) => row.value)).toEqual(["mine"]);
    for (const [, pick] of others()) {
      expect(rows(await call(t, "GET", `/v7/device_tag?$filter=device eq ${pick().id}`, device.key))).toEqual([]);
      await call(t, "PATCH", `/v7/device_tag?$filter=device eq ${pick().id}`, device.key, { value: "hijacked" });
      const created = await call(t, "POST", "/v7/device_tag", device.key, {
        device: pick().id,
        tag_key: "intruder",
        value: "x",
      });
      expect(created.status).toBeGreaterThanOrEqual(400);
      expect(await storedValues("device_tag", "device = $1", [pick().id])).toEqual([
        expect.not.stringMatching(/hijacked/),
      ]);
    }
  });
});

describe("its own device row", () => {
  it("takes the initial name and a preload pin on a release of its fleet", async () => {
    expect((await call(t, "PATCH", `/v7/device(${device.id})`, device.key, { device_name: "first-boot" })).status).toBe(
      200,
    );
    expect(
      (await call(t, "PATCH", `/v7/device(${device.id})`, device.key, { is_pinned_on__release: home.release })).status,
    ).toBe(200);
    const { rows: stored } = await t.db.query<{ device_name: string; is_pinned_on__release: number }>(
      `SELECT device_name, is_pinned_on__release FROM "device" WHERE id = $1`,
      [device.id],
    );
    expect(stored[0]).toEqual({ device_name: "first-boot", is_pinned_on__release: home.release });
  });

  it("refuses a pin on another fleet's or organization's release", async () => {
    for (const release of [nextDoor.release, abroad.release]) {
      const answer = await call(t, "PATCH", `/v7/device(${device.id})`, device.key, { is_pinned_on__release: release });
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
    }
    const { rows: stored } = await t.db.query(`SELECT is_pinned_on__release FROM "device" WHERE id = $1`, [device.id]);
    expect(stored[0]).toEqual({ is_pinned_on__release: home.release });
  });

  it("refuses the fields that are its users' to write (its fleet, support access, activation…)", async () => {
    // Another fleet is not even readable: the reference check answers it as missing.
    const moved = await call(t, "PATCH", `/v7/device(${device.id})`, device.key, {
      belongs_to__application: nextDoor.fleet.id,
    });
    expect(moved.status).toBe(400);
    for (const body of [
      { belongs_to__application: home.fleet.id },
      { is_accessible_by_support_until__date: new Date(Date.now() + 86_400_000).toISOString() },
      { is_active: false },
      { note: "mine now" },
      { device_name: "ok", custom_latitude: "1" },
    ]) {
      const answer = await call(t, "PATCH", `/v7/device(${device.id})`, device.key, body);
      expect(answer.status, JSON.stringify(body)).toBe(401);
    }
    const { rows: stored } = await t.db.query(
      `SELECT belongs_to__application, note, is_active, device_name FROM "device" WHERE id = $1`,
      [device.id],
    );
    expect(stored[0]).toEqual({
      belongs_to__application: home.fleet.id,
      note: null,
      is_active: true,
      device_name: "first-boot",
    });
  });

  for (const [who, pick] of others()) {
    it(`neither reads nor renames ${who}`, async () => {
      const victim = pick();
      expect(rows(await call(t, "GET", `/v7/device(${victim.id})`, device.key))).toEqual([]);
      await call(t, "PATCH", `/v7/device(${victim.id})`, device.key, { device_name: "hijacked" });
      await call(t, "PATCH", `/v7/device?$filter=uuid eq '${victim.uuid}'`, device.key, { device_name: "hijacked" });
      const { rows: stored } = await t.db.query(`SELECT device_name FROM "device" WHERE id = $1`, [victim.id]);
      expect(stored[0]).not.toEqual({ device_name: "hijacked" });
      expect((await call(t, "DELETE", `/v7/device(${victim.id})`, device.key)).status).toBeGreaterThanOrEqual(200);
      expect((await t.db.query(`SELECT 1 FROM "device" WHERE id = $1`, [victim.id])).rows).toHaveLength(1);
    });
  }

  it("cannot delete itself", async () => {
    const answer = await call(t, "DELETE", `/v7/device(${device.id})`, device.key);
    expect(answer.status).toBe(401);
    expect((await t.db.query(`SELECT 1 FROM "device" WHERE id = $1`, [device.id])).rows).toHaveLength(1);
  });
});

describe("its fleet", () => {
  it("reads its fleet and nothing of another fleet or organization", async () => {
    const fleets = [home.fleet.id, nextDoor.fleet.id, abroad.fleet.id];
    expect(among(await call(t, "GET", "/v7/application?$select=id", device.key), fleets)).toEqual([home.fleet.id]);
    expect(rows(await call(t, "GET", `/v7/application(${nextDoor.fleet.id})`, device.key))).toEqual([]);
    expect(rows(await call(t, "GET", `/v7/application(${abroad.fleet.id})`, device.key))).toEqual([]);
    // Organizations are nothing a device key reads.
    for (const path of [
      "/v7/organization",
      `/v7/organization(${organizationA})`,
      `/v7/organization(${organizationB})`,
    ]) {
      expect((await call(t, "GET", path, device.key)).status).toBe(401);
    }
    // Its fleet's devices are not its to see.
    expect(ids(await call(t, "GET", "/v7/device?$select=id", device.key))).toEqual([device.id]);
    expect((await call(t, "PATCH", `/v7/application(${home.fleet.id})`, device.key, { app_name: "mine" })).status).toBe(
      401,
    );
  });

  it("reads its fleet's releases, images, release images and services as the Supervisor asks", async () => {
    // src/lib/legacy.ts: the release by commit with its images.
    const [commitRow] = (
      await t.db.query<{ commit: string }>(`SELECT commit FROM "release" WHERE id = $1`, [home.release])
    ).rows;
    const release = await call(
      t,
      "GET",
      `/v7/release?$filter=belongs_to__application eq ${home.fleet.id} and commit eq '${commitRow?.commit}' and status eq 'success'&$select=id&$expand=contains__image($select=id;$expand=image($select=id,is_a_build_of__service,is_stored_at__image_location,content_hash)),belongs_to__application($select=uuid)`,
      device.key,
    );
    expect(release.status).toBe(200);
    expect(rows(release)).toEqual([
      {
        id: home.release,
        contains__image: [
          {
            id: expect.any(Number),
            image: [expect.objectContaining({ id: home.image, is_stored_at__image_location: "registry.local/home:1" })],
          },
        ],
        belongs_to__application: [{ uuid: home.fleet.uuid }],
      },
    ]);
    const all = [home, nextDoor, abroad];
    expect(
      among(
        await call(t, "GET", "/v7/release?$select=id", device.key),
        all.map((s) => s.release),
      ),
    ).toEqual([home.release]);
    expect(ids(await call(t, "GET", "/v7/image?$select=id", device.key))).toEqual([home.image]);
    expect(ids(await call(t, "GET", "/v7/service?$select=id", device.key))).toEqual([home.service]);
    expect(rows(await call(t, "GET", "/v7/release_image?$select=id", device.key))).toHaveLength(1);
    for (const other of [nextDoor, abroad]) {
      expect(rows(await call(t, "GET", `/v7/release(${other.release})`, device.key))).toEqual([]);
      expect(rows(await call(t, "GET", `/v7/image(${other.image})`, device.key))).toEqual([]);
    }
  });

  it("reads its own service and image installs only", async () => {
    const services = await call(t, "GET", "/v7/service_install?$select=id,device", device.key);
    expect(ids(services)).toEqual([installs.get(device.id)]);
    const images = await call(t, "GET", "/v7/image_install?$select=id,device", device.key);
    expect(rows(images).map((row) => (row.device as { __id: number }).__id)).toEqual([device.id]);
    expect(
      (await call(t, "POST", "/v7/service_install", device.key, { device: device.id, installs__service: home.service }))
        .status,
    ).toBe(401);
  });

  it("keeps provisioning keys and users' keys as they were", async () => {
    const provisioning = await provisioningKeyFor(t, ownerToken, home.fleet.id);
    expect(ids(await call(t, "GET", "/v7/application?$select=id", provisioning))).toEqual([home.fleet.id]);
    expect((await call(t, "GET", "/v7/device_config_variable", provisioning)).status).toBe(401);
  });
});
