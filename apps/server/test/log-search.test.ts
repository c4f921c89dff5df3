import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertLogLines, type StoredLogLine } from "../src/features/devices/log-queries.ts";
import { runLogRetention } from "../src/features/devices/log-retention.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { call, provisioningKeyFor, registerDevice, type TestDevice } from "./support/devices.ts";

/**
 * Logs over time (docs/logs.md): search of a device's or a fleet's stored lines by text, service
 * and device time, keyset-paged; permissions and tenant isolation; per-organization retention by
 * age and by lines per device; the device's original timestamps kept.
 */

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.now();
const T0 = NOW - 10 * DAY;

type Line = { message: string; timestamp: number; serviceId?: number | null; isSystem?: boolean };

const stored = (deviceId: number, lines: Line[]): StoredLogLine[] =>
  lines.map((l) => ({
    deviceId,
    message: l.message,
    timestamp: l.timestamp,
    createdAt: NOW,
    isSystem: l.isSystem ?? false,
    isStdErr: false,
    serviceId: l.serviceId ?? null,
  }));

type Found = { id: number; device: string; message: string; timestamp: number; createdAt: number; serviceName: string };
type Page = { lines: Found[]; next: string | null };

describe("log search", () => {
  let t: TestApp;
  const tokens: Record<string, string> = {};
  let fleetId: number;
  let otherFleetId: number;
  let a: { id: number; uuid: string };
  let b: { id: number; uuid: string };
  let foreign: { id: number; uuid: string };
  let web: number;
  let worker: number;

  const search = async (query: Record<string, string | number>, token = tokens.owner) => {
    const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
    return call(t, "GET", `/logs/v1/search?${qs}`, token);
  };
  const page = async (query: Record<string, string | number>, token = tokens.owner) => {
    const response = await search(query, token);
    expect(response.status, response.text).toBe(200);
    return response.json as unknown as Page;
  };

  beforeAll(async () => {
    t = await createTestApp({ FLOTILLA_DEVICE_LOG_LINES: "1000", FLOTILLA_DEVICE_LOG_RETENTION_DAYS: "30" });
    const owner = await t.factories.user();
    tokens.owner = owner.token;
    const org = await t.factories.organization({ name: "Search", admins: [owner.user] });
    const fleet = await t.factories.fleet(org, { name: "search-fleet" });
    const otherFleet = await t.factories.fleet(org, { name: "other-fleet" });
    fleetId = fleet.id;
    otherFleetId = otherFleet.id;
    const observer = await t.factories.user();
    await t.factories.fleetMember(observer.user, fleet, "observer");
    tokens.observer = observer.token;
    const stranger = await t.factories.user();
    tokens.stranger = stranger.token;
    const strangerOrg = await t.factories.organization({ name: "Elsewhere", admins: [stranger.user] });
    const strangerFleet = await t.factories.fleet(strangerOrg, { name: "elsewhere" });
    a = await t.factories.device(fleet, { name: "a" });
    b = await t.factories.device(fleet, { name: "b" });
    foreign = await t.factories.device(strangerFleet, { name: "foreign" });
    const { rows } = await t.db.query<{ id: number; service_name: string }>(
      `INSERT INTO service (application, service_name) VALUES ($1, 'web'), ($1, 'worker') RETURNING id, service_name`,
      [fleetId],
    );
    web = rows.find((r) => r.service_name === "web")?.id as number;
    worker = rows.find((r) => r.service_name === "worker")?.id as number;
    // 50 lines per device one minute apart, web and worker in turn; a few words to look for.
    const linesOf = (name: string) =>
      Array.from({ length: 50 }, (_, i) => ({
        message: i % 10 === 3 ? `${name}: Connection REFUSED by upstream ${i}` : `${name}: request ${i} served in 5 ms`,
        timestamp: T0 + i * 60_000,
        serviceId: i % 2 === 0 ? web : worker,
      }));
    await insertLogLines(t.db, [
      ...stored(a.id, linesOf("a")),
      ...stored(b.id, linesOf("b")),
      ...stored(foreign.id, [{ message: "foreign: connection refused", timestamp: T0 }]),
    ]);
  });
  afterAll(() => t.close());

  it("finds a device's lines by text, case-insensitively, newest first", async () => {
    const { lines, next } = await page({ device: a.uuid, q: "connection refused" });
    expect(lines.map((l) => l.message)).toEqual(
      [43, 33, 23, 13, 3].map((i) => `a: Connection REFUSED by upstream ${i}`),
    );
    expect(lines.every((l) => l.device === a.uuid)).toBe(true);
    expect(lines[0]?.timestamp).toBe(T0 + 43 * 60_000);
    expect(next).toBeNull();
  });

  it("takes LIKE wildcards in the text literally", async () => {
    expect((await page({ device: a.uuid, q: "%" })).lines).toEqual([]);
    expect((await page({ device: a.uuid, q: "request_1" })).lines).toEqual([]);
  });

  it("searches a fleet across its devices, and only its devices", async () => {
    const { lines } = await page({ fleet: fleetId, q: "REFUSED" });
    expect(lines).toHaveLength(10);
    expect(new Set(lines.map((l) => l.device))).toEqual(new Set([a.uuid, b.uuid]));
    expect(lines.some((l) => l.message.startsWith("foreign"))).toBe(false);
    const times = lines.map((l) => l.timestamp);
    expect(times).toEqual([...times].sort((x, y) => y - x));
    expect((await page({ fleet: otherFleetId, q: "REFUSED" })).lines).toEqual([]);
  });

  it("filters by service name and by device time range", async () => {
    const web1 = await page({ device: a.uuid, service: "web" });
    expect(web1.lines).toHaveLength(25);
    expect(web1.lines.every((l) => l.serviceName === "web")).toBe(true);
    const ranged = await page({
      fleet: fleetId,
      service: "worker",
      from: T0 + 10 * 60_000,
      to: new Date(T0 + 20 * 60_000).toISOString(),
    });
    // Minutes 11, 13, 15, 17, 19 of each device.
    expect(ranged.lines).toHaveLength(10);
    expect(ranged.lines.every((l) => l.timestamp >= T0 + 10 * 60_000 && l.timestamp < T0 + 20 * 60_000)).toBe(true);
    expect(ranged.lines.every((l) => l.serviceName === "worker")).toBe(true);
    expect((await page({ device: a.uuid, service: "nope" })).lines).toEqual([]);
  });

  it("pages with the next cursor, without gaps or repeats, even across equal timestamps", async () => {
    const seen: Found[] = [];
    let next: string | null = null;
    let pages = 0;
    do {
      const result: Page = await page({ fleet: fleetId, limit: 7, ...(next ? { before: next } : {}) });
      seen.push(...result.lines);
      next = result.next;
      pages += 1;
    } while (next);
    expect(seen).toHaveLength(100);
    expect(new Set(seen.map((l) => l.id)).size).toBe(100);
    expect(pages).toBe(15);
    for (let i = 1; i < seen.length; i++) {
      const [prev, cur] = [seen[i - 1] as Found, seen[i] as Found];
      expect(prev.timestamp > cur.timestamp || (prev.timestamp === cur.timestamp && prev.id > cur.id)).toBe(true);
    }
  });

  it("lets fleet readers search and hides other tenants' devices and fleets (404)", async () => {
    expect((await page({ device: a.uuid, q: "refused" }, tokens.observer)).lines).toHaveLength(5);
    expect((await page({ fleet: fleetId, q: "refused" }, tokens.observer)).lines).toHaveLength(10);
    const foreignDevice = await search({ device: foreign.uuid });
    expect(foreignDevice.status).toBe(404);
    expect(foreignDevice.code).toBe("device_not_found");
    const byStranger = await search({ fleet: fleetId }, tokens.stranger);
    expect(byStranger.status).toBe(404);
    expect((await search({ device: a.uuid }, tokens.stranger)).status).toBe(404);
    // The stranger sees their own device, but only their own lines.
    const own = await page({ device: foreign.uuid, q: "refused" }, tokens.stranger);
    expect(own.lines.map((l) => l.message)).toEqual(["foreign: connection refused"]);
    expect((await search({ device: a.uuid }, "")).status).toBe(401);
  });

  it("answers bad input with 400 and a message", async () => {
    const cases: Array<[Record<string, string | number>, RegExp]> = [
      [{}, /either device .* or fleet/],
      [{ device: a.uuid, fleet: fleetId }, /either device .* or fleet/],
      [{ device: "NOT-A-UUID" }, /device: must be a device uuid/],
      [{ fleet: "x" }, /fleet: must be an id/],
      [{ device: a.uuid, limit: 0 }, /limit: must be a whole number from 1 to 1000/],
      [{ device: a.uuid, limit: 5000 }, /limit: must be a whole number from 1 to 1000/],
      [{ device: a.uuid, from: "yesterday" }, /"from" must be milliseconds since the epoch or an ISO date/],
      [{ device: a.uuid, from: 10, to: 5 }, /"from" must be before "to"/],
      [{ device: a.uuid, before: "abc" }, /before: must be the next cursor/],
      [{ device: a.uuid, q: "x".repeat(201) }, /q: must be at most 200 characters/],
      [{ device: a.uuid, sort: "asc" }, /sort|Unrecognized/i],
    ];
    for (const [query, message] of cases) {
      const response = await search(query);
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(String(response.json?.message ?? response.text), JSON.stringify(query)).toMatch(message);
    }
  });

  it("keeps the device's original timestamps of lines sent late (offline buffer), and finds them by them", async () => {
    const key = await provisioningKeyFor(t, tokens.owner as string, fleetId);
    const device: TestDevice = await registerDevice(t, key, { id: fleetId });
    const loggedAt = Date.now() - 30_000;
    const body = [0, 1, 2].map((i) =>
      JSON.stringify({ message: `buffered while offline ${i}`, timestamp: loggedAt + i * 1000, serviceId: web }),
    );
    const response = await fetch(`${t.url}/device/v2/${device.uuid}/log-stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${device.key}`, "content-type": "application/x-ndjson" },
      body: `${body.join("\n")}\n`,
    });
    expect(response.status).toBe(201);
    await t.ctx.devices.logs.flush();
    const { lines } = await page({
      device: device.uuid,
      q: "buffered while offline",
      from: loggedAt,
      to: loggedAt + 3000,
    });
    expect(lines.map((l) => l.timestamp)).toEqual([loggedAt + 2000, loggedAt + 1000, loggedAt]);
    expect(lines.every((l) => l.createdAt > loggedAt + 20_000)).toBe(true);
    expect(lines[0]?.serviceName).toBe("web");
  });
});

