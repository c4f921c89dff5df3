// `npm run bench:log-search -w @flotilla/server` (also part of `npm run bench`): log search over
// 10 million lines (docs/logs.md). Boots the real API on a throwaway PostgreSQL database next to
// DATABASE_URL, makes 10 fleets of 100 devices with 5 services each, seeds BENCH_LOG_LINES lines
// (default 10,000,000) over 25 days with one INSERT … SELECT generate_series (indexes dropped
// during the load and built after it, as a restore would), then times searches through
// GET /logs/v1/search, one request at a time, BENCH_SEARCH_REQUESTS (200) of each shape after
// 20 of warm-up, each on a random device or fleet, and prints p50/p95 and each shape's plan.
// Last, the retention job prunes the oldest 5 days (BENCH_RETENTION=0 skips it).
//   BENCH_LOG_LINES=1000000   a quicker run
import { createFactories } from "../test/factories.ts";
import { startBenchApi } from "./support.ts";

const LINES = Number(process.env.BENCH_LOG_LINES ?? 10_000_000);
const REQUESTS = Number(process.env.BENCH_SEARCH_REQUESTS ?? 200);
const WARMUP = 20;
const FLEETS = 10;
const DEVICES_PER_FLEET = 100;
const SERVICES = ["web", "worker", "mqtt", "sensor", "updater"];
const DAY = 24 * 60 * 60 * 1000;
const SPAN = 25 * DAY;

