import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call } from "./support/devices.ts";

/**
 * `POST /v7/$batch` (odata/batch.ts): JSON batch requests, each under the caller's permissions
 * and hooks as if sent alone; an atomicity group in one transaction, refused as a whole.
 */
let t: TestApp;
let owner: { token: string };
/** An observer of fleet A (reads its devices, may not tag them) and a safe operator of fleet C. */
let mixed: { token: string };
let a: { id: number }[];
let c: { id: number };
let other: { id: number };

const batch = (token: string, requests: unknown[]) => call(t, "POST", "/v7/$batch", token, { requests });
const tag = (id: string, device: number, extra: Record<string, unknown> = {}) => ({
  id,
  method: "POST",
  url: "/v7/device_tag",
  body: { device, tag_key: "rack", value: `r-${id}` },
  ...extra,
});
const tagsOf = async (devices: number[]) =>
  (
    await t.db.query<{ device: number; value: string }>(
      `SELECT device, value FROM device_tag WHERE tag_key = 'rack' AND device = ANY($1::int[]) ORDER BY device`,
      [devices],
    )
  ).rows;

beforeAll(async () => {
  t = await createTestApp();
  const ownerUser = await t.factories.user();
  const mixedUser = await t.factories.user();
  owner = ownerUser;
  mixed = mixedUser;
  const org = await t.factories.organization({ name: "Batch", admins: [ownerUser.user] });
  const fleetA = await t.factories.fleet(org, { name: "batch-a" });
  const fleetC = await t.factories.fleet(org, { name: "batch-c" });
  a = [await t.factories.device(fleetA), await t.factories.device(fleetA), await t.factories.device(fleetA)];
  c = await t.factories.device(fleetC);
  await t.factories.fleetMember(mixedUser.user, fleetA, "observer");
  await t.factories.fleetMember(mixedUser.user, fleetC, "safe-operator");
  const stranger = await t.factories.user();
  const otherOrg = await t.factories.organization({ name: "Elsewhere", admins: [stranger.user] });
  other = await t.factories.device(await t.factories.fleet(otherOrg, { name: "elsewhere" }));
});
afterAll(() => t.close());

