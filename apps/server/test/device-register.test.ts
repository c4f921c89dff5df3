import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