const server = await startBenchApi("postgres");
const { db, ctx, origin } = server;
try {
  const make = createFactories(db.orm);
  const owner = await make.user();
  const org = await make.organization({ name: "Bench", admins: [owner] });
  const token = await ctx.tokens.start(owner);
  const fleets: number[] = [];
  const devices: string[] = [];
  for (let f = 0; f < FLEETS; f++) {
    const fleet = await make.fleet(org, { name: `bench-logs-${f}` });
    fleets.push(fleet.id);
    await db.query(`INSERT INTO "service" (application, service_name) SELECT $1, unnest($2::text[])`, [
      fleet.id,
      SERVICES,
    ]);
    for (let d = 0; d < DEVICES_PER_FLEET; d++) devices.push((await make.device(fleet)).uuid);
  }

  const now = Date.now();
  const started = performance.now();
  console.log(`\nLog search: seeding ${LINES.toLocaleString("en")} lines on ${devices.length} devices …`);
  const { rows: indexes } = await db.query<{ name: string; def: string }>(
    `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE tablename = 'device_log' AND indexname <> 'device_log_pkey'`,
  );
  for (const index of indexes) await db.query(`DROP INDEX "${index.name}"`);
  // Device i of the load gets lines i, i + 1000, …; its services are its fleet's. Messages are
  // built from a hash of the line number: ~40 % requests ("GET"), ~5 % "timeout", 1 in 100,000
  // "segfault", the rest varied; 5 % system lines without a service.
  await db.query(`CREATE TEMP TABLE bench_device AS
     SELECT (row_number() OVER (ORDER BY d.id) - 1)::int AS idx, d.id,
       (SELECT array_agg(s.id ORDER BY s.id) FROM "service" s WHERE s.application = d.belongs_to__application) AS services
     FROM "device" d`);
  await db.query(
    `INSERT INTO "device_log" (device, created_at, "timestamp", message, is_system, is_std_err, service_id)
     SELECT b.id, t.ts + 200, t.ts,
       CASE
         WHEN h % 100000 = 7 THEN 'kernel: segfault at 0000000000000010 ip ' || to_hex(h) || ' in libsensor.so'
         WHEN h % 100 < 40 THEN 'GET /api/v1/items/' || (h % 5000) || ' 200 ' || (h % 97) || 'ms'
         WHEN h % 100 < 45 THEN 'WARN: upstream timeout after ' || (h % 30) || 's, retrying (attempt ' || (h % 5) || ')'
         WHEN h % 100 < 60 THEN 'Temperature reading: ' || (h % 60) || '.' || (h % 10) || ' C on sensor ' || (h % 8)
         WHEN h % 100 < 75 THEN 'Uploaded batch ' || (h % 100000) || ' (' || (h % 500) || ' records) to bucket telemetry-' || (h % 12)
         WHEN h % 100 < 85 THEN 'Connected to broker mqtt://broker-' || (h % 4) || '.local:1883 as client ' || to_hex(h % 65536)
         WHEN h % 100 < 95 THEN 'Cache hit ratio ' || (h % 100) || '% over ' || (h % 1000) || ' lookups'
         ELSE 'Supervisor: applying target state, release ' || to_hex(h % 1048576)
       END,
       h % 100 >= 95, h % 100 BETWEEN 40 AND 44,
       CASE WHEN h % 100 >= 95 THEN NULL ELSE b.services[1 + (h / 7) % ${SERVICES.length}] END
     FROM generate_series(0, $1::bigint - 1) g
     CROSS JOIN LATERAL (SELECT (g * 2654435761 + 12345) % 4294967291 AS h, $2::bigint + g * $3::bigint / $1::bigint AS ts) t
     JOIN bench_device b ON b.idx = g % ${devices.length}`,
    [LINES, now - SPAN, SPAN],
  );
  const seeded = performance.now();
  await db.query("SET maintenance_work_mem = '1GB'").catch(() => undefined);
  for (const index of indexes) await db.query(index.def);
  await db.query("ANALYZE device_log");
  const indexed = performance.now();
  const { rows: size } = await db.query<{ table: string; indexes: string }>(
    `SELECT pg_size_pretty(pg_relation_size('device_log')) AS table, pg_size_pretty(pg_indexes_size('device_log')) AS indexes`,
  );
  console.log(
    `  seeded in ${((seeded - started) / 1000).toFixed(0)} s, indexes built in ${((indexed - seeded) / 1000).toFixed(0)} s; ` +
      `table ${size[0]?.table}, indexes ${size[0]?.indexes} (${indexes.map((i) => i.name).join(", ")})`,
  );

  const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)] as T;
  const hour = () => {
    const from = now - SPAN + Math.floor(Math.random() * (SPAN - 3600_000));
    return { from: String(from), to: String(from + 3600_000) };
  };
  const shapes: Array<[string, () => Record<string, string>]> = [
    ["device + text (timeout)", () => ({ device: pick(devices), q: "timeout" })],
    ["fleet + text (timeout)", () => ({ fleet: String(pick(fleets)), q: "timeout" })],
    ["fleet + service + 1 h range", () => ({ fleet: String(pick(fleets)), service: pick(SERVICES), ...hour() })],
    ["fleet + rare word (segfault)", () => ({ fleet: String(pick(fleets)), q: "segfault" })],
    ["fleet + common word (GET)", () => ({ fleet: String(pick(fleets)), q: "GET" })],
    ["device + rare word (segfault)", () => ({ device: pick(devices), q: "segfault" })],
    ["fleet, next page (before)", () => ({ fleet: String(pick(fleets)), q: "timeout", before: "" })],
  ];
  const get = async (query: Record<string, string>) => {
    const response = await fetch(`${origin}/logs/v1/search?${new URLSearchParams(query)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (response.status !== 200) throw new Error(`search: ${response.status} ${await response.text()}`);
    return (await response.json()) as { lines: unknown[]; next: string | null };
  };
  const percentile = (sorted: number[], p: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
  console.log(`  ${REQUESTS} requests per shape after ${WARMUP} of warm-up, one at a time, 100 lines a page:`);
  for (const [name, make] of shapes) {
    const times: number[] = [];
    let found = 0;
    for (let i = 0; i < WARMUP + REQUESTS; i++) {
      let query = make();
      // The second page: the cursor of a first page.
      if (query.before === "") {
        const { before: _, ...first } = query;
        const next = (await get(first)).next;
        query = next ? { ...first, before: next } : first;
      }
      const t = performance.now();
      const result = await get(query);
      if (i >= WARMUP) {
        times.push(performance.now() - t);
        found += result.lines.length;
      }
    }
    times.sort((x, y) => x - y);
    console.log(
      `  ${name.padEnd(32)} p50 ${percentile(times, 0.5).toFixed(1).padStart(6)} ms  p95 ${percentile(times, 0.95).toFixed(1).padStart(6)} ms  (${(found / REQUESTS).toFixed(0)} lines a page)`,
    );
  }
  if (process.env.BENCH_EXPLAIN !== "0") {
    const { searchLogLines } = await import("../src/features/devices/log-queries.ts");
    const explain = async (name: string, search: Parameters<typeof searchLogLines>[0]) => {
      let captured: { text: string; params: unknown[] } | undefined;
      await searchLogLines(
        {
          query: async (text: string, params?: unknown[]) => {
            captured = { text, params: params ?? [] };
            return { rows: [], rowCount: 0 };
          },
        } as never,
        search,
      );
      if (!captured) return;
      const plan = await db.query<{ "QUERY PLAN": string }>(
        `EXPLAIN (ANALYZE, COSTS OFF) ${captured.text}`,
        captured.params,
      );
      console.log(`\n  plan: ${name}`);
      for (const row of plan.rows) console.log(`    ${row["QUERY PLAN"]}`);
    };
    const { rows: ids } = await db.query<{ id: number }>(`SELECT id FROM "device" ORDER BY id LIMIT 1`);
    const device = ids[0]?.id as number;
    const fleet = fleets[0] as number;
    await explain("device + text", { scope: { device }, text: "timeout", limit: 101 });
    await explain("fleet + text", { scope: { fleet }, text: "timeout", limit: 101 });
    await explain("fleet + service + 1 h", {
      scope: { fleet },
      service: "worker",
      from: now - 10 * DAY,
      to: now - 10 * DAY + 3600_000,
      limit: 101,
    });
    await explain("fleet + rare word", { scope: { fleet }, text: "segfault", limit: 101 });
    await explain("fleet + common word", { scope: { fleet }, text: "GET", limit: 101 });
  }
  // Retention: the oldest 5 of the 25 days (a fifth of the lines) go, in batches of 5,000.
  if (process.env.BENCH_RETENTION !== "0") {
    const { runLogRetention, LOG_PRUNE_BATCH } = await import("../src/features/devices/log-retention.ts");
    const t = performance.now();
    const deleted = await runLogRetention(db, { maxAgeDays: 20, maxLinesPerDevice: 1_000_000, now });
    const seconds = (performance.now() - t) / 1000;
    console.log(
      `\n  retention: ${deleted.toLocaleString("en")} lines older than 20 days pruned in ${seconds.toFixed(1)} s ` +
        `(${Math.round(deleted / seconds).toLocaleString("en")} lines/s, batches of ${LOG_PRUNE_BATCH})`,
    );
  }
} finally {
  await server.stop();
}
