// `npm run bench -w @flotilla/server`: the data API (/v7) on PostgreSQL with 100,000 devices.
//
// Creates a throwaway database `flotilla_bench_<random>` next to DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/postgres, which must be on this machine), migrates it, seeds
// 20 organizations, 200 fleets and 100,000 devices (a third of them tagged) with plain
// INSERT … SELECT generate_series, boots the API on 127.0.0.1 as the tests do, and measures
// latency (p50/p95, one request at a time) of the dashboard's heavy reads:
//   (a) a device list page as an organization member with a role on the fleet,
//   (b) the fleet list with per-status device counts,
//   (c) a fleet's device count.
// It measures each scenario below on the same data: without the indexes of INDEX_MIGRATION (dropped
// first), with them, and with them and PostgreSQL's JIT off. The database is dropped at the end.
//   --explain   also prints EXPLAIN (ANALYZE, BUFFERS) of each query as the engine compiles it
//   --keep      leaves the database in place (its name is printed) for manual EXPLAIN sessions
//   BENCH_REQUESTS=20 for a quick run
// Figures go into docs/benchmarks.md by hand, with the machine they were taken on.
import crypto from "node:crypto";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import pino from "pino";
import { buildApi, buildContext } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { openPostgres } from "../src/db/connection.ts";
import { wrapDriver } from "../src/db/index.ts";
import { migrate, readMigrations } from "../src/db/migrate.ts";
import { permissionsForUser } from "../src/features/data-api/permissions.ts";
import { findUserById, type User } from "../src/features/users/service.ts";
import { model } from "../src/model/index.ts";
import { compileRead, createPermissions, parseODataUrl } from "../src/odata/index.ts";
import { admin, withDatabase } from "./support.ts";

const ORGANIZATIONS = 20;
const FLEETS = 200;
const DEVICES = 100_000;
/** Requests per query (BENCH_REQUESTS to try things quickly), after a warm-up of a tenth as many. */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const WARMUP = Math.ceil(REQUESTS / 10);
/** The migration whose indexes the "before" scenario drops. */
const INDEX_MIGRATION = "0007_data_api_indexes";

const args = new Set(process.argv.slice(2));
const database = `flotilla_bench_${crypto.randomBytes(4).toString("hex")}`;
const benchUrl = withDatabase(database);

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

/** The statuses the dashboard counts per fleet (spec 2 §3), as the model's overall_status computes them. */
const STATUSES = [
  "operational",
  "reduced-functionality",
  "configuring",
  "updating",
  "disconnected",
  "post-provisioning",
  "inactive",
] as const;

/**
 * Fleet sizes with a long tail, as fleet consoles see them: fleet k holds a share proportional to
 * 1/(k+1), so the largest fleet has about 17,000 devices, the median one about 170.
 */
function fleetSizes(): number[] {
  const weights = Array.from({ length: FLEETS }, (_, k) => 1 / (k + 1));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const sizes = weights.map((weight) => Math.floor((DEVICES * weight) / total));
  sizes[0] = (sizes[0] ?? 0) + DEVICES - sizes.reduce((sum, size) => sum + size, 0);
  return sizes;
}

