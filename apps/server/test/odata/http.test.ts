import type { AddressInfo } from "node:net";
import { getSdk } from "balena-sdk";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/index.ts";
import { registerErrorHandler } from "../../src/lib/error-handler.ts";
import { handleODataRequest } from "../../src/odata/index.ts";
import { createTestDatabase } from "../harness.ts";
import { admin, createFixture, model } from "./fixture.ts";

/**
 * The engine behind a real route and the real error handler, driven by balena-sdk's own pine
 * client: the URLs pinejs-client compiles, the envelope it unwraps, and its upsert, which needs a
 * 409 whose text body matches /unique/i.
 */
let db: Database;
let drop: () => Promise<void>;
let app: FastifyInstance;
let url: string;
beforeAll(async () => {
  ({ db, drop } = await createTestDatabase());
  await createFixture(db);
  // A bare server with the real error handler, so /v7 serves the fixture model, not the product's.
  app = Fastify();
  registerErrorHandler(app);
  app.route({
    method: ["GET", "POST", "PATCH", "DELETE"],
    url: "/v7/*",
    handler: async (request, reply) => {
      const response = await handleODataRequest({
        db,
        model,
        permissions: admin,
        method: request.method,
        url: request.url,
        body: request.body,
      });
      return reply.code(response.status).headers(response.headers).send(response.body);
    },
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app.close();
  await drop();
});

const pine = () => getSdk({ apiUrl: url, dataDirectory: false }).pine;

describe("the engine under balena-sdk's pine client", () => {
  it("answers gets, keyed gets and counts as the client compiles them", async () => {
    const devices = await pine().get({
      resource: "device",
      options: {
        $select: ["id", "device_name"],
        $filter: { device_tag: { $any: { $alias: "t", $expr: { t: { value: "berlin" } } } } },
        $expand: { belongs_to__application: { $select: ["slug"] }, device_tag: { $count: {} } },
        $orderby: { device_name: "desc" },
      },
    });
    expect(devices).toEqual([
      { id: 4, device_name: "delta", belongs_to__application: [{ slug: "acme/a2" }], device_tag: 1 },
      { id: 1, device_name: "alpha", belongs_to__application: [{ slug: "acme/a1" }], device_tag: 2 },
    ]);
    const device = await pine().get({ resource: "device", id: { uuid: "aaaa0002" }, options: { $select: ["id"] } });
    expect(device).toEqual({ id: 2 });
    const count = await pine().get({ resource: "device", options: { $count: { $filter: { is_online: true } } } });
    expect(count).toBe(3);
  });

  it("creates, upserts through a 409, updates and deletes", async () => {
    const created = await pine().post({ resource: "device_tag", body: { device: 2, tag_key: "owner", value: "ops" } });
    expect(created).toMatchObject({ device: { __id: 2 }, tag_key: "owner", value: "ops" });
    await pine().upsert({ resource: "device_tag", id: { device: 2, tag_key: "owner" }, body: { value: "dev" } });
    expect(
      await pine().get({
        resource: "device_tag",
        options: { $select: ["value"], $filter: { device: 2, tag_key: "owner" } },
      }),
    ).toEqual([{ value: "dev" }]);
    await pine().patch({ resource: "device_tag", options: { $filter: { id: { $in: [1, 2] } } }, body: { value: "x" } });
    await pine().delete({ resource: "device_tag", id: 3 });
    const tags = await pine().get({
      resource: "device_tag",
      options: { $select: ["id", "value"], $filter: { device: { $in: [1, 2] } } },
    });
    expect(tags).toEqual([
      { id: 1, value: "x" },
      { id: 2, value: "x" },
      { id: 7, value: "dev" },
    ]);
  });

  it("answers refusals as text under /v7/", async () => {
    const conflict = await fetch(`${url}/v7/device`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uuid: "aaaa0001", device_name: "copy" }),
    });
    expect(conflict.status).toBe(409);
    expect(await conflict.text()).toBe('"uuid" must be unique.');
    const unknown = await fetch(`${url}/v7/device?$select=colour`);
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toBe('Unknown field "colour" on device');
    const created = await fetch(`${url}/v7/device_tag`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ device: 1, tag_key: "new" }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toMatch(/^\/v7\/device_tag\(\d+\)$/);
  });
});
