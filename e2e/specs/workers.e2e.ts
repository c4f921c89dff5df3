import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEMO_EMAIL,
  DEMO_PASSWORD,
  freshDatabaseUrl,
  type RunningFlotilla,
  startFlotilla,
} from "../support/flotilla.ts";

/**
 * One worker per core (issue performance-2): with PostgreSQL and Redis the server runs
 * FLOTILLA_WORKERS processes on the same ports. The demo's simulated devices connect to whichever
 * worker takes their socket; an action sent to any worker reaches every device (the relay crosses
 * workers through Redis); a worker killed with kill -9 is replaced and its devices reconnect.
 */
describe("several workers on one instance", () => {
  let flotilla: RunningFlotilla;
  let db: pg.Client;
  let token = "";

  beforeAll(async () => {
    const databaseUrl = await freshDatabaseUrl();
    flotilla = await startFlotilla({
      DATABASE_URL: databaseUrl,
      REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      FLOTILLA_WORKERS: "2",
      FLOTILLA_DEMO_DEVICES: "6",
    });
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const login = await fetch(`${flotilla.apiUrl}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: DEMO_EMAIL, password: DEMO_PASSWORD }),
    });
    token = await login.text();
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await flotilla?.stop();
  });

  const connected = async () =>
    Number((await db.query(`SELECT count(*) AS n FROM "device" WHERE is_connected_to_vpn`)).rows[0]?.n);
  const blinkAll = async () => {
    const { rows } = await db.query<{ uuid: string }>(`SELECT uuid FROM "device" ORDER BY id`);
    return Promise.all(
      rows.map(async ({ uuid }) => {
        const response = await fetch(`${flotilla.apiUrl}/supervisor/v1/blink`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ uuid }),
        });
        return response.status;
      }),
    );
  };
  const workerPid = (index: number) => {
    const started = [...flotilla.output().matchAll(new RegExp(`worker ${index} started \\(process (\\d+)\\)`, "g"))];
    return Number(started.at(-1)?.[1]);
  };

  it("starts two workers and answers device actions from either", async () => {
    expect(flotilla.output()).toContain("with 2 workers");
    await expect.poll(connected, { timeout: 60_000, interval: 500 }).toBe(6);
    // Twelve requests, on whichever worker accepts their connection (each worker accepts its own):
    // each reaches a device wherever its socket is.
    expect([...(await blinkAll()), ...(await blinkAll())]).toEqual(Array(12).fill(200));
  }, 90_000);

  it("replaces a worker killed with kill -9, and its devices reconnect", async () => {
    const pid = workerPid(1);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, "SIGKILL");
    await expect
      .poll(() => flotilla.output().includes(`worker 1 (process ${pid}) ended (SIGKILL); starting another`), {
        timeout: 10_000,
      })
      .toBe(true);
    await expect.poll(() => workerPid(1) !== pid, { timeout: 10_000 }).toBe(true);
    await expect.poll(connected, { timeout: 60_000, interval: 500 }).toBe(6);
    await expect
      .poll(async () => (await blinkAll()).every((status) => status === 200), { timeout: 30_000, interval: 1000 })
      .toBe(true);
    const response = await fetch(`${flotilla.apiUrl}/ping`);
    expect(response.status).toBe(200);
  }, 120_000);
});
