import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Database } from "../../src/db/index.ts";
import { FlotillaError } from "../../src/errors.ts";
import { createPermissions, type Hooks, type Permissions } from "../../src/odata/index.ts";
import { createTestDatabase } from "../harness.ts";
import { ACTORS, createFixture, failure, MEMBER_PERMISSIONS, memberOf, model, requester, reseed } from "./fixture.ts";

let db: Database;
let drop: () => Promise<void>;
let api: ReturnType<typeof requester>;

beforeAll(async () => {
  ({ db, drop } = await createTestDatabase());
  await createFixture(db);
  api = requester(db);
});
beforeEach(() => reseed(db));
afterAll(() => drop());

const alice = memberOf(ACTORS.alice);
const grants = (...permissions: string[]): Permissions =>
  createPermissions({ model, permissions, actorId: ACTORS.alice });
const readsEveryFleet = grants(...MEMBER_PERMISSIONS, "resin.application.read");
const post = (url: string, body: unknown, permissions?: Permissions, hooks?: Hooks) =>
  api.send("POST", url, { body, ...(permissions ? { permissions } : {}), ...(hooks ? { hooks } : {}) });
const patch = (url: string, body: unknown, permissions?: Permissions, hooks?: Hooks) =>
  api.send("PATCH", url, { body, ...(permissions ? { permissions } : {}), ...(hooks ? { hooks } : {}) });
const remove = (url: string, permissions?: Permissions, hooks?: Hooks) =>
  api.send("DELETE", url, { ...(permissions ? { permissions } : {}), ...(hooks ? { hooks } : {}) });
