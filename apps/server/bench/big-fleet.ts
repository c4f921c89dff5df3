// `npm run bench:big-fleet -w @flotilla/server`: ONE fleet of 100,000 devices (issue [scale]).
//
// Creates a throwaway database next to DATABASE_URL (as data-api.ts does), seeds one organization,
// its administrator and one fleet of 100,000 devices (a third tagged) with INSERT … SELECT
// generate_series, boots the API on 127.0.0.1 and times, as the administrator:
//   (a) the device list page the dashboard sends (50 rows with its $select/$expand, and the
//       $count of the same filter, in parallel): unfiltered by name, then with a free-text filter
//       and a sort on last seen;
//   (b) the fleet summary counts (total_devices and device_count_grouped_by_status);
//   (c) "select all that match" over 10,000 devices: their ids in keyset pages of 500
//       ($select=id), and a tag written to all 10,000 in pages of 500 as the dashboard does it
//       (one GET of the page's existing tags, one PATCH over them, the new tags in one $batch);
//       for comparison, a pin written as one PATCH over `id in (…)` per page.
// (a) and (b) run as PostgreSQL ships and with jit = off; (c) runs once, with jit = off.
// BENCH_QUICK=1 (or BENCH_REQUESTS=20) for a quick run (a and b). The database is dropped at the end.
import crypto from "node:crypto";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import pino from "pino";
import { enc, LIST_EXPAND, LIST_SELECT } from "../../../scripts/lib/dashboard-queries.ts";
import { buildApi, buildContext } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { openPostgres } from "../src/db/connection.ts";
import { wrapDriver } from "../src/db/index.ts";
import { migrate } from "../src/db/migrate.ts";
import { findUserById } from "../src/features/users/service.ts";
import { admin, withDatabase } from "./support.ts";

const DEVICES = 100_000;
const SELECTED = 10_000;
const PAGE = 500;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? (process.env.BENCH_QUICK === "1" ? 20 : 200));
const WARMUP = Math.ceil(REQUESTS / 10);
const database = `flotilla_bench_${crypto.randomBytes(4).toString("hex")}`;
const benchUrl = withDatabase(database);
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;

async function seed(client: pg.Client) {
  const q = (text: string) => client.query(text);
  await q(`INSERT INTO organization (name, handle) VALUES ('Big fleet', 'big')`);
  await q(`WITH a AS (INSERT INTO actor (created_at) VALUES (now()) RETURNING id)
           INSERT INTO "user" (actor, username, email, is_verified) SELECT id, 'owner', 'owner@bench.test', true FROM a`);
  await q(`INSERT INTO organization_membership ("user", is_member_of__organization, organization_membership_role)
           SELECT u.id, o.id, r.id FROM "user" u, organization o, organization_membership_role r
            WHERE u.username = 'owner' AND o.handle = 'big' AND r.name = 'administrator'`);
  // A paid plan: on the free one all but 10 devices are frozen and take no changes.
  await q(`INSERT INTO subscription (is_for__organization, is_for__plan, starts_on__date)
           SELECT o.id, (SELECT id FROM plan WHERE billing_code IS DISTINCT FROM 'free' ORDER BY id LIMIT 1), now() - interval '1 day'
             FROM organization o WHERE o.handle = 'big'`);
  await q(`WITH a AS (INSERT INTO actor (created_at) VALUES (now()) RETURNING id)
           INSERT INTO application (actor, uuid, organization, app_name, slug, is_for__device_type, application_type)
           SELECT a.id, md5('big'), o.id, 'big-fleet', 'big/big-fleet',
                  (SELECT id FROM device_type WHERE slug = 'raspberrypi4-64'),
                  (SELECT id FROM application_type WHERE slug = 'microservices')
             FROM a, organization o WHERE o.handle = 'big'`);
  await q(`INSERT INTO release (belongs_to__application, commit, status, is_final, is_finalized_at__date)
           SELECT id, md5('release'), 'success', true, now() FROM application WHERE slug = 'big/big-fleet'`);
  await q(
    `UPDATE application a SET should_be_running__release = r.id FROM release r WHERE r.belongs_to__application = a.id`,
  );
  // The statuses as in data-api.ts: 60 % operational, the rest over the six others.
  await q(`WITH a AS (INSERT INTO actor (created_at) SELECT now() FROM generate_series(1, ${DEVICES}) RETURNING id),
                an AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM a)
           INSERT INTO device (actor, uuid, device_name, is_of__device_type, belongs_to__application, is_active,
                               api_heartbeat_state, is_connected_to_vpn, last_connectivity_event, provisioning_state,
                               update_status, download_progress, is_running__release, os_version, supervisor_version,
                               ip_address, memory_usage, memory_total, cpu_usage)
           SELECT an.id, md5('device' || an.n), 'device-' || substr(md5('name' || an.n), 1, 10),
                  (SELECT id FROM device_type WHERE slug = 'raspberrypi4-64'), f.id, b <> 18,
                  CASE WHEN b IN (12, 13, 14) THEN 'offline' ELSE 'online' END, b NOT IN (12, 13, 14, 17),
                  CASE WHEN b = 16 THEN NULL ELSE now() - (an.n % 1000) * interval '1 minute' END,
                  CASE WHEN b = 19 THEN 'Post-Provisioning' END,
                  CASE WHEN b = 15 THEN 'downloading' ELSE 'done' END, CASE WHEN b = 15 THEN 40 END,
                  f.should_be_running__release, 'balenaOS 5.3.' || (an.n % 20), '16.' || (an.n % 9) || '.0',
                  '10.0.' || (an.n % 250) || '.' || (an.n % 200), 1000 + an.n % 3000, 4096, an.n % 100
             FROM an JOIN application f ON f.slug = 'big/big-fleet' CROSS JOIN LATERAL (SELECT abs(hashtext(md5('device' || an.n))) % 20 AS b) s`);
  await q(`INSERT INTO device_tag (device, tag_key, value)
           SELECT id, k, 'value-' || (id % 97) FROM device, unnest(ARRAY['location', 'floor']) k WHERE id % 3 = 0`);
  await q("VACUUM ANALYZE");
}