describe("POST /v7/$batch", () => {
  it("writes an atomicity group of POSTs in one go and answers each as its POST would", async () => {
    const [a1, a2] = a as [{ id: number }, { id: number }];
    const response = await batch(owner.token, [
      tag("1", a1.id, { atomicityGroup: "page" }),
      tag("2", a2.id, { atomicityGroup: "page" }),
      { id: "3", method: "GET", url: `device_tag?$select=device,value&$filter=tag_key eq 'rack'&$orderby=device asc` },
    ]);
    expect(response.status).toBe(200);
    const responses = response.json.responses as Array<{ id: string; status: number; body: Record<string, unknown> }>;
    expect(responses.map((each) => [each.id, each.status])).toEqual([
      ["1", 201],
      ["2", 201],
      ["3", 200],
    ]);
    expect(responses[0]?.body).toMatchObject({ device: { __id: a1.id }, tag_key: "rack", value: "r-1" });
    expect(responses[1]?.body).toMatchObject({ device: { __id: a2.id }, value: "r-2" });
    expect(responses[2]?.body).toEqual({
      d: [
        { device: { __id: a1.id }, value: "r-1" },
        { device: { __id: a2.id }, value: "r-2" },
      ],
    });
    // A second run conflicts with the tags just made: the group is refused whole.
    const again = await batch(owner.token, [
      tag("1", a1.id, { atomicityGroup: "g" }),
      tag("2", a2.id, { atomicityGroup: "g" }),
    ]);
    expect((again.json.responses as Array<{ status: number }>).map((each) => each.status)).toEqual([409, 409]);
  });

  it("refuses the whole group when one device is not the caller's to tag, and writes none of it", async () => {
    const a3 = a[2] as { id: number };
    const refused = await batch(mixed.token, [
      tag("c", c.id, { atomicityGroup: "page" }),
      tag("a", a3.id, { atomicityGroup: "page" }),
    ]);
    expect(refused.status).toBe(200);
    expect(refused.json.responses).toEqual([
      expect.objectContaining({
        id: "c",
        status: 401,
        headers: expect.objectContaining({ "x-flotilla-error-code": "unauthorized" }),
      }),
      expect.objectContaining({ id: "a", status: 401 }),
    ]);
    expect(await tagsOf([c.id, a3.id])).toEqual([]);
    // Another tenant's device is not even there for the caller (401, as balena answers it).
    const elsewhere = await batch(owner.token, [
      tag("x", other.id, { atomicityGroup: "page" }),
      tag("y", a3.id, { atomicityGroup: "page" }),
    ]);
    expect((elsewhere.json.responses as Array<{ status: number }>).map((each) => each.status)).toEqual([401, 401]);
    expect(await tagsOf([other.id, a3.id])).toEqual([]);
  });

  it("runs the resource's checks over every row of a group (a bad tag key refuses them all)", async () => {
    const a3 = a[2] as { id: number };
    const response = await batch(owner.token, [
      tag("1", a3.id, { atomicityGroup: "g" }),
      { ...tag("2", c.id, { atomicityGroup: "g" }), body: { device: c.id, tag_key: "bad key", value: "v" } },
    ]);
    expect((response.json.responses as Array<{ status: number }>).map((each) => each.status)).toEqual([400, 400]);
    expect(await tagsOf([a3.id, c.id])).toEqual([]);
  });

  it("rolls back a group's earlier writes of any kind when a later request is refused", async () => {
    const a1 = a[0] as { id: number };
    const before = await tagsOf([a1.id]);
    expect(before).toEqual([{ device: a1.id, value: "r-1" }]);
    const response = await batch(owner.token, [
      {
        id: "p",
        method: "PATCH",
        url: `device_tag?$filter=device eq ${a1.id} and tag_key eq 'rack'`,
        body: { value: "changed" },
        atomicityGroup: "g",
      },
      { ...tag("x", other.id), atomicityGroup: "g" },
    ]);
    expect((response.json.responses as Array<{ status: number }>).map((each) => each.status)).toEqual([401, 401]);
    expect(await tagsOf([a1.id])).toEqual(before);
  });

  it("answers requests outside a group one by one, as if sent alone", async () => {
    const a3 = a[2] as { id: number };
    const response = await batch(mixed.token, [tag("c", c.id), tag("a", a3.id)]);
    expect(
      (response.json.responses as Array<{ id: string; status: number }>).map((each) => [each.id, each.status]),
    ).toEqual([
      ["c", 201],
      ["a", 401],
    ]);
    expect(await tagsOf([c.id, a3.id])).toEqual([{ device: c.id, value: "r-c" }]);
  });

  it("refuses malformed batches and guests", async () => {
    for (const requests of [
      [],
      [{ id: "1", method: "PUT", url: "device" }],
      [{ id: "1", method: "GET", url: "/v6/device" }],
      [{ id: "1", method: "GET", url: "device", dependsOn: ["0"] }],
      [{ id: "1", method: "GET", url: "$batch" }],
      [
        { id: "1", method: "GET", url: "device" },
        { id: "1", method: "GET", url: "device" },
      ],
      [
        { id: "1", method: "GET", url: "device", atomicityGroup: "g" },
        { id: "2", method: "GET", url: "device" },
        { id: "3", method: "GET", url: "device", atomicityGroup: "g" },
      ],
      Array.from({ length: 501 }, (_, index) => ({ id: String(index), method: "GET", url: "device" })),
    ]) {
      expect((await batch(owner.token, requests)).status).toBe(400);
    }
    expect((await call(t, "POST", "/v7/$batch", owner.token, { nothing: true })).status).toBe(400);
    expect((await call(t, "POST", "/v7/$batch", undefined, { requests: [] })).status).toBe(401);
  });

  it("counts each of its requests against the caller's rate limit", async () => {
    const limited = await createTestApp({ FLOTILLA_RATE_LIMIT: "100" });
    try {
      const user = await limited.factories.user();
      const get = (count: number) =>
        Array.from({ length: count }, (_, index) => ({ id: String(index), method: "GET", url: "device?$top=1" }));
      const send = (requests: unknown[]) => call(limited, "POST", "/v7/$batch", user.token, { requests });
      expect((await send(get(60))).status).toBe(200);
      // 60 of 100 are spent: a batch of 50 does not fit, and says so with when to come back.
      const refused = await send(get(50));
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(refused.text).toContain("Each of this $batch's 50 requests counts against the limit of 100 a minute");
      // What is left is what single requests get.
      const statuses: number[] = [];
      for (let index = 0; index < 45; index += 1) {
        statuses.push((await call(limited, "GET", "/v7/device?$top=1", user.token)).status);
      }
      expect(statuses.filter((status) => status === 200)).toHaveLength(39);
      expect(statuses.at(-1)).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
