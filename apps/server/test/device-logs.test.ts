import { gzipSync } from "node:zlib";
import { type BalenaSDK, getSdk, type LogMessage } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFactories } from "./factories.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { eventually } from "./support/agent.ts";
import { clusterUnreachable, type Instance, useTwoInstances } from "./support/cluster.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * Device logs (issue 10): lines sent through the agent's log stream, read back with the real
 * balena-sdk (`logs.history`, `logs.subscribe`), pruned to FLOTILLA_DEVICE_LOG_LINES, cleared
 * with device_log.delete, and carried across two instances through Redis.
 */
const KEEP = 20;

/** As the agent sends them (apps/agent/src/protocol/log-stream.ts): NDJSON, one POST. */
async function sendLines(url: string, device: TestDevice, messages: string[], extra: Record<string, unknown> = {}) {
  const body = messages.map((message, i) => JSON.stringify({ message, timestamp: 1_700_000_000_000 + i, ...extra }));
  const response = await fetch(`${url}/device/v2/${device.uuid}/log-stream`, {
    method: "POST",
    headers: { authorization: `Bearer ${device.key}`, "content-type": "application/x-ndjson" },
    body: `${body.join("\n")}\n`,
  });
  expect(response.status).toBe(201);
}

async function sdkFor(url: string, token: string): Promise<BalenaSDK> {
  const sdk = getSdk({ apiUrl: url, dataDirectory: false });
  await sdk.auth.loginWithToken(token);
  return sdk;
}