describe("log retention", () => {
  let t: TestApp;
  const tokens: Record<string, string> = {};
  let orgId: number;
  let otherOrgId: number;
  let device: { id: number };
  let otherDevice: { id: number };

  const count = async (deviceId: number) => {
    const { rows } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM device_log WHERE device = $1`, [
      deviceId,
    ]);
    return rows[0]?.n ?? 0;
  };
  const limits = { maxAgeDays: 30, maxLinesPerDevice: 1000 };

  beforeAll(async () => {
    t = await createTestApp({ FLOTILLA_DEVICE_LOG_LINES: "1000", FLOTILLA_DEVICE_LOG_RETENTION_DAYS: "30" });
    const admin = await t.factories.user();
    const member = await t.factories.user();
    const stranger = await t.factories.user();
    tokens.admin = admin.token;
    tokens.member = member.token;
    tokens.stranger = stranger.token;
    const org = await t.factories.organization({ name: "Kept", admins: [admin.user], members: [member.user] });
    const otherOrg = await t.factories.organization({ name: "Other", admins: [stranger.user] });
    orgId = org.id;
    otherOrgId = otherOrg.id;
    device = await t.factories.device(await t.factories.fleet(org, { name: "kept" }));
    otherDevice = await t.factories.device(await t.factories.fleet(otherOrg, { name: "other" }));
  });
  afterAll(() => t.close());

  it("reads and sets an organization's retention; administrators only; clear 400s", async () => {
    const path = `/logs/v1/organizations/${orgId}/retention`;
    const initial = await call(t, "GET", path, tokens.member);
    expect(initial.status).toBe(200);
    expect(initial.json).toEqual({ maxAgeDays: null, maxLinesPerDevice: null, server: limits });
    const denied = await call(t, "PATCH", path, tokens.member, { maxAgeDays: 7 });
    expect(denied.status).toBe(403);
    expect((await call(t, "GET", path, tokens.stranger)).status).toBe(404);
    expect((await call(t, "PATCH", path, tokens.stranger, { maxAgeDays: 7 })).status).toBe(404);
    const bad: Array<[unknown, RegExp]> = [
      [{ maxAgeDays: 0 }, /maxAgeDays: must be a whole number of days from 1 to 30/],
      [{ maxAgeDays: 31 }, /maxAgeDays: .*from 1 to 30 \(the server's retention\)/],
      [{ maxAgeDays: 1.5 }, /maxAgeDays: must be a whole number of days/],
      [{ maxAgeDays: "7" }, /maxAgeDays: must be a whole number of days, or null/],
      [{ maxLinesPerDevice: 1001 }, /maxLinesPerDevice: .*from 1 to 1000/],
      [{ maxBytes: 5 }, /Unrecognized key|maxBytes/],
    ];
    for (const [body, message] of bad) {
      const response = await call(t, "PATCH", path, tokens.admin, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(String(response.json?.message), JSON.stringify(body)).toMatch(message);
    }
    const set = await call(t, "PATCH", path, tokens.admin, { maxAgeDays: 7, maxLinesPerDevice: 100 });
    expect(set.status).toBe(200);
    expect(set.json).toEqual({ maxAgeDays: 7, maxLinesPerDevice: 100, server: limits });
    const partly = await call(t, "PATCH", path, tokens.admin, { maxLinesPerDevice: null });
    expect(partly.json).toEqual({ maxAgeDays: 7, maxLinesPerDevice: null, server: limits });
    await call(t, "PATCH", path, tokens.admin, { maxAgeDays: null });
  });

  it("prunes by the server's age, an organization's shorter age and its lines per device, in batches", async () => {
    const now = Date.now();
    // 40 days of lines, one per 6 hours (160 lines), on both organizations' devices.
    const lines = Array.from({ length: 160 }, (_, i) => ({ message: `line ${i}`, timestamp: now - i * 6 * 3600_000 }));
    await insertLogLines(t.db, [...stored(device.id, lines), ...stored(otherDevice.id, lines)]);
    expect(await count(device.id)).toBe(160);

    // The server's 30 days: lines older than that go everywhere (a line of exactly 30 days stays).
    await runLogRetention(t.db, { ...limits, now, batch: 7 });
    expect(await count(device.id)).toBe(121);
    expect(await count(otherDevice.id)).toBe(121);

    // The organization keeps 7 days; the other organization is untouched.
    await call(t, "PATCH", `/logs/v1/organizations/${orgId}/retention`, tokens.admin, { maxAgeDays: 7 });
    await runLogRetention(t.db, { ...limits, now, batch: 7 });
    expect(await count(device.id)).toBe(29);
    expect(await count(otherDevice.id)).toBe(121);
    const { rows } = await t.db.query<{ oldest: number }>(
      `SELECT min("timestamp")::float8 AS oldest FROM device_log WHERE device = $1`,
      [device.id],
    );
    expect(rows[0]?.oldest).toBeGreaterThanOrEqual(now - 7 * 24 * 3600_000);

    // And at most 10 lines per device: the last 10 received stay (as FLOTILLA_DEVICE_LOG_LINES does).
    await call(t, "PATCH", `/logs/v1/organizations/${orgId}/retention`, tokens.admin, { maxLinesPerDevice: 10 });
    await runLogRetention(t.db, { ...limits, now, batch: 3 });
    expect(await count(device.id)).toBe(10);
    const kept = await t.db.query<{ message: string }>(`SELECT message FROM device_log WHERE device = $1 ORDER BY id`, [
      device.id,
    ]);
    expect(kept.rows.map((r) => r.message)).toEqual(Array.from({ length: 10 }, (_, i) => `line ${19 + i}`));
    expect(await count(otherDevice.id)).toBe(121);
    void otherOrgId;
  });

  it("prunes on one instance at a time (the advisory lock)", async () => {
    const now = Date.now();
    await insertLogLines(t.db, stored(otherDevice.id, [{ message: "old", timestamp: now - 100 * 24 * 3600_000 }]));
    // Another session holds the lock: nothing is pruned.
    if (t.db.kind === "postgres") {
      const hold = t.db.transaction(async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock($1)", [0x6c6f6773]);
        expect(await runLogRetention(t.db, { ...limits, now })).toBe(0);
      });
      await hold;
    }
    expect(await runLogRetention(t.db, { ...limits, now })).toBeGreaterThanOrEqual(1);
    const old = await t.db.query(`SELECT 1 FROM device_log WHERE message = 'old'`);
    expect(old.rows).toEqual([]);
  });
});