/** The dashboard's free-text filter (deviceListFilter): name, uuid, status, OS, IP and tags. */
function listFilter(fleet: number, term: string) {
  if (!term) return `belongs_to__application eq ${fleet}`;
  const has = (field: string) => `contains(tolower(${field}),'${term}')`;
  const fields = ["device_name", "uuid", "overall_status", "os_version", "ip_address"].map(has).join(" or ");
  return `belongs_to__application eq ${fleet} and (${fields} or device_tag/any(t:${has("t/tag_key")} or ${has("t/value")}))`;
}

function listPage(fleet: number, term: string, orderby: string) {
  const filter = listFilter(fleet, term);
  return [
    `/v7/device?$select=${LIST_SELECT}&$filter=${enc(filter)}&$expand=${enc(LIST_EXPAND)}&$orderby=${enc(orderby)}&$top=50&$skip=0`,
    `/v7/device/$count?$filter=${enc(filter)}`,
  ];
}

const started = performance.now();
console.log(`Big-fleet benchmark on ${database} (${os.cpus().length} cores, Node ${process.version})`);
await admin(`CREATE DATABASE ${database}`);
const client = new pg.Client({ connectionString: benchUrl });
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-bench-"));
try {
  const driver = await openPostgres(benchUrl, 1);
  await migrate(driver);
  await client.connect();
  let step = performance.now();
  await seed(client);
  console.log(`seeded one fleet of ${DEVICES} devices in ${seconds(step)}`);
  const userId = Number(
    (await client.query<{ id: number }>(`SELECT id FROM "user" WHERE username = 'owner'`)).rows[0]?.id,
  );
  const fleet = Number(
    (await client.query<{ id: number }>(`SELECT id FROM application WHERE slug = 'big/big-fleet'`)).rows[0]?.id,
  );
  const owner = await findUserById(wrapDriver(driver).orm, userId);
  await driver.close();
  if (!owner) throw new Error("bench: the seeded user is missing");

  /** Boots the API, times (a) and (b), and with `writes` runs (c); new connections take the database's settings. */
  const pass = async (scenario: string, writes: boolean) => {
    const config = loadConfig({
      DATABASE_URL: benchUrl,
      FLOTILLA_DATA_DIR: dataDir,
      FLOTILLA_CAPTCHA: "off",
      FLOTILLA_RATE_LIMIT: "10000000",
      LOG_LEVEL: "silent",
    });
    const db = wrapDriver(await openPostgres(benchUrl, config.databasePoolSize));
    const ctx = await buildContext(config, db);
    const app = await buildApi(ctx, pino({ level: "silent" }));
    await app.listen({ port: 0, host: "127.0.0.1" });
    const api = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const token = await ctx.tokens.start(owner);
    const send = async (method: string, urlPath: string, body?: unknown) => {
      const response = await fetch(`${api}${urlPath}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok)
        throw new Error(`bench: ${method} ${urlPath.slice(0, 120)} → ${response.status} ${text.slice(0, 200)}`);
      return text ? (JSON.parse(text) as unknown) : undefined;
    };
    const get = <T>(urlPath: string) => send("GET", urlPath) as Promise<T>;

    try {
      const timed: Array<{ label: string; paths: string[] }> = [
        {
          label: "(a) list page, no text filter, sorted by name",
          paths: listPage(fleet, "", "device_name asc,id asc"),
        },
        {
          label: "(a) list page, text filter 'value-1', sorted by last seen",
          paths: listPage(fleet, "value-1", "last_connectivity_event desc,id asc"),
        },
        {
          label: "(a) list page, text filter '5.3.7', sorted by status",
          paths: listPage(fleet, "5.3.7", "overall_status asc,id asc"),
        },
        {
          label: "(b) fleet summary counts",
          paths: [`/v7/application(${fleet})?$select=id,app_name,total_devices,device_count_grouped_by_status`],
        },
      ];
      console.log(`\n${scenario}`);
      for (const query of timed) {
        // The page is its requests in parallel; each request's own time is printed too.
        const parts: number[][] = query.paths.map(() => []);
        const once = (record: boolean) =>
          Promise.all(
            query.paths.map(async (p, index) => {
              const start = performance.now();
              await get<unknown>(p);
              if (record) parts[index]?.push(performance.now() - start);
            }),
          );
        for (let i = 0; i < WARMUP; i++) await once(false);
        const latencies: number[] = [];
        for (let i = 0; i < REQUESTS; i++) {
          const start = performance.now();
          await once(true);
          latencies.push(performance.now() - start);
        }
        const line = (label: string, values: number[]) => {
          const sorted = [...values].sort((a, b) => a - b);
          console.log(
            `  ${label.padEnd(62)} p50 ${percentile(sorted, 0.5).toFixed(1).padStart(7)} ms  p95 ${percentile(sorted, 0.95).toFixed(1).padStart(7)} ms`,
          );
        };
        line(query.label, latencies);
        if (parts.length > 1) {
          for (const [index, values] of parts.entries()) line(`    ${index === 0 ? "rows" : "$count"} alone`, values);
        }
      }

      if (!writes) return;
      // (c) The first 10,000 devices of the fleet, as the dashboard's run pages them (select-all.ts).
      const idPage = async (after: number | undefined) => {
        const filter = `belongs_to__application eq ${fleet}${after === undefined ? "" : ` and id gt ${after}`}`;
        const rows = await get<{ d: Array<{ id: number }> }>(
          `/v7/device?$select=id&$filter=${enc(filter)}&$orderby=${enc("id asc")}&$top=${PAGE}`,
        );
        return rows.d.map((row) => row.id);
      };
      const pages: number[][] = [];
      step = performance.now();
      let after: number | undefined;
      while (pages.length * PAGE < SELECTED) {
        const ids = await idPage(after);
        pages.push(ids);
        after = ids.at(-1);
      }
      const fetchMs = performance.now() - step;
      const inIds = (ids: number[]) => `id in (${ids.join(",")})`;
      const tagPage = async (ids: number[]) => {
        const where = (devices: number[]) => `device in (${devices.join(",")}) and tag_key eq 'location'`;
        const existing = await get<{ d: Array<{ device: { __id: number } }> }>(
          `/v7/device_tag?$select=device&$filter=${enc(where(ids))}`,
        );
        const has = new Set(existing.d.map((row) => row.device.__id));
        const update = ids.filter((id) => has.has(id));
        const create = ids.filter((id) => !has.has(id));
        if (update.length > 0) await send("PATCH", `/v7/device_tag?$filter=${enc(where(update))}`, { value: "hall" });
        // The page's new tags in one $batch, one atomicity group (select-all.ts newTagsBatch).
        if (create.length > 0) {
          const answer = (await send("POST", "/v7/$batch", {
            requests: create.map((device) => ({
              id: String(device),
              method: "POST",
              url: "device_tag",
              body: { device, tag_key: "location", value: "hall" },
              atomicityGroup: "new-tags",
            })),
          })) as { responses: Array<{ status: number; body: unknown }> };
          const refused = answer.responses.find((response) => response.status !== 201);
          if (refused) throw new Error(`bench: $batch of new tags → ${refused.status} ${String(refused.body)}`);
        }
      };
      step = performance.now();
      for (const ids of pages) await tagPage(ids);
      const tagMs = performance.now() - step;
      const release = Number(
        (await client.query<{ id: number }>(`SELECT id FROM release WHERE commit = md5('release')`)).rows[0]?.id,
      );
      step = performance.now();
      for (const ids of pages) {
        await send("PATCH", `/v7/device?$filter=${enc(inIds(ids))}`, { is_pinned_on__release: release });
      }
      const pinMs = performance.now() - step;
      const { rows } = await client.query<{ tagged: number; pinned: number }>(
        `SELECT (SELECT count(*)::int FROM device_tag WHERE tag_key = 'location' AND value = 'hall') AS tagged,
              (SELECT count(*)::int FROM device WHERE is_pinned_on__release IS NOT NULL) AS pinned`,
      );
      const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
      console.log(`  (c) ${SELECTED} ids in ${pages.length} pages of ${PAGE}: ${s(fetchMs)}`);
      console.log(`  (c) tag on ${SELECTED} devices (${rows[0]?.tagged} tagged), pages of ${PAGE}: ${s(tagMs)}`);
      console.log(`  (c) total, ids and tag: ${s(fetchMs + tagMs)}`);
      console.log(`  (c) pin of ${SELECTED} devices (${rows[0]?.pinned} pinned), one PATCH per page: ${s(pinMs)}`);
    } finally {
      await app.close();
      await db.close();
    }
  };
  await pass("as PostgreSQL ships (jit = on)", false);
  // JIT compiles plans whose estimated cost is high, which a fleet of 100,000 devices reaches.
  await client.query(`ALTER DATABASE ${database} SET jit = off`);
  await pass("with jit = off (recommended, see the Data API section)", true);
  console.log(`\ndone in ${seconds(started)}`);
} finally {
  await client.end().catch(() => undefined);
  fs.rmSync(dataDir, { recursive: true, force: true });
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
}
