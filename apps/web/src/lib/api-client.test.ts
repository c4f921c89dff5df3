/// <reference types="node" />
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSend, TOKEN_STORAGE_KEY } from "./api-client.ts";
import { getErrorCode, getStatusCode } from "./errors.ts";
import { createPine } from "./pine.ts";

/** A real HTTP server that answers as the API would, and records what it was sent. */
const seen: Array<{ method: string; url: string; authorization?: string; client?: string; body: string }> = [];
let answer: { status: number; type?: string; body: string } = { status: 200, type: "application/json", body: "{}" };
const server = http.createServer((request, response) => {
  let body = "";
  request.on("data", (chunk) => {
    body += chunk;
  });
  request.on("end", () => {
    seen.push({
      method: request.method ?? "",
      url: request.url ?? "",
      ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}),
      ...(request.headers["x-balena-client"] ? { client: String(request.headers["x-balena-client"]) } : {}),
      body,
    });
    response.writeHead(answer.status, answer.type ? { "content-type": answer.type, "x-error": "yes" } : {});
    response.end(answer.body);
  });
});
let apiUrl = "";
const storage = new Map<string, string>();

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  Object.assign(globalThis, {
    localStorage: {
      getItem: (key: string) => storage.get(key) ?? null,
      setItem: (key: string, value: string) => storage.set(key, value),
      removeItem: (key: string) => storage.delete(key),
    },
  });
});
afterAll(() => server.close());
beforeEach(() => {
  seen.length = 0;
  storage.clear();
});

const jwt = (exp: number) => `x.${btoa(JSON.stringify({ exp })).replace(/=+$/, "")}.y`;
const send = createSend("flotilla-dashboard/31.1.1");

describe("the dashboard's API client", () => {
  it("sends the stored token, the client header and JSON, and reads JSON or text as balena-request does", async () => {
    storage.set(TOKEN_STORAGE_KEY, "key123");
    answer = { status: 200, type: "application/json", body: '{"d":[{"id":1}]}' };
    const json = await send({ method: "POST", url: "/v7/thing", baseUrl: apiUrl, body: { a: 1 }, qs: { count: 5 } });
    expect(json.body).toEqual({ d: [{ id: 1 }] });
    expect(seen[0]).toEqual({
      method: "POST",
      url: "/v7/thing?count=5",
      authorization: "Bearer key123",
      client: "flotilla-dashboard/31.1.1",
      body: '{"a":1}',
    });
    answer = { status: 200, type: "text/plain", body: "OK" };
    expect((await send({ url: "/ping", baseUrl: apiUrl })).body).toBe("OK");
  });

  it("fails as balena-errors' request error: the message's text, the status and the answer's headers", async () => {
    answer = { status: 409, type: "application/json", body: '{"message":"Unique key constraint violated"}' };
    const error = await send({ url: "/v7/thing", baseUrl: apiUrl }).catch((caught: unknown) => caught);
    expect(getErrorCode(error)).toBe("BalenaRequestError");
    expect(getStatusCode(error)).toBe(409);
    expect(error).toMatchObject({ body: "Unique key constraint violated" });
    expect((error as Error).message).toBe("Request error: Unique key constraint violated");
    expect((error as { responseHeaders: Headers }).responseHeaders.get("x-error")).toBe("yes");
    answer = { status: 500, body: "" };
    expect(await send({ url: "/v7/thing", baseUrl: apiUrl }).catch((caught: unknown) => caught)).toMatchObject({
      body: "The request was unsuccessful",
    });
  });

  it("refuses to send an expired session token, and sends API keys and live tokens", async () => {
    storage.set(TOKEN_STORAGE_KEY, jwt(Math.floor(Date.now() / 1000) - 60));
    const expired = await send({ url: "/v7/thing", baseUrl: apiUrl }).catch((caught: unknown) => caught);
    expect(getErrorCode(expired)).toBe("BalenaExpiredToken");
    expect(seen).toEqual([]);
    storage.set(TOKEN_STORAGE_KEY, jwt(Math.floor(Date.now() / 1000) + 3600));
    answer = { status: 200, type: "application/json", body: "{}" };
    await send({ url: "/v7/thing", baseUrl: apiUrl });
    expect(seen[0]?.authorization).toMatch(/^Bearer x\./);
  });

  it("pine reads /v7 with OData options, and a 401 without a token means not logged in", async () => {
    const pine = createPine(apiUrl, send);
    storage.set(TOKEN_STORAGE_KEY, "key123");
    answer = { status: 200, type: "application/json", body: '{"d":[{"id":4,"app_name":"demo"}]}' };
    const fleet = await pine.get({ resource: "application", id: 4, options: { $select: ["id", "app_name"] } });
    expect(fleet).toEqual({ id: 4, app_name: "demo" });
    expect(seen[0]?.url).toBe("/v7/application(4)?$select=id,app_name");
    storage.clear();
    answer = { status: 401, type: "text/plain", body: "Unauthorized" };
    const error = await pine.get({ resource: "application" }).catch((caught: unknown) => caught);
    expect(getErrorCode(error)).toBe("BalenaNotLoggedIn");
  });
});
