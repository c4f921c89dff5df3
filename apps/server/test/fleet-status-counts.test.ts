import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { overallStatusSql } from "../src/model/devices.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { call } from "./support/devices.ts";

/**
 * The per-fleet status counts (migration 0032) are kept by triggers as devices change: after
 * inserts, every kind of update a status depends on, moves between fleets and deletes, they equal
 * a count of the devices by `overallStatusSql`, and the fleet's summary fields read them.
 */
let t: TestApp;
let token: string;
const fleets: { id: number; is_for__device_type: number }[] = [];

const counted = async () =>
  (
    await t.db.query<{ application: number; status: string; n: number }>(
      `SELECT application, status, n FROM "fleet_status_count" WHERE n <> 0 ORDER BY 1, 2`,
    )
  ).rows;
const recount = async () =>
  (
    await t.db.query<{ application: number; status: string; n: number }>(
      `SELECT "belongs_to__application" AS application, ${overallStatusSql("d")} AS status, count(*)::int AS n
         FROM "device" d GROUP BY 1, 2 ORDER BY 1, 2`,
    )
  ).rows;

beforeAll(async () => {
  t = await createTestApp();
  const owner = await t.factories.user();
  token = owner.token;
  const org = await t.factories.organization({ admins: [owner.user] });
  fleets.push(await t.factories.fleet(org, { name: "counted-a" }), await t.factories.fleet(org, { name: "counted-b" }));
});
afterAll(() => t?.close());

describe("per-fleet status counts", () => {
  it("follow inserts, status changes, moves and deletes", async () => {
    const [a, b] = fleets as [(typeof fleets)[0], (typeof fleets)[0]];
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push((await t.factories.device(i < 4 ? a : b)).id);
    expect(await counted()).toEqual(await recount());

    // What reports, heartbeats and the VPN write, one statement over several devices.
    await t.db.query(
      `UPDATE "device" SET last_connectivity_event = now(), api_heartbeat_state = 'online', is_connected_to_vpn = true
        WHERE id = ANY($1)`,
      [ids.slice(0, 5)],
    );
    await t.db.query(`UPDATE "device" SET update_status = 'downloading' WHERE id = $1`, [ids[1]]);
    await t.db.query(`UPDATE "device" SET api_heartbeat_state = 'offline', is_connected_to_vpn = false WHERE id = $1`, [
      ids[2],
    ]);
    await t.db.query(`UPDATE "device" SET is_connected_to_vpn = false WHERE id = $1`, [ids[3]]);
    await t.db.query(`UPDATE "device" SET is_active = false WHERE id = $1`, [ids[5]]);
    // A change that leaves every status as it was writes nothing and keeps the counts.
    await t.db.query(`UPDATE "device" SET cpu_usage = 12 WHERE id = ANY($1)`, [ids]);
    expect(await counted()).toEqual(await recount());

    // A move to the other fleet, through the data API, and a delete.
    const moved = await call(t, "PATCH", `/v7/device(${ids[0]})`, token, { belongs_to__application: b.id });
    expect(moved.status).toBe(200);
    await t.db.query(`DELETE FROM "device" WHERE id = $1`, [ids[4]]);
    expect(await counted()).toEqual(await recount());

    const summary = await call(
      t,
      "GET",
      `/v7/application(${a.id})?$select=total_devices,device_count_grouped_by_status`,
      token,
    );
    expect((summary.json as { d: unknown[] }).d[0]).toEqual({
      total_devices: 3,
      device_count_grouped_by_status: { disconnected: 1, "reduced-functionality": 1, updating: 1 },
    });
  });
});
