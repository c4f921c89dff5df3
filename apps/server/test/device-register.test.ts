import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../src/features/api-keys/service.ts";
import { createTestApp, type TestApp } from "./harness.ts";

/** Device registration (balena API contract, issue 7): POST /device/register with a provisioning key. */
let t: TestApp;
let ownerToken: string;
let fleet: { id: number; is_for__device_type: number };
let provisioningKey: string;

const uuid = () => crypto.randomBytes(16).toString("hex");

async function provisioningKeyFor(fleetId: number) {
  const response = await fetch(`${t.url}/api-key/v2/`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ownerToken}` },
    body: JSON.stringify({ actorType: "application", actorTypeId: fleetId, roles: ["provisioning-api-key"] }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as string;
}

async function register(key: string, body: Record<string, unknown>) {
  const response = await fetch(`${t.url}/device/register`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, code: response.headers.get("x-flotilla-error-code"), text };
}

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user();
  ownerToken = owner.token;
  const org = await t.factories.organization({ name: "Regs", admins: [owner.user] });
  fleet = await t.factories.fleet(org, { name: "reg-fleet", deviceType: "raspberrypi3" });
  provisioningKey = await provisioningKeyFor(fleet.id);
});
afterAll(() => t.close());

describe("POST /device/register", () => {
  it("registers a device with the key it chose as its device key", async () => {
    const id = uuid();
    const apiKey = crypto.randomBytes(16).toString("hex");
    const answer = await register(provisioningKey, {
      application: fleet.id,
      uuid: id,
      device_type: "raspberrypi3",
      api_key: apiKey,
      supervisor_version: "16.1.0",
      os_version: "balenaOS 6.0.13",
      os_variant: "prod",
      mac_address: "aa:bb:cc:dd:ee:ff",
    });
    expect(answer.status).toBe(201);
    const body = JSON.parse(answer.text);
    expect(body).toEqual({ id: expect.any(Number), uuid: id, api_key: apiKey });
    const { rows } = await t.db.query<Record<string, unknown>>(
      "SELECT uuid, belongs_to__application, os_version, supervisor_version FROM device WHERE id = $1",
      [body.id],
    );
    expect(rows[0]).toMatchObject({ uuid: id, belongs_to__application: fleet.id, os_version: "balenaOS 6.0.13" });
    const keys = await t.db.query<{ role: string }>(
      `SELECT k.role FROM api_key k JOIN device d ON d.actor = k.is_of__actor WHERE d.id = $1`,
      [body.id],
    );
    expect(keys.rows).toEqual([{ role: "device-api-key" }]);
    // The same uuid again: 409, then the key exchange.
    const again = await register(provisioningKey, { application: fleet.id, uuid: id, device_type: "raspberrypi3" });
    expect(again).toMatchObject({ status: 409, text: expect.stringContaining('"uuid" must be unique.') });
  });

  it("refuses bad keys, other fleets, and wrong or discontinued device types", async () => {
    const base = { application: fleet.id, device_type: "raspberrypi3" };
    expect((await register("not-a-key", { ...base, uuid: uuid() })).status).toBe(401);
    expect((await register(ownerToken, { ...base, uuid: uuid() })).status).toBe(401);
    const other = await t.factories.fleet({ id: (await t.factories.organization({ name: "Other" })).id } as never, {
      name: "other-fleet",
    });
    expect((await register(provisioningKey, { ...base, application: other.id, uuid: uuid() })).status).toBe(401);
    expect(await register(provisioningKey, { ...base, uuid: uuid(), device_type: "nope" })).toMatchObject({
      status: 400,
      code: "invalid_device_type",
      text: expect.stringContaining("Invalid device type: nope"),
    });
    expect(await register(provisioningKey, { ...base, uuid: uuid(), device_type: "artik10" })).toMatchObject({
      status: 400,
      code: "discontinued_device_type",
      text: expect.stringContaining("Discontinued device type: artik10"),
    });
    expect(await register(provisioningKey, { ...base, uuid: uuid(), device_type: "intel-nuc" })).toMatchObject({
      status: 400,
      code: "no_compatible_architecture",
    });
    expect((await register(provisioningKey, { ...base, uuid: "short" })).status).toBe(400);
    expect((await register(provisioningKey, { uuid: uuid() })).status).toBe(400);
  });
});

describe("registration edge cases", () => {
  const base = () => ({ application: fleet.id, device_type: "raspberrypi3", uuid: uuid() });

  it("refuses an expired or revoked provisioning key", async () => {
    const expiring = await provisioningKeyFor(fleet.id);
    expect((await register(expiring, base())).status).toBe(201);
    await t.db.query(`UPDATE api_key SET expiry_date = now() - interval '1 minute' WHERE key_hash = $1`, [
      hashApiKey(expiring),
    ]);
    expect((await register(expiring, base())).status).toBe(401);
    const revoked = await provisioningKeyFor(fleet.id);
    await t.db.query("DELETE FROM api_key WHERE key_hash = $1", [hashApiKey(revoked)]);
    expect((await register(revoked, base())).status).toBe(401);
  });

  it("lets a device whose uuid is taken look itself up and exchange its key", async () => {
    const body = base();
    const first = await register(provisioningKey, { ...body, api_key: crypto.randomBytes(16).toString("hex") });
    expect(first.status).toBe(201);
    const { id } = JSON.parse(first.text) as { id: number };
    const lostKey = crypto.randomBytes(16).toString("hex");
    const again = await register(provisioningKey, { ...body, api_key: lostKey });
    expect(again).toMatchObject({ status: 409, text: '"uuid" must be unique.' });

    const lookUp = async (token: string) => {
      const filter = encodeURIComponent(`uuid eq '${body.uuid}'`);
      const response = await fetch(`${t.url}/v7/device?$select=id&$filter=${filter}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (response.status !== 200) return response.status;
      return ((await response.json()) as { d: { id: number }[] }).d;
    };
    // The device's key is unknown to the API; the provisioning key finds the fleet's device.
    expect(await lookUp(lostKey)).toBe(401);
    expect(await lookUp(provisioningKey)).toEqual([{ id }]);

    const exchange = async (token: string, apiKey: string) =>
      fetch(`${t.url}/api-key/device/${id}/device-key`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ apiKey }),
      });
    const exchanged = await exchange(provisioningKey, lostKey);
    expect(exchanged.status).toBe(200);
    expect(await exchanged.json()).toBe(lostKey);
    // Repeated (its first answer lost): the same answer, not an error.
    expect((await exchange(provisioningKey, lostKey)).status).toBe(200);
    // The device now reads its own row and its target state with that key.
    expect(await lookUp(lostKey)).toEqual([{ id }]);
    const state = await fetch(`${t.url}/device/v3/${body.uuid}/state`, {
      headers: { authorization: `Bearer ${lostKey}` },
    });
    expect(state.status).toBe(200);
    // A key someone else holds is a conflict; another fleet's provisioning key is refused.
    expect((await exchange(provisioningKey, provisioningKey)).status).toBe(409);
    const owner = await t.factories.user();
    const otherOrg = await t.factories.organization({ name: "Elsewhere", admins: [owner.user] });
    const otherFleet = await t.factories.fleet(otherOrg, { name: "elsewhere-fleet" });
    ownerToken = owner.token;
    const foreignKey = await provisioningKeyFor(otherFleet.id);
    expect((await exchange(foreignKey, crypto.randomBytes(16).toString("hex"))).status).toBe(401);
    expect(await lookUp(foreignKey)).toEqual([]);
  });
});