const count = async (table: string, where = "TRUE") =>
  Number((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`)).rows[0]?.n);

describe("POST", () => {
  it("creates and answers 201 with the object, not wrapped, and its Location", async () => {
    const response = await post("/v7/device_tag", { device: 1, tag_key: "owner", value: "ops" });
    expect(response).toEqual({
      status: 201,
      headers: { location: "/v7/device_tag(7)" },
      body: { id: 7, device: { __id: 1 }, tag_key: "owner", value: "ops" },
    });
    expect(await api.get("/device_tag(7)")).toHaveLength(1);
  });

  it("accepts {__id: n} for foreign keys, fills database defaults and honours $select", async () => {
    const response = await post("/device?$select=id,is_online,overall_status,created_at", {
      uuid: "dddd0008",
      device_name: "eta",
      belongs_to__application: { __id: 2 },
      custom_data: { nested: [1, "two"] },
      last_connectivity_event: "2024-05-01T08:00:00+02:00",
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ id: 8, is_online: false, overall_status: "disconnected" });
    expect((response.body as { created_at: string }).created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await api.get("/device(8)?$select=belongs_to__application,custom_data,last_connectivity_event")).toEqual([
      {
        belongs_to__application: { __id: 2 },
        custom_data: { nested: [1, "two"] },
        last_connectivity_event: "2024-05-01T06:00:00.000Z",
      },
    ]);
  });

  it("names the resource in Location as it was requested", async () => {
    const response = await post("/device_environment_variable", { device: 2, name: "MODE", value: "slow" });
    expect(response.headers.location).toBe("/v7/device_environment_variable(6)");
  });

  it("refuses fields that are unknown, not writable, missing or of the wrong type, naming them", async () => {
    const cases: [unknown, string][] = [
      [{ device: 1, tag_key: "k", colour: "red" }, 'Unknown field "colour" on device_tag'],
      [{ id: 99, device: 1, tag_key: "k" }, '"id" of device_tag cannot be written'],
      [{ device: 1 }, '"tag_key" is required on device_tag'],
      [{ device: 1, tag_key: null }, '"tag_key" is required on device_tag'],
      [{ device: "one", tag_key: "k" }, '"device" must be an id or {"__id": id}'],
      [{ device: 1, tag_key: 5 }, '"tag_key" must be a string'],
      [[{ device: 1, tag_key: "k" }], "must be a JSON object"],
      [null, "must be a JSON object"],
    ];
    for (const [body, message] of cases) {
      const error = await failure(post("/device_tag", body));
      expect(error.statusCode, message).toBe(400);
      expect(error.message).toContain(message);
    }
    const device = { uuid: "x", device_name: "x" };
    const deviceCases: [Record<string, unknown>, string][] = [
      [{ overall_status: "idle" }, '"overall_status" of device cannot be written'],
      [{ api_secret: "s" }, '"api_secret" of device cannot be written'],
      [{ cpu_usage: 1.5 }, '"cpu_usage" must be an integer'],
      [{ cpu_usage: 3_000_000_000 }, '"cpu_usage" must be an integer within'],
      [{ cpu_temp: "hot" }, '"cpu_temp" must be a number'],
      [{ is_online: "yes" }, '"is_online" must be true or false'],
      [{ last_connectivity_event: "soon" }, '"last_connectivity_event" must be a date'],
    ];
    for (const [extra, message] of deviceCases) {
      const error = await failure(post("/device", { ...device, ...extra }));
      expect(error.statusCode, message).toBe(400);
      expect(error.message).toContain(message);
    }
    expect(await count("fx_device_tag")).toBe(6);
    expect(await count("fx_device")).toBe(7);
  });

  it("converts what the caller may write loosely (numeric strings, 0/1)", async () => {
    const response = await post("/device", {
      uuid: "x1",
      device_name: "x",
      cpu_usage: "42",
      cpu_temp: "36.6",
      is_online: 1,
    });
    expect(response.body).toMatchObject({ cpu_usage: 42, cpu_temp: 36.6, is_online: true });
  });

  it("answers 409 with '\"field\" must be unique.' on a unique violation", async () => {
    const single = await failure(post("/device", { uuid: "aaaa0001", device_name: "copy" }));
    expect(single).toMatchObject({ statusCode: 409, code: "conflict", message: '"uuid" must be unique.' });
    const composite = await failure(post("/device_environment_variable", { device: 1, name: "DEBUG", value: "2" }));
    expect(composite).toMatchObject({ statusCode: 409, message: '"device" and "name" must be unique.' });
    expect(composite.message).toMatch(/unique/i);
  });

  it("maps foreign-key, not-null, check and value errors to 400", async () => {
    expect(await failure(post("/device_tag", { device: 999, tag_key: "k" }))).toMatchObject({
      statusCode: 400,
      message: '"device" does not refer to an existing row.',
    });
    expect(await failure(post("/device", { uuid: "n", device_name: "n", is_online: null }))).toMatchObject({
      statusCode: 400,
      message: '"is_online" must not be null.',
    });
    const check = await failure(post("/device", { uuid: "c", device_name: "c", cpu_usage: 150 }));
    expect(check.statusCode).toBe(400);
    expect(check.message).toContain("not allowed on device");
    expect(
      (await failure(post("/device_environment_variable", { device: 1, name: "1bad", value: "" }))).statusCode,
    ).toBe(400);
    // A value only the database can judge (here set by a hook) is a 400 too.
    const hooks: Hooks = {
      device: {
        beforeCreate: ({ body }) => {
          body.cpu_usage = "many";
        },
      },
    };
    const invalid = await failure(post("/device", { uuid: "v", device_name: "v" }, undefined, hooks));
    expect(invalid).toMatchObject({ statusCode: 400, message: expect.stringContaining("invalid input syntax") });
  });

  it("refuses a key or /$count in the URL", async () => {
    expect((await failure(post("/device_tag(1)", { device: 1, tag_key: "k" }))).statusCode).toBe(400);
    expect((await failure(post("/device_tag/$count", { device: 1, tag_key: "k" }))).statusCode).toBe(400);
  });

  it("checks the create permission on the inserted row and writes nothing when it fails", async () => {
    const mine = await post("/device", { uuid: "a9", device_name: "mine", belongs_to__application: 1 }, alice);
    expect(mine.status).toBe(201);
    // Alice may read every fleet here, so only the create permission refuses globex's.
    expect(
      await failure(
        post("/device", { uuid: "b9", device_name: "theirs", belongs_to__application: 3 }, readsEveryFleet),
      ),
    ).toMatchObject({
      statusCode: 401,
    });
    expect(await failure(post("/device", { uuid: "c9", device_name: "nobody's" }, alice))).toMatchObject({
      statusCode: 401,
    });
    expect(await count("fx_device", "uuid IN ('b9', 'c9')")).toBe(0);
    expect(await failure(post("/organization", { name: "New", handle: "new" }, alice))).toMatchObject({
      statusCode: 401,
    });
  });

  it("answers only the id when the caller may create but not read", async () => {
    const permissions = grants("resin.device_tag.create", "resin.device.read");
    const response = await post("/device_tag", { device: 1, tag_key: "k" }, permissions);
    expect(response).toMatchObject({ status: 201, body: { id: 7 } });
  });
});

describe("PATCH", () => {
  it("updates by key and answers 200 with no body", async () => {
    const response = await patch("/v7/device(1)", { note: "moved", cpu_usage: 11 });
    expect(response).toEqual({ status: 200, headers: {} });
    expect(await api.get("/device(1)?$select=note,cpu_usage")).toEqual([{ note: "moved", cpu_usage: 11 }]);
  });

  it("updates by alternate key and by $filter (batched SDK calls use id in (…))", async () => {
    await patch("/device(uuid='aaaa0002')", { note: "two" });
    await patch("/device?$filter=id in (3, 4)", { note: "batch" });
    expect(await api.get("/device?$select=id,note&$filter=id le 4")).toEqual([
      { id: 1, note: "rack 1" },
      { id: 2, note: "two" },
      { id: 3, note: "batch" },
      { id: 4, note: "batch" },
    ]);
  });

  it("supports pinejs-client's upsert: POST, 409, then PATCH by $filter", async () => {
    const conflict = await failure(post("/device_environment_variable", { device: 1, name: "DEBUG", value: "2" }));
    expect(conflict.statusCode).toBe(409);
    expect(conflict.message).toMatch(/unique/i);
    await patch("/device_environment_variable?$filter=device eq 1 and name eq 'DEBUG'", { value: "2" });
    expect(await api.get("/device_environment_variable(device=1,name='DEBUG')?$select=value")).toEqual([
      { value: "2" },
    ]);
  });

  it("touches only rows the caller may read and update", async () => {
    const onlineOnly = grants("resin.device.read", "resin.device.update?is_online eq true");
    await patch("/device?$filter=id le 3", { note: "touched" }, onlineOnly);
    expect(await api.get("/device?$select=id,note&$filter=id le 3")).toEqual([
      { id: 1, note: "touched" },
      { id: 2, note: null },
      { id: 3, note: "touched" },
    ]);
    await patch("/device(5)", { note: "not yours" }, alice);
    expect(await api.get("/device(5)?$select=note")).toEqual([{ note: "lab" }]);
    expect(await failure(patch("/device(1)", { note: "x" }, grants("resin.device.read")))).toMatchObject({
      statusCode: 401,
    });
    expect(await failure(patch("/device(1)", { note: "x" }, grants("resin.device.update")))).toMatchObject({
      statusCode: 401,
    });
  });

  it("checks the update permission after the change: nobody moves a row out of their tenant", async () => {
    expect(await failure(patch("/device(1)", { belongs_to__application: 3 }, readsEveryFleet))).toMatchObject({
      statusCode: 401,
    });
    expect(
      await failure(
        patch("/device?$filter=id in (1, 2)", { belongs_to__application: 3, note: "gone" }, readsEveryFleet),
      ),
    ).toMatchObject({
      statusCode: 401,
    });
    expect(await api.get("/device?$select=id,belongs_to__application,note&$filter=id in (1, 2)")).toEqual([
      { id: 1, belongs_to__application: { __id: 1 }, note: "rack 1" },
      { id: 2, belongs_to__application: { __id: 1 }, note: null },
    ]);
    // Moving within the tenant is fine.
    await patch("/device(1)", { belongs_to__application: 2 }, alice);
    expect(await api.get("/device(1)?$select=belongs_to__application")).toEqual([
      { belongs_to__application: { __id: 2 } },
    ]);
  });

  it("refuses bad fields, maps unique violations, and takes no paging options", async () => {
    expect(await failure(patch("/device(1)", { created_at: "2020-01-01T00:00:00Z" }))).toMatchObject({
      statusCode: 400,
      message: '"created_at" of device cannot be written',
    });
    expect(await failure(patch("/device(1)", { colour: 1 }))).toMatchObject({ statusCode: 400 });
    expect(await failure(patch("/device(2)", { uuid: "aaaa0001" }))).toMatchObject({
      statusCode: 409,
      message: '"uuid" must be unique.',
    });
    expect(await failure(patch("/device?$top=1", { note: "x" }))).toMatchObject({ statusCode: 400 });
    expect(await failure(patch("/device/$count", { note: "x" }))).toMatchObject({ statusCode: 400 });
    expect(await failure(remove("/device/$count"))).toMatchObject({ statusCode: 400 });
    expect(await failure(patch("/gadget(1)", { note: "x" }))).toMatchObject({
      statusCode: 400,
      message: 'Unknown resource "gadget"',
    });
  });

  it("answers 200 when nothing matches", async () => {
    expect(await patch("/device(999)", { note: "x" })).toMatchObject({ status: 200 });
  });
});

describe("DELETE", () => {
  it("deletes by key and by $filter, answering 200 with no body", async () => {
    expect(await remove("/device_tag(2)")).toEqual({ status: 200, headers: {} });
    await remove("/device_tag?$filter=value eq 'berlin'");
    expect(await api.ids("/device_tag")).toEqual([3, 5, 6]);
    await remove("/device_tag(device=5,tag_key='location')");
    expect(await api.ids("/device_tag")).toEqual([3, 6]);
  });

  it("deletes only rows the caller may read and delete", async () => {
    await remove("/device(5)", alice);
    expect(await api.ids("/device(5)")).toEqual([5]);
    const someTags = grants("resin.device_tag.read", "resin.device_tag.delete?value eq 'berlin'");
    await remove("/device_tag", someTags);
    expect(await api.ids("/device_tag")).toEqual([2, 3, 5, 6]);
    expect(await failure(remove("/device_tag(2)", grants("resin.device_tag.read")))).toMatchObject({ statusCode: 401 });
  });

  it("maps a row still referenced elsewhere to 400", async () => {
    expect(await failure(remove("/application(3)"))).toMatchObject({
      statusCode: 400,
      message: "This application is still referenced by device.",
    });
    expect(await api.ids("/application(3)")).toEqual([3]);
  });
});

describe("hooks", () => {
  it("run around a create inside its transaction, and may fill fields in", async () => {
    const seen: unknown[] = [];
    const hooks: Hooks = {
      device_tag: {
        beforeCreate: ({ body, actorId, resource }) => {
          seen.push(["before", actorId, resource.name]);
          body.value = `${body.value ?? ""}!`;
        },
        afterCreate: async ({ tx, id }) => {
          const { rows } = await tx.query<{ value: string }>("SELECT value FROM fx_device_tag WHERE id = $1", [id]);
          seen.push(["after", id, rows[0]?.value]);
        },
      },
    };
    const response = await api.send("POST", "/device_tag", {
      body: { device: 1, tag_key: "k", value: "v" },
      hooks,
      actorId: 42,
    });
    expect(response.body).toMatchObject({ value: "v!" });
    expect(seen).toEqual([
      ["before", 42, "device_tag"],
      ["after", 7, "v!"],
    ]);
  });

  it("refuse with a FlotillaError and roll everything back", async () => {
    const refuse: Hooks = {
      device_tag: {
        afterCreate: async ({ tx }) => {
          await tx.query("UPDATE fx_device SET note = 'side effect' WHERE id = 1");
          throw new FlotillaError("forbidden", "No more tags.");
        },
      },
    };
    expect(await failure(post("/device_tag", { device: 1, tag_key: "k" }, undefined, refuse))).toMatchObject({
      statusCode: 403,
      message: "No more tags.",
    });
    expect(await count("fx_device_tag")).toBe(6);
    expect(await api.get("/device(1)?$select=note")).toEqual([{ note: "rack 1" }]);
  });

  it("receive the ids of updated rows and the deleted rows", async () => {
    const beforeUpdate = vi.fn();
    const afterUpdate = vi.fn();
    const beforeDelete = vi.fn();
    const afterDelete = vi.fn();
    const hooks: Hooks = {
      device: {
        beforeUpdate: ({ ids, body }) => {
          beforeUpdate(ids, { ...body });
          body.cpu_usage = 1;
        },
        afterUpdate: ({ ids, body }) => afterUpdate(ids, body),
      },
      device_tag: {
        beforeDelete: ({ ids }) => beforeDelete(ids),
        afterDelete: ({ ids, rows }) => afterDelete(ids, rows),
      },
    };
    await patch("/device?$filter=is_online", { note: "on" }, undefined, hooks);
    expect(beforeUpdate).toHaveBeenCalledWith([1, 3, 5], { note: "on" });
    expect(afterUpdate).toHaveBeenCalledWith([1, 3, 5], { note: "on", cpu_usage: 1 });
    expect(await api.get("/device?$select=cpu_usage&$filter=is_online")).toEqual([
      { cpu_usage: 1 },
      { cpu_usage: 1 },
      { cpu_usage: 1 },
    ]);
    await remove("/device_tag?$filter=device eq 1", undefined, hooks);
    expect(beforeDelete).toHaveBeenCalledWith([1, 2]);
    expect(afterDelete).toHaveBeenCalledWith(
      [1, 2],
      expect.arrayContaining([
        expect.objectContaining({ id: 1, tag_key: "location" }),
        expect.objectContaining({ id: 2, tag_key: "rack" }),
      ]),
    );
  });

  it("refusing a delete keeps the rows", async () => {
    const hooks: Hooks = {
      device: {
        beforeDelete: () => {
          throw new FlotillaError("conflict", "Device is busy.");
        },
      },
    };
    expect(await failure(remove("/device(1)", undefined, hooks))).toMatchObject({ statusCode: 409 });
    expect(await api.ids("/device(1)")).toEqual([1]);
  });
});

describe("afterCommit", () => {
  it("runs queued work after the write commits, and never when it rolls back", async () => {
    const ran: string[] = [];
    const queueing = (fail: boolean): Hooks => ({
      device_tag: {
        afterCreate({ afterCommit, id }) {
          afterCommit(async () => {
            // Runs outside the transaction: the row is there for anyone to see.
            const { rows } = await db.query("SELECT 1 FROM fx_device_tag WHERE id = $1", [id]);
            ran.push(`${id}:${rows.length}`);
          });
          if (fail) throw new FlotillaError("bad_request", "no");
        },
      },
    });
    const ok = await post("/v7/device_tag", { device: 1, tag_key: "queued", value: "v" }, undefined, queueing(false));
    expect(ok.status).toBe(201);
    expect(ran).toEqual([`${(ok.body as { id: number }).id}:1`]);
    const refused = await failure(
      post("/v7/device_tag", { device: 1, tag_key: "rolled", value: "v" }, undefined, queueing(true)),
    );
    expect(refused.statusCode).toBe(400);
    expect(ran).toHaveLength(1);
  });
});
