// `npm run bench -w @flotilla/server` (after data-api.ts), or `npm run bench:devices -w @flotilla/server`:
// the device hot path (issue 7 "Speed", DESIGN §8) on PGlite and on PostgreSQL, side by side with a
// bare node:http JSON endpoint.
//
// For each database it boots the real API in this process (PGlite in a temporary data directory;
// PostgreSQL on a throwaway database `flotilla_bench_<random>` next to DATABASE_URL, default
// postgres://postgres@127.0.0.1:5432/postgres, dropped at the end), creates a user, a paid
// organization, a fleet with a release of two services and a provisioning key, and hands the rest
// to a load generator in its own process (bench/device-load.ts, undici keep-alive pool):
//   - registration of 2,000 devices through POST /device/register, 16 at a time;
//   - every device polls once (not measured): target states cached, ETags known;
//   - 64 connections for a fixed time each, rotating over the 2,000 devices:
//     PATCH /device/v3/state with metrics, GET /device/v3/{uuid}/state with If-None-Match (304),
//     the same without (200);
//   - pool saturation: 4 × DATABASE_POOL_SIZE connections mixing registrations, polls whose
//     cached target state is invalidated every 100 ms, and reports; no timeout, no stall.
// The bare endpoint (bench/bare-json.ts) runs in a third process, measured by the same generator
// first. Each line also gives the database statements the server ran meanwhile: the device path
// reads nothing when its caches hold (device keys are re-checked every 10 s, lib/authenticate.ts).
//   --pglite / --postgres   only that database (default: both)
//   BENCH_QUICK=1           3 s per scenario after 1 s of warm-up instead of 10 s after 2 s
//   BENCH_SCENARIOS=patch   only these scenarios (patch, get-etag, get, saturation), e.g. under --cpu-prof
//   --workers N             PostgreSQL only: the load goes to the real server process started with
//                           FLOTILLA_WORKERS=N (Redis at REDIS_URL, default this machine's) on the
//                           bench's database, instead of the API in this process (which still seeds
//                           it); no saturation scenario then, and the statements counted are the
//                           database's transactions (pg_stat_database, the bench's own few included)
//                           with the Redis commands (INFO commandstats) beside them;
//                           BENCH_SERVER_ARGS are that process's node options (e.g. --cpu-prof)
// Prints a table to paste into docs/benchmarks.md ("Device path").
import { type ChildProcess, fork, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { createFactories } from "../test/factories.ts";
import type { Answer, Command, Kind, Stats } from "./device-load.ts";
import { startBenchApi, statements } from "./support.ts";

const QUICK = process.env.BENCH_QUICK === "1";
/** BENCH_SCENARIOS=patch,get to run only those; registration always runs. */
const ONLY = process.env.BENCH_SCENARIOS?.split(",");
const DEVICES = 2000;
const CONNECTIONS = 64;
const REGISTER_CONCURRENCY = 16;
const WARMUP_MS = QUICK ? 1000 : 2000;
const DURATION_MS = QUICK ? 3000 : 10_000;
const SERVICES = ["main", "proxy"];

const args = new Set(process.argv.slice(2));
const workersAt = process.argv.indexOf("--workers");
const WORKERS = workersAt > 0 ? Number(process.argv[workersAt + 1]) : undefined;
const databases = (["pglite", "postgres"] as const).filter((kind) =>
  WORKERS !== undefined
    ? kind === "postgres"
    : args.has(`--${kind}`) || (!args.has("--pglite") && !args.has("--postgres")),
);

const here = path.dirname(new URL(import.meta.url).pathname);

/** The load generator: one command at a time, one answer each. */
function startLoad() {
  const child = fork(path.join(here, "device-load.ts"), [], { execArgv: ["--import", "tsx"] });
  const send = (command: Command) =>
    new Promise<Stats>((resolve, reject) => {
      child.once("message", (answer: Answer) => {
        if (answer.op === "failed") reject(new Error(`load generator: ${answer.message}`));
        else resolve(answer.stats);
      });
      child.send(command);
    });
  return { send, stop: () => child.send({ op: "exit" } satisfies Command) };
}

async function startBare(): Promise<{ origin: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(here, "bare-json.ts")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(chunk.toString());
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`bare endpoint exited with ${code}`)));
  });
  return { origin: `http://127.0.0.1:${port}`, child };
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/** The real server (bin/flotilla-server.mjs) with FLOTILLA_WORKERS on the bench's database. */
async function startWorkers(databaseUrl: string, workers: number) {
  const [port, apiPort] = [await freePort(), await freePort()];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-bench-workers-"));
  // e.g. BENCH_SERVER_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": the primary's node options, which
  // node's cluster gives each worker too (--cpu-prof is not allowed in NODE_OPTIONS).
  const nodeArgs = process.env.BENCH_SERVER_ARGS?.split(" ").filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, path.join(here, "../bin/flotilla-server.mjs")], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      DATABASE_URL: databaseUrl,
      REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      FLOTILLA_WORKERS: String(workers),
      FLOTILLA_DATA_DIR: dataDir,
      FLOTILLA_PORT: String(port),
      FLOTILLA_API_PORT: String(apiPort),
      FLOTILLA_HOST: "127.0.0.1",
      FLOTILLA_CAPTCHA: "off",
      FLOTILLA_RATE_LIMIT: "10000000",
      LOG_FORMAT: "json",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Flotilla ready in")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`flotilla-server exited with ${code}: ${output}`)));
  });
  return {
    origin: `http://127.0.0.1:${apiPort}`,
    async stop() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * With --workers the statements are not this process's: the database's transactions
 * (pg_stat_database, which a backend reports within a second of going idle) and Redis's
 * command count (INFO commandstats, this machine's Redis: other users add theirs).
 */
async function serverCounters(db: Awaited<ReturnType<typeof startBenchApi>>["db"], redis: Redis) {
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const { rows } = await db.query<{ n: string }>(
    "SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()",
  );
  const info = await redis.info("commandstats");
  let calls = 0;
  for (const match of info.matchAll(/calls=(\d+)/g)) calls += Number(match[1]);
  return { statements: Number(rows[0]?.n ?? 0), redisCalls: calls };
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : "—");
const int = (value: number) => Math.round(value).toLocaleString("en-US");

function line(stats: Stats) {
  const statuses = Object.entries(stats.statuses)
    .map(([status, count]) => `${status}×${count}`)
    .join(" ");
  console.log(
    `  ${stats.label.padEnd(44)} ${int(stats.rate).padStart(7)}/s  p50 ${ms(stats.p50).padStart(6)}  p95 ${ms(stats.p95).padStart(6)}  p99 ${ms(stats.p99).padStart(6)}  max ${ms(stats.max).padStart(7)} ms  errors ${stats.errors}  timeouts ${stats.timeouts}  gap ${ms(stats.longestGap)} ms  [${statuses}]${stats.statements === undefined ? "" : `  db statements ${stats.statements}`}${stats.redisCalls === undefined ? "" : `  redis ${stats.redisCalls}`}`,
  );
}

type Run = { database: string; poolSize: number; registration: Stats; scenarios: Record<string, Stats> };

async function benchDatabase(kind: "pglite" | "postgres", load: ReturnType<typeof startLoad>): Promise<Run> {
  const server = await startBenchApi(kind);
  const { config, db, ctx } = server;
  let origin = server.origin;
  let label = server.label;
  let workers: Awaited<ReturnType<typeof startWorkers>> | undefined;
  let redis: Redis | undefined;
  /** Statements (and, with --workers, Redis commands) from here on: `counted(stats, await counting())`. */
  const counting = async () => {
    if (!redis) {
      const start = statements;
      return async (stats: Stats) => {
        stats.statements = statements - start;
      };
    }
    const start = await serverCounters(db, redis);
    return async (stats: Stats) => {
      const end = await serverCounters(db, redis as Redis);
      stats.statements = end.statements - start.statements;
      stats.redisCalls = end.redisCalls - start.redisCalls;
    };
  };
  try {
    console.log(`\n${label}`);

    // A user, a paid organization (no device allowance), a fleet running a release of two services.
    const make = createFactories(db.orm);
    const owner = await make.user();
    const org = await make.organization({ name: "Bench", admins: [owner] });
    await db.query(
      `INSERT INTO "subscription" (is_for__organization, is_for__plan) SELECT $1, id FROM "plan" WHERE billing_code <> 'free' LIMIT 1`,
      [org.id],
    );
    const fleet = await make.fleet(org, { name: "bench-fleet" });
    const release = await make.release(fleet);
    for (const name of SERVICES) {
      const { rows: services } = await db.query<{ id: number }>(
        `INSERT INTO "service" (application, service_name) VALUES ($1, $2) RETURNING id`,
        [fleet.id, name],
      );
      const { rows: images } = await db.query<{ id: number }>(
        `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status) VALUES ($1, $2, 'success') RETURNING id`,
        [services[0]?.id, `registry.local/bench/${name}:${release.commit.slice(0, 7)}`],
      );
      await db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [
        images[0]?.id,
        release.id,
      ]);
      await db.query(`INSERT INTO "service_environment_variable" (service, name, value) VALUES ($1, 'MODE', 'bench')`, [
        services[0]?.id,
      ]);
    }
    await db.query(`UPDATE "application" SET should_be_running__release = $1 WHERE id = $2`, [release.id, fleet.id]);
    await db.query(
      `INSERT INTO "application_environment_variable" (application, name, value) VALUES ($1, 'SITE', 'bench')`,
      [fleet.id],
    );
    await db.query(
      `INSERT INTO "application_config_variable" (application, name, value) VALUES ($1, 'BALENA_SUPERVISOR_POLL_INTERVAL', '600000')`,
      [fleet.id],
    );
    const token = await ctx.tokens.start(owner);
    const keyAnswer = await fetch(`${origin}/api-key/v2/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ actorType: "application", actorTypeId: fleet.id, roles: ["provisioning-api-key"] }),
    });
    if (keyAnswer.status !== 200) throw new Error(`bench: provisioning key ${keyAnswer.status}`);
    const provisioningKey = (await keyAnswer.json()) as string;
    if (WORKERS !== undefined && config.databaseUrl) {
      workers = await startWorkers(config.databaseUrl, WORKERS);
      origin = workers.origin;
      label = `PostgreSQL, ${WORKERS} worker${WORKERS === 1 ? "" : "s"} (pool ${config.databasePoolSize} each)`;
      console.log(`  load on the server process with ${WORKERS} worker(s) at ${origin}`);
      redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    }

    const registrationCount = await counting();
    const registration = await load.send({
      op: "register",
      origin,
      provisioningKey,
      fleet: { id: fleet.id, uuid: fleet.uuid, commit: release.commit, services: SERVICES },
      count: DEVICES,
      concurrency: REGISTER_CONCURRENCY,
    });
    registration.label = `registration, ${REGISTER_CONCURRENCY} at a time`;
    await registrationCount(registration);
    line(registration);
    if (registration.errors + registration.timeouts > 0) throw new Error("bench: registrations failed");

    const scenarios: Record<string, Stats> = {};
    const measure = async (name: string, kind: Kind, connections = CONNECTIONS) => {
      if (ONLY && !ONLY.includes(kind)) return;
      const count = await counting();
      const stats = await load.send({
        op: "load",
        label: name,
        kind,
        origin,
        connections,
        warmupMs: WARMUP_MS,
        durationMs: DURATION_MS,
      });
      await count(stats);
      line(stats);
      scenarios[kind] = stats;
    };
    const primeCount = await counting();
    const primed = await load.send({ op: "prime", origin });
    primed.label = "(every device polls once: cache and ETags)";
    await primeCount(primed);
    line(primed);
    await measure("PATCH /device/v3/state (metrics)", "patch");
    await ctx.devices.reports.flush();
    await measure("GET /device/v3/{uuid}/state, If-None-Match → 304", "get-etag");
    await measure("GET /device/v3/{uuid}/state → 200", "get");
    // Pool saturation: target states invalidated all the time, so polls read the database.
    if (workers) return { database: label, poolSize: config.databasePoolSize, registration, scenarios };
    const saturation = 4 * config.databasePoolSize;
    const invalidating = setInterval(() => ctx.devices.invalidate({ all: true }), 100);
    try {
      await measure(`saturation: ${saturation} conn. (4 × pool ${config.databasePoolSize})`, "saturation", saturation);
    } finally {
      clearInterval(invalidating);
    }
    return { database: label, poolSize: config.databasePoolSize, registration, scenarios };
  } finally {
    redis?.disconnect();
    await workers?.stop();
    await server.stop();
  }
}

const started = performance.now();
const cpu = os.cpus()[0]?.model ?? "unknown CPU";
console.log(
  `Device path benchmark: ${DEVICES} devices, ${CONNECTIONS} connections, ${DURATION_MS / 1000} s per scenario after ${WARMUP_MS / 1000} s warm-up (${os.cpus().length} cores ${cpu}, Node ${process.version}, load ${os.loadavg()[0]?.toFixed(2)})`,
);
const load = startLoad();
const bare = await startBare();
try {
  console.log("\nbare node:http JSON endpoint (own process)");
  const bareStats = await load.send({
    op: "load",
    label: "GET /json",
    kind: "bare",
    origin: bare.origin,
    connections: CONNECTIONS,
    warmupMs: WARMUP_MS,
    durationMs: DURATION_MS,
  });
  line(bareStats);
  const runs: Run[] = [];
  for (const kind of databases) runs.push(await benchDatabase(kind, load));

  // The table for docs/benchmarks.md.
  const pct = (stats: Stats | undefined) => (stats ? `${Math.round((100 * stats.rate) / bareStats.rate)} %` : "—");
  const cell = (stats: Stats | undefined) =>
    stats
      ? `${int(stats.rate)}/s (${pct(stats)}), p50 ${ms(stats.p50)}, p99 ${ms(stats.p99)} ms, ${stats.errors + stats.timeouts} err.`
      : "—";
  console.log(`\n| Figure | Target | ${runs.map((run) => run.database).join(" | ")} |`);
  console.log(`|---|---|${runs.map(() => "---|").join("")}`);
  console.log(
    `| Bare node:http JSON endpoint, own process | reference | ${runs.map(() => `${int(bareStats.rate)}/s, p50 ${ms(bareStats.p50)}, p99 ${ms(bareStats.p99)} ms`).join(" | ")} |`,
  );
  console.log(
    `| Registration, ${REGISTER_CONCURRENCY} at a time | ≥ 400/s | ${runs.map((run) => `${int(run.registration.rate)}/s, p99 ${ms(run.registration.p99)} ms`).join(" | ")} |`,
  );
  const rows: [Kind, string, string][] = [
    ["patch", "`PATCH /device/v3/state` with metrics", "≥ 25 % of bare, ≥ 2,000/s, p99 < 100 ms"],
    ["get-etag", "`GET /device/v3/{uuid}/state` with `If-None-Match` (304)", "≥ 30 % of bare, p99 < 100 ms"],
    ["get", "`GET /device/v3/{uuid}/state` without (200)", "≥ 30 % of bare, p99 < 100 ms"],
  ];
  for (const [kind, name, target] of rows) {
    console.log(`| ${name} | ${target} | ${runs.map((run) => cell(run.scenarios[kind])).join(" | ")} |`);
  }
  console.log(
    `| Saturation, 4 × pool connections (mixed) | no timeout, no stall | ${runs
      .map((run) => {
        const s = run.scenarios.saturation;
        return s
          ? `${4 * run.poolSize} conn.: ${int(s.rate)}/s, p99 ${ms(s.p99)}, max ${ms(s.max)} ms, ${s.timeouts} timeouts, ${s.errors} err., longest gap ${ms(s.longestGap)} ms`
          : "—";
      })
      .join(" | ")} |`,
  );
  console.log(`\ndone in ${((performance.now() - started) / 1000).toFixed(0)} s`);
} finally {
  load.stop();
  bare.child.kill("SIGTERM");
}