async function seed(client: pg.Client) {
  const q = (text: string, values: unknown[] = []) => client.query(text, values);
  await q(`INSERT INTO organization (name, handle)
           SELECT 'Organization ' || n, 'org-' || n FROM generate_series(0, ${ORGANIZATIONS - 1}) n`);
  // Five people per organization: an administrator and four members.
  await q(`WITH a AS (INSERT INTO actor (created_at) SELECT now() FROM generate_series(1, ${ORGANIZATIONS * 5}) RETURNING id)
           INSERT INTO "user" (actor, username, email, is_verified)
           SELECT id, 'person' || id, 'person' || id || '@bench.test', true FROM a`);
  await q(`INSERT INTO organization_membership ("user", is_member_of__organization, organization_membership_role)
           SELECT u.id, o.id, r.id
             FROM (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM "user") u
             JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM organization) o ON o.n = u.n / 5
             JOIN organization_membership_role r ON r.name = CASE WHEN u.n % 5 = 0 THEN 'administrator' ELSE 'member' END`);
  // Fleet k belongs to organization k mod 20: every organization has large and small fleets.
  await q(`WITH a AS (INSERT INTO actor (created_at) SELECT now() FROM generate_series(1, ${FLEETS}) RETURNING id),
                n AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM a),
                o AS (SELECT id, handle, row_number() OVER (ORDER BY id) - 1 AS n FROM organization)
           INSERT INTO application (actor, uuid, organization, app_name, slug, is_for__device_type, application_type)
           SELECT n.id, md5('fleet' || n.n), o.id, 'fleet-' || lpad(n.n::text, 3, '0'), o.handle || '/fleet-' || lpad(n.n::text, 3, '0'),
                  (SELECT id FROM device_type WHERE slug = 'raspberrypi4-64'),
                  (SELECT id FROM application_type WHERE slug = 'microservices')
             FROM n JOIN o ON o.n = n.n % ${ORGANIZATIONS} ORDER BY n.n`);
  // Member j of an organization holds a role on its fleets j, j+4, j+8 (observer … developer in turn).
  await q(`INSERT INTO user_application_membership ("user", is_member_of__application, application_membership_role)
           SELECT m."user", f.id, (SELECT id FROM application_membership_role ORDER BY id OFFSET (m.j + f.p) % 5 LIMIT 1)
             FROM (SELECT om."user", om.is_member_of__organization AS org,
                          row_number() OVER (PARTITION BY om.is_member_of__organization ORDER BY om."user") - 1 AS j
                     FROM organization_membership om
                     JOIN organization_membership_role r ON r.id = om.organization_membership_role AND r.name = 'member') m
             JOIN (SELECT id, organization, row_number() OVER (PARTITION BY organization ORDER BY id) - 1 AS p FROM application) f
               ON f.organization = m.org AND f.p % 4 = m.j`);
  await q(`INSERT INTO release (belongs_to__application, commit, status, is_final, is_finalized_at__date)
           SELECT id, md5('release' || id), 'success', true, now() FROM application`);
  await q(
    `UPDATE application a SET should_be_running__release = r.id FROM release r WHERE r.belongs_to__application = a.id`,
  );
  // Devices in the order they registered (fleets interleaved), with every overall status:
  // 60 % operational, 15 % disconnected, 5 % each updating, configuring, reduced functionality,
  // inactive and post-provisioning.
  const started = performance.now();
  await q(
    `WITH f AS (SELECT id, should_be_running__release AS release, row_number() OVER (ORDER BY id) AS k FROM application),
          d AS (SELECT f.id AS fleet, f.release, md5(f.id || '-' || g) AS h
                  FROM unnest($1::int[]) WITH ORDINALITY AS s(size, k) JOIN f USING (k), generate_series(1, s.size) g),
          o AS (SELECT d.*, row_number() OVER (ORDER BY h) AS n, abs(hashtext(h)) % 20 AS b FROM d),
          a AS (INSERT INTO actor (created_at) SELECT now() FROM generate_series(1, ${DEVICES}) RETURNING id),
          an AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM a)
     INSERT INTO device (actor, uuid, device_name, is_of__device_type, belongs_to__application, is_active,
                         api_heartbeat_state, is_connected_to_vpn, last_connectivity_event, provisioning_state,
                         update_status, download_progress, is_running__release, os_version, supervisor_version,
                         ip_address, memory_usage, memory_total, cpu_usage)
     SELECT an.id, o.h, 'device-' || substr(md5('name' || o.h), 1, 10),
            (SELECT id FROM device_type WHERE slug = CASE WHEN o.n % 7 = 0 THEN 'raspberrypi3' ELSE 'raspberrypi4-64' END),
            o.fleet, o.b <> 18,
            CASE WHEN o.b IN (12, 13, 14) THEN 'offline' ELSE 'online' END,
            o.b NOT IN (12, 13, 14, 17),
            CASE WHEN o.b = 16 THEN NULL ELSE now() - (o.n % 1000) * interval '1 minute' END,
            CASE WHEN o.b = 19 THEN 'Post-Provisioning' END,
            CASE WHEN o.b = 15 THEN 'downloading' ELSE 'done' END,
            CASE WHEN o.b = 15 THEN 40 END,
            o.release, 'balenaOS 5.3.' || (o.n % 20), '16.' || (o.n % 9) || '.0',
            '10.0.' || (o.n % 250) || '.' || (o.n % 200), 1000 + o.n % 3000, 4096, o.n % 100
       FROM o JOIN an USING (n) ORDER BY o.n`,
    [fleetSizes()],
  );
  // A third of the devices carry two tags, a tenth a variable.
  await q(`INSERT INTO device_tag (device, tag_key, value)
           SELECT id, k, 'value-' || (id % 97) FROM device, unnest(ARRAY['location', 'floor']) k WHERE id % 3 = 0`);
  await q(`INSERT INTO device_environment_variable (device, name, value)
           SELECT id, 'MODE', 'debug' FROM device WHERE id % 10 = 0`);
  console.log(`  devices, tags and variables inserted in ${seconds(started)}`);
  await q("VACUUM ANALYZE");
}

/** The CREATE INDEX statements of INDEX_MIGRATION, with the names they create. */
function migrationIndexes(): { name: string; create: string }[] {
  const migration = readMigrations().find((each) => each.name === INDEX_MIGRATION);
  if (!migration) return [];
  return migration.statements.map((create) => {
    const name = /CREATE INDEX (?:IF NOT EXISTS )?"([^"]+)"/i.exec(create)?.[1];
    if (!name) throw new Error(`bench: ${INDEX_MIGRATION} holds more than CREATE INDEX: ${create}`);
    return { name, create };
  });
}