/** A balena-sdk subscription and everything it emitted. */
async function subscribe(sdk: BalenaSDK, uuid: string, count?: number) {
  const lines: LogMessage[] = [];
  const errors: unknown[] = [];
  const subscription = await sdk.logs.subscribe(uuid, count === undefined ? {} : { count });
  subscription.on("line", (line: LogMessage) => lines.push(line));
  subscription.on("error", (error: unknown) => errors.push(error));
  return { lines, errors, unsubscribe: () => subscription.unsubscribe() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("device logs on one instance", () => {
  let t: TestApp;
  let device: TestDevice;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp({ FLOTILLA_DEVICE_LOG_LINES: String(KEEP), FLOTILLA_DEVICE_LOG_HEARTBEAT_SECONDS: "0.2" });
    const owner = await t.factories.user();
    tokens.owner = owner.token;
    const org = await t.factories.organization({ name: "Logs", admins: [owner.user] });
    const fleet = await t.factories.fleet(org, { name: "logs-fleet" });
    for (const role of ["observer", "operator", "safe-developer", "developer"]) {
      const user = await t.factories.user();
      await t.factories.fleetMember(user.user, fleet, role);
      tokens[role] = user.token;
    }
    tokens.stranger = (await t.factories.user()).token;
    device = await registerDevice(t, await provisioningKeyFor(t, owner.token, fleet.id), fleet);
  });
  afterAll(() => t.close());

  const storedCount = async () => {
    const { rows } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM device_log WHERE device = $1`, [
      device.id,
    ]);
    return rows[0]?.n;
  };

  it("reads history through balena-sdk, before and after the lines reach the table", async () => {
    await t.ctx.devices.logs.clear(device.id);
    await sendLines(t.url, device, ["one", "two"], { serviceId: 7 });
    await sendLines(t.url, device, ["Dropped 3 log lines"], { isSystem: true, isStdErr: true });
    const sdk = await sdkFor(t.url, tokens.observer as string);
    // Not yet written: the lines still come from memory.
    const pending = await sdk.logs.history(device.uuid);
    expect(pending.map((l) => l.message)).toEqual(["one", "two", "Dropped 3 log lines"]);
    await t.ctx.devices.logs.flush();
    expect(await storedCount()).toBe(3);
    const stored = await sdk.logs.history(device.uuid);
    expect(stored).toEqual(pending);
    expect(stored[0]).toEqual({
      message: "one",
      timestamp: 1_700_000_000_000,
      createdAt: expect.any(Number),
      isSystem: false,
      isStdErr: false,
      serviceId: 7,
    });
    expect(stored[2]).toMatchObject({ isSystem: true, isStdErr: true, serviceId: null });

    // Half in the table, half pending: one history, oldest first.
    await sendLines(t.url, device, ["four"]);
    expect((await sdk.logs.history(device.uuid, { count: 2 })).map((l) => l.message)).toEqual([
      "Dropped 3 log lines",
      "four",
    ]);
    expect(await sdk.logs.history(device.uuid, { count: 0 })).toEqual([]);
    expect(await sdk.logs.history(device.uuid, { count: "all" })).toHaveLength(4);
    const later = Date.now() + 60_000;
    expect(await sdk.logs.history(device.uuid, { start: later })).toEqual([]);
    expect(await sdk.logs.history(device.uuid, { start: new Date(0).toISOString(), count: 1 })).toHaveLength(1);
    const base = `/device/v2/${device.uuid}/logs`;
    expect((await call(t, "GET", `${base}?count=many`, tokens.owner)).status).toBe(400);
    expect((await call(t, "GET", `${base}?count=-1`, tokens.owner)).status).toBe(400);
    expect((await call(t, "GET", `${base}?start=yesterday`, tokens.owner)).status).toBe(400);
  });

  it("answers 413 to a gzip body that unpacks beyond the bound, and a gzipped state report is no 500", async () => {
    // 32 MiB of empty lines is ~32 KiB gzipped.
    const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024, "\n"));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const response = await fetch(`${t.url}/device/v2/${device.uuid}/log-stream`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${device.key}`,
        "content-type": "application/x-ndjson",
        "content-encoding": "gzip",
      },
      body: bomb,
    });
    expect(response.status).toBe(413);
    // As sent, without gzip, the same bound. The server answers while the client still sends and
    // closes the connection: a client may see the 413 or only the closed connection.
    const plain = await fetch(`${t.url}/device/v2/${device.uuid}/log-stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${device.key}`, "content-type": "application/x-ndjson" },
      body: Buffer.alloc(17 * 1024 * 1024, "\n"),
    }).then(
      (answer) => answer.status,
      () => "closed",
    );
    expect([413, "closed"]).toContain(plain);
    // A small gzipped stream still goes through.
    await t.ctx.devices.logs.clear(device.id);
    const small = await fetch(`${t.url}/device/v2/${device.uuid}/log-stream`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${device.key}`,
        "content-type": "application/x-ndjson",
        "content-encoding": "gzip",
      },
      body: gzipSync(`${JSON.stringify({ message: "zipped", timestamp: 1_700_000_000_000 })}\n`),
    });
    expect(small.status).toBe(201);
    // The state report is parsed by Fastify, which does not unpack: a gzip body is a client error.
    const report = await fetch(`${t.url}/device/v3/state`, {
      method: "PATCH",
      headers: {
        authorization: `Bearer ${device.key}`,
        "content-type": "application/json",
        "content-encoding": "gzip",
      },
      body: gzipSync(JSON.stringify({ [device.uuid]: {} })),
    });
    expect(report.status).toBeGreaterThanOrEqual(400);
    expect(report.status).toBeLessThan(500);
  });

  it("keeps the configured number of lines per device, oldest pruned", async () => {
    await t.ctx.devices.logs.clear(device.id);
    const messages = Array.from({ length: 50 }, (_, i) => `line ${i}`);
    await sendLines(t.url, device, messages);
    await t.ctx.devices.logs.flush();
    expect(await storedCount()).toBe(KEEP);
    const all = await call(t, "GET", `/device/v2/${device.uuid}/logs?count=all`, tokens.owner);
    expect((all.json as unknown as LogMessage[]).map((l) => l.message)).toEqual(messages.slice(-KEEP));
    // A count beyond what is kept reads what is kept.
    const many = await call(t, "GET", `/device/v2/${device.uuid}/logs?count=1000`, tokens.owner);
    expect(many.json).toHaveLength(KEEP);
    await sendLines(t.url, device, ["a", "b", "c"]);
    await t.ctx.devices.logs.flush();
    expect(await storedCount()).toBeLessThanOrEqual(KEEP + 3);
    const last = await call(t, "GET", `/device/v2/${device.uuid}/logs?count=all`, tokens.owner);
    expect(last.json).toHaveLength(KEEP);
    expect((last.json as unknown as LogMessage[]).at(-1)?.message).toBe("c");
  });

  it("streams history then live lines to balena-sdk subscribers", async () => {
    await t.ctx.devices.logs.clear(device.id);
    await sendLines(t.url, device, ["old 1", "old 2", "old 3"]);
    const sdk = await sdkFor(t.url, tokens.observer as string);
    const first = await subscribe(sdk, device.uuid, 2);
    const second = await subscribe(sdk, device.uuid);
    await eventually(async () => first.lines.length === 2);
    // Both streams are attached before the live lines: the second one has no history to wait for.
    await eventually(async () => t.ctx.devices.logs.viewersOf(device.id) === 2);
    await sendLines(t.url, device, ["live 1", "live 2"], { serviceId: 3 });
    await eventually(async () => first.lines.length === 4 && second.lines.length === 2);
    expect(first.lines.map((l) => l.message)).toEqual(["old 2", "old 3", "live 1", "live 2"]);
    // Without a count a subscription starts with no history (balena-sdk's default).
    expect(second.lines.map((l) => l.message)).toEqual(["live 1", "live 2"]);
    expect(second.lines[0]).toMatchObject({ isSystem: false, isStdErr: false, serviceId: 3 });
    first.unsubscribe();
    await sendLines(t.url, device, ["live 3"]);
    await eventually(async () => second.lines.length === 3);
    expect(first.lines).toHaveLength(4);
    second.unsubscribe();
    expect([...first.errors, ...second.errors]).toEqual([]);
  });

  it("keeps an idle stream open with empty heartbeat lines the SDK skips, never compressed or buffered", async () => {
    const controller = new AbortController();
    const response = await fetch(`${t.url}/device/v2/${device.uuid}/logs?stream=1`, {
      // A client that accepts compression still gets each line as it is written.
      headers: { authorization: `Bearer ${tokens.owner}`, "accept-encoding": "br, gzip" },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    expect(response.headers.get("content-encoding")).toBeNull();
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    const started = Date.now();
    while (Date.now() - started < 700) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    // Heartbeats every 0.2 s and nothing else.
    expect(text.length).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/^\n+$/);
    controller.abort();

    const sdk = await sdkFor(t.url, tokens.owner as string);
    const idle = await subscribe(sdk, device.uuid);
    await sleep(700);
    expect(idle.lines).toEqual([]);
    await sendLines(t.url, device, ["after a quiet spell"]);
    await eventually(async () => idle.lines.length === 1);
    expect(idle.errors).toEqual([]);
    idle.unsubscribe();
  });

  it("clears logs with device_log.delete only; strangers see no device", async () => {
    await sendLines(t.url, device, ["to be cleared"]);
    await t.ctx.devices.logs.flush();
    await sendLines(t.url, device, ["still pending"]);
    const path = `/device/v2/${device.uuid}/logs`;
    for (const role of ["observer", "operator"]) {
      const refused = await call(t, "DELETE", path, tokens[role]);
      expect(refused.status, role).toBe(403);
    }
    expect((await call(t, "GET", path, tokens.observer)).json).not.toHaveLength(0);
    expect((await call(t, "DELETE", path, tokens.stranger)).status).toBe(404);
    expect((await call(t, "GET", path, tokens.stranger)).status).toBe(404);
    expect((await call(t, "GET", `${path}?stream=1`, tokens.stranger)).status).toBe(404);
    expect((await call(t, "GET", path, undefined)).status).toBe(401);
    // A device's own key reads no logs.
    expect((await call(t, "GET", path, device.key)).status).toBe(404);

    expect((await call(t, "DELETE", path, tokens["safe-developer"])).status).toBe(204);
    expect((await call(t, "GET", path, tokens.observer)).json).toEqual([]);
    await t.ctx.devices.logs.flush();
    expect(await storedCount()).toBe(0);
    expect((await call(t, "DELETE", path, tokens.developer)).status).toBe(204);
  });
});

/**
 * Two instances sharing PostgreSQL and Redis (like devices-cluster.test.ts): a device streams to
 * A, a viewer watches on B. Skipped only when no PostgreSQL or Redis answers here.
 */
const unreachable = await clusterUnreachable();
if (unreachable) console.warn(`device-logs cluster: skipped, ${unreachable}`);

describe.skipIf(unreachable !== undefined)("device logs across two instances with Redis", () => {
  const instances = useTwoInstances("logs");

  it("delivers lines ingested on one instance to viewers on the other, and history from either", async () => {
    const [a, b] = instances as [Instance, Instance];
    const factories = createFactories(a.db.orm);
    const owner = await factories.user();
    const token = await a.ctx.tokens.start(owner);
    const org = await factories.organization({ name: "Logs cluster", admins: [owner] });
    const fleet = await factories.fleet(org, { name: "logs-cluster" });
    const asA = { url: a.url } as TestApp;
    const device = await registerDevice(asA, await provisioningKeyFor(asA, token, fleet.id), fleet);

    const viewer = await subscribe(await sdkFor(b.url, token), device.uuid);
    // B's announcement reaches A through Redis; until then A has no one to send to.
    let round = 0;
    await eventually(async () => {
      await sendLines(a.url, device, [`hello ${round++}`]);
      await sleep(50);
      return viewer.lines.length > 0;
    });
    const before = viewer.lines.length;
    await sendLines(a.url, device, ["across instances"]);
    await eventually(async () => viewer.lines.length === before + 1);
    expect(viewer.lines.at(-1)?.message).toBe("across instances");
    viewer.unsubscribe();

    // A's pending lines reach the table; B reads them.
    await a.ctx.devices.logs.flush();
    const history = await call({ url: b.url } as TestApp, "GET", `/device/v2/${device.uuid}/logs?count=1`, token);
    expect(history.json).toEqual([expect.objectContaining({ message: "across instances" })]);
    // Clearing on B drops A's still-pending lines too.
    await sendLines(a.url, device, ["pending on A"]);
    expect((await call({ url: b.url } as TestApp, "DELETE", `/device/v2/${device.uuid}/logs`, token)).status).toBe(204);
    await eventually(async () => (await a.ctx.devices.logs.history(device.id, 10)).length === 0);
  });
});
