import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHeartbeat, stateAfter } from "../src/features/devices/heartbeat.ts";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Heartbeat (docs/device-protocol.md "Heartbeat") with a fake clock: online on a call, timeout
 * after 1.5 × the poll interval, offline 15 s later; only changes reach the database.
 */
let t: TestApp;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;

beforeAll(async () => {
  t = await createTestApp();
  const org = await t.factories.organization({ name: "Beats" });
  fleet = await t.factories.fleet(org, { name: "beat-fleet" });
});
afterAll(() => t.close());

async function stateOf(id: number) {
  const { rows } = await t.db.query<{
    api_heartbeat_state: string;
    changed_api_heartbeat_state_on__date: Date | null;
    last_connectivity_event: Date | null;
  }>(
    "SELECT api_heartbeat_state, changed_api_heartbeat_state_on__date, last_connectivity_event FROM device WHERE id = $1",
    [id],
  );
  const row = rows[0];
  return {
    state: row?.api_heartbeat_state,
    changedAt: row?.changed_api_heartbeat_state_on__date
      ? new Date(row.changed_api_heartbeat_state_on__date).getTime()
      : null,
    lastSeen: row?.last_connectivity_event ? new Date(row.last_connectivity_event).getTime() : null,
  };
}

describe("heartbeat", () => {
  it("computes the state from the time since the last call", () => {
    expect(stateAfter(0, 60_000)).toBe("online");
    expect(stateAfter(89_999, 60_000)).toBe("online");
    expect(stateAfter(90_000, 60_000)).toBe("timeout");
    expect(stateAfter(104_999, 60_000)).toBe("timeout");
    expect(stateAfter(105_000, 60_000)).toBe("offline");
  });

  it("goes online → timeout → offline → online with a fake clock, writing only changes", async () => {
    const device = await t.factories.device(fleet);
    let now = Date.parse("2026-01-01T00:00:00Z");
    const clock = { now: () => now };
    const writes: string[] = [];
    const db = {
      query: ((text: string, params?: unknown[]) => {
        // The state change is an UPDATE (in a WITH that also queues webhook deliveries).
        if (/^\s*(WITH changed AS \(\s*)?UPDATE/.test(text)) writes.push(String(params?.[0]));
        return t.db.query(text, params);
      }) as typeof t.db.query,
    };
    const heartbeat = createHeartbeat({ db, clock, sweepMs: 0, lastSeenFlushMs: 0 });
    expect((await stateOf(device.id)).state).toBe("unknown");

    heartbeat.seen(device.id, 10_000);
    await heartbeat.sweep();
    expect(await stateOf(device.id)).toEqual({ state: "online", changedAt: now, lastSeen: now });
    const onlineSince = now;

    // Calls within the window change nothing and write nothing.
    now += 5_000;
    heartbeat.seen(device.id, 10_000);
    const lastCall = now;
    await heartbeat.sweep();
    now += 14_999;
    await heartbeat.sweep();
    expect(writes).toEqual(["online"]);
    expect((await stateOf(device.id)).changedAt).toBe(onlineSince);

    now = lastCall + 15_000;
    await heartbeat.sweep();
    expect(await stateOf(device.id)).toEqual({ state: "timeout", changedAt: now, lastSeen: lastCall });

    now = lastCall + 15_000 + 14_999;
    await heartbeat.sweep();
    expect((await stateOf(device.id)).state).toBe("timeout");
    now = lastCall + 30_000;
    await heartbeat.sweep();
    expect(await stateOf(device.id)).toEqual({ state: "offline", changedAt: now, lastSeen: lastCall });
    await heartbeat.sweep();
    expect(writes).toEqual(["online", "timeout", "offline"]);

    now += 60_000;
    heartbeat.seen(device.id);
    await heartbeat.sweep();
    expect(await stateOf(device.id)).toEqual({ state: "online", changedAt: now, lastSeen: now });
    await heartbeat.close();
  });

  it("writes a state change whose write failed with the next sweep, offline ones too", async () => {
    const device = await t.factories.device(fleet);
    let now = Date.parse("2026-02-01T00:00:00Z");
    let failStateWrites = false;
    const db = {
      query: ((text: string, params?: unknown[]) => {
        if (failStateWrites && /^\s*WITH changed AS/.test(text)) return Promise.reject(new Error("connection lost"));
        return t.db.query(text, params);
      }) as typeof t.db.query,
    };
    const heartbeat = createHeartbeat({ db, clock: { now: () => now }, sweepMs: 0, lastSeenFlushMs: 0 });
    heartbeat.seen(device.id, 10_000);
    failStateWrites = true;
    await expect(heartbeat.sweep()).rejects.toThrow("connection lost");
    expect((await stateOf(device.id)).state).toBe("unknown");
    failStateWrites = false;
    await heartbeat.sweep();
    expect((await stateOf(device.id)).state).toBe("online");

    // Offline: the device is forgotten once written, not before.
    now += 30_000;
    failStateWrites = true;
    await expect(heartbeat.sweep()).rejects.toThrow("connection lost");
    failStateWrites = false;
    await heartbeat.sweep();
    expect((await stateOf(device.id)).state).toBe("offline");
    await heartbeat.close();
  });

  it("writes last-seen times of online devices in batches", async () => {
    const a = await t.factories.device(fleet);
    const b = await t.factories.device(fleet);
    let now = Date.parse("2026-01-02T00:00:00Z");
    const heartbeat = createHeartbeat({ db: t.db, clock: { now: () => now }, sweepMs: 0, lastSeenFlushMs: 0 });
    heartbeat.seen(a.id);
    heartbeat.seen(b.id);
    await heartbeat.sweep();
    now += 30_000;
    heartbeat.seen(a.id);
    heartbeat.seen(b.id);
    expect((await stateOf(a.id)).lastSeen).toBe(now - 30_000);
    await heartbeat.flushLastSeen();
    expect((await stateOf(a.id)).lastSeen).toBe(now);
    expect((await stateOf(b.id)).lastSeen).toBe(now);
    await heartbeat.close();
  });

  it("uses the poll interval of the device's target state", async () => {
    const device = await t.factories.device(fleet);
    let now = Date.parse("2026-01-03T00:00:00Z");
    const heartbeat = createHeartbeat({ db: t.db, clock: { now: () => now }, sweepMs: 0, lastSeenFlushMs: 0 });
    heartbeat.seen(device.id, 60_000);
    // A later call without an interval (a state report) keeps the known one.
    heartbeat.seen(device.id);
    await heartbeat.sweep();
    now += 89_000;
    await heartbeat.sweep();
    expect((await stateOf(device.id)).state).toBe("online");
    now += 1_000;
    await heartbeat.sweep();
    expect((await stateOf(device.id)).state).toBe("timeout");
    await heartbeat.close();
  });
});