type Query = { label: string; user: User; paths: string[]; concurrent?: boolean };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

/** Boots the API on the bench database and times each query, one request (or page) at a time. */
async function measure(scenario: string, queries: Query[]) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-bench-"));
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
  console.log(`\n${scenario}`);
  try {
    for (const query of queries) {
      const token = await ctx.tokens.start(query.user);
      const get = async (urlPath: string) => {
        const response = await fetch(`${api}${urlPath}`, { headers: { authorization: `Bearer ${token}` } });
        const text = await response.text();
        if (response.status !== 200) throw new Error(`bench: ${urlPath} → ${response.status} ${text.slice(0, 200)}`);
        return text;
      };
      const once = async (index: number) => {
        if (query.concurrent) return Promise.all(query.paths.map(get));
        return [await get(query.paths[index % query.paths.length] ?? "")];
      };
      for (let i = 0; i < WARMUP; i++) await once(i);
      const latencies: number[] = [];
      let bytes = 0;
      for (let i = 0; i < REQUESTS; i++) {
        const start = performance.now();
        const bodies = await once(i);
        latencies.push(performance.now() - start);
        bytes += bodies.reduce((sum, body) => sum + body.length, 0);
      }
      latencies.sort((a, b) => a - b);
      console.log(
        `  ${query.label.padEnd(70)} p50 ${percentile(latencies, 0.5).toFixed(1).padStart(7)} ms  p95 ${percentile(latencies, 0.95).toFixed(1).padStart(7)} ms  (${Math.round(bytes / REQUESTS)} bytes)`,
      );
    }
  } finally {
    await app.close();
    await db.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The plan of one request, as the engine compiles it for that user. */
async function plan(client: pg.Client, user: User, urlPath: string, options = "") {
  const permissions = createPermissions({ model, permissions: permissionsForUser([]), actorId: user.actor });
  const { query: compiled } = compileRead(model, permissions, parseODataUrl(urlPath));
  const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${options} ${compiled.text}`, compiled.values);
  return rows.map((row) => row["QUERY PLAN"]);
}

/** EXPLAIN (ANALYZE, BUFFERS) of each query. */
async function explain(client: pg.Client, queries: Query[]) {
  for (const query of queries) {
    for (const urlPath of query.concurrent ? query.paths : query.paths.slice(0, 1)) {
      console.log(`\n--- ${query.label}: ${decodeURIComponent(urlPath)}`);
      for (const line of await plan(client, query.user, urlPath, "(ANALYZE, BUFFERS)")) console.log(line);
    }
  }
}

/**
 * Every index of INDEX_MIGRATION must appear in some query's plan: an index on overall_status only
 * matches while its expression is the model's, word for word.
 */
async function checkIndexUse(client: pg.Client, queries: Query[], names: string[]) {
  const plans = new Map<string, string[]>();
  for (const query of queries) {
    const text = (await plan(client, query.user, query.paths[0] ?? "")).join("\n");
    for (const name of names) if (text.includes(name)) plans.set(name, [...(plans.get(name) ?? []), query.label]);
  }
  for (const name of names) {
    const users = plans.get(name);
    if (users) console.log(`  ${name} is used by: ${[...new Set(users.map((label) => label.slice(0, 3)))].join(", ")}`);
    else {
      console.log(`  WARNING: no query uses ${name}; does ${INDEX_MIGRATION} still match the model?`);
      process.exitCode = 1;
    }
  }
}

const started = performance.now();
console.log(`Data API benchmark on ${database} (${os.cpus().length} cores, Node ${process.version})`);
await admin(`CREATE DATABASE ${database}`);
const dropDatabase = async () => {
  if (args.has("--keep")) return console.log(`\nkept ${database}`);
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
};
process.once("SIGINT", () => void dropDatabase().finally(() => process.exit(130)));
const client = new pg.Client({ connectionString: benchUrl });
try {
  const driver = await openPostgres(benchUrl, 1);
  await migrate(driver);
  const orm = wrapDriver(driver).orm;
  await client.connect();
  let step = performance.now();
  await seed(client);
  console.log(`seeded ${DEVICES} devices in ${FLEETS} fleets of ${ORGANIZATIONS} organizations in ${seconds(step)}`);

  // The people measured: the first organization's administrator (its fleets hold about 19,000
  // devices), and its first member, who holds a role on the largest fleet and on two small ones.
  const ids = async (text: string) => (await client.query<{ id: number }>(text)).rows.map((row) => Number(row.id));
  const [adminId] = await ids(`SELECT om."user" AS id FROM organization_membership om
      JOIN organization_membership_role r ON r.id = om.organization_membership_role AND r.name = 'administrator'
      ORDER BY om.is_member_of__organization, om."user" LIMIT 1`);
  const [memberId] = await ids(`SELECT uam."user" AS id FROM user_application_membership uam
      ORDER BY uam.is_member_of__application, uam."user" LIMIT 1`);
  const { rows: memberFleets } = await client.query<{ id: number; devices: number }>(
    `SELECT a.id, (SELECT count(*)::int FROM device d WHERE d.belongs_to__application = a.id) AS devices
       FROM user_application_membership uam JOIN application a ON a.id = uam.is_member_of__application
      WHERE uam."user" = $1 ORDER BY devices DESC`,
    [memberId],
  );
  const [largest, small] = memberFleets;
  const adminUser = await findUserById(orm, adminId ?? 0);
  const member = await findUserById(orm, memberId ?? 0);
  await driver.close();
  if (!adminUser || !member || !largest || !small) throw new Error("bench: the seeded people are missing");
  const { rows: visible } = await client.query<{ fleets: number; devices: number }>(
    `SELECT count(DISTINCT a.id)::int AS fleets, count(d.id)::int AS devices FROM application a
       JOIN organization_membership om ON om.is_member_of__organization = a.organization AND om."user" = $1
       LEFT JOIN device d ON d.belongs_to__application = a.id`,
    [adminId],
  );
  const adminSees = `${visible[0]?.fleets} fleets, ${visible[0]?.devices} dev.`;
  const memberSees = `${memberFleets.length} fleets, ${memberFleets.reduce((sum, fleet) => sum + fleet.devices, 0)} dev.`;

  const enc = (text: string) => text.replaceAll(" ", "%20").replaceAll("'", "%27");
  const devicePage = (fleet: number) =>
    `/v7/device?$top=50&$filter=${enc(`belongs_to__application eq ${fleet} and overall_status eq 'operational'`)}&$expand=${enc("is_of__device_type($select=slug,name),device_tag")}&$orderby=${enc("device_name asc")}`;
  const statusCount = (status: string) =>
    `/v7/application?$select=id,app_name&$expand=${enc(`owns__device/$count($filter=overall_status eq '${status}')`)}&$orderby=${enc("app_name asc")}`;
  const statusList = `/v7/application?$select=id,app_name&$expand=${enc("owns__device($select=overall_status)")}&$orderby=${enc("app_name asc")}`;
  const deviceCount = (fleet: number) => `/v7/device/$count?$filter=${enc(`belongs_to__application eq ${fleet}`)}`;
  const queries: Query[] = [
    { label: `(a) device list page, fleet of ${largest.devices}`, user: member, paths: [devicePage(largest.id)] },
    { label: `(a) device list page, fleet of ${small.devices}`, user: member, paths: [devicePage(small.id)] },
    {
      label: `(b) fleet list, 7 counts in parallel, member (${memberSees})`,
      user: member,
      paths: STATUSES.map(statusCount),
      concurrent: true,
    },
    {
      label: `(b) fleet list, 7 counts in parallel, admin (${adminSees})`,
      user: adminUser,
      paths: STATUSES.map(statusCount),
      concurrent: true,
    },
    { label: "(b) one of the 7 requests (operational), admin", user: adminUser, paths: [statusCount("operational")] },
    { label: "(b) instead: every device's status in one request, admin", user: adminUser, paths: [statusList] },
    { label: `(c) device count, fleet of ${largest.devices}`, user: member, paths: [deviceCount(largest.id)] },
    { label: `(c) device count, fleet of ${small.devices}`, user: member, paths: [deviceCount(small.id)] },
  ];

  const indexes = migrationIndexes();
  if (indexes.length > 0) {
    for (const { name } of indexes) await client.query(`DROP INDEX "${name}"`);
    await client.query("ANALYZE");
    await measure(`without the indexes of ${INDEX_MIGRATION}`, queries);
    if (args.has("--explain")) await explain(client, queries);
    step = performance.now();
    for (const { create } of indexes) await client.query(create);
    await client.query("ANALYZE");
    console.log(`\n(${indexes.length} indexes of ${INDEX_MIGRATION} created in ${seconds(step)})`);
  }
  await measure(indexes.length > 0 ? `with the indexes of ${INDEX_MIGRATION}` : "as migrated", queries);
  await checkIndexUse(
    client,
    queries,
    indexes.map((index) => index.name),
  );
  if (args.has("--explain")) await explain(client, queries);
  // New connections pick the database default up.
  await client.query(`ALTER DATABASE ${database} SET jit = off`);
  await measure("the same with jit = off", queries);
  console.log(`\ndone in ${seconds(started)}`);
} finally {
  await client.end().catch(() => undefined);
  await dropDatabase();
}
