// `npm run bench:logs -w @flotilla/server` (also part of `npm run bench`): device logs (issue 10).
// Boots the real API in this process on a throwaway PostgreSQL database `flotilla_bench_<random>`
// next to DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; `--pglite` for PGlite
// instead), registers BENCH_LOG_DEVICES devices (default 1,000), and hands the load to
// bench/log-load.ts in its own process: every device keeps its log stream open and sends one line a
// second; BENCH_LOG_VIEWERS viewers (default 50) stream logs of one device each. Measures, after
// warm-up, how long a line takes from the device's write to a viewer (p50/p95/p99), the server's
// RSS and event-loop delay, and the statements the database ran.
//   BENCH_QUICK=1   10 s after 3 s of warm-up instead of 30 s after 5 s
import { fork } from "node:child_process";
import crypto from "node:crypto";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createFactories } from "../test/factories.ts";
import type { LogLoadCommand, LogLoadStats } from "./log-load.ts";
import { startBenchApi, statements } from "./support.ts";

const QUICK = process.env.BENCH_QUICK === "1";
const DEVICES = Number(process.env.BENCH_LOG_DEVICES ?? 1000);
const VIEWERS = Number(process.env.BENCH_LOG_VIEWERS ?? 50);
const WARMUP_MS = QUICK ? 3000 : 5000;
const DURATION_MS = QUICK ? 10_000 : 30_000;
const pglite = process.argv.includes("--pglite");

const here = path.dirname(new URL(import.meta.url).pathname);
const server = await startBenchApi(pglite ? "pglite" : "postgres");
const { db, ctx, origin, label } = server;
try {
  const make = createFactories(db.orm);
  const owner = await make.user();
  const org = await make.organization({ name: "Bench", admins: [owner] });
  await db.query(
    `INSERT INTO "subscription" (is_for__organization, is_for__plan) SELECT $1, id FROM "plan" WHERE billing_code <> 'free' LIMIT 1`,
    [org.id],
  );
  const fleet = await make.fleet(org, { name: "bench-logs" });
  const token = await ctx.tokens.start(owner);
  const keyResponse = await fetch(`${origin}/api-key/v2/`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ actorType: "application", actorTypeId: fleet.id, roles: ["provisioning-api-key"] }),
  });
  const provisioningKey = (await keyResponse.json()) as string;
  const devices: { uuid: string; key: string }[] = [];
  const register = async () => {
    const uuid = crypto.randomBytes(16).toString("hex");
    const key = crypto.randomBytes(20).toString("hex");
    const response = await fetch(`${origin}/device/register`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${provisioningKey}` },
      body: JSON.stringify({ application: fleet.id, uuid, device_type: "raspberrypi4-64", api_key: key }),
    });
    if (response.status !== 201) throw new Error(`register: ${response.status} ${await response.text()}`);
    devices.push({ uuid, key });
  };
  while (devices.length < DEVICES) {
    await Promise.all(Array.from({ length: Math.min(16, DEVICES - devices.length) }, register));
  }

  console.log(`\nDevice logs: ${DEVICES} devices × 1 line/s, ${VIEWERS} viewers, ${label}`);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const rssBefore = process.memoryUsage().rss;
  let rssMax = rssBefore;
  const sampler = setInterval(() => {
    rssMax = Math.max(rssMax, process.memoryUsage().rss);
  }, 250);
  const child = fork(path.join(here, "log-load.ts"), [], { execArgv: ["--import", "tsx"] });
  const statementsBefore = statements;
  loop.enable();
  const stats = await new Promise<LogLoadStats>((resolve, reject) => {
    child.once("message", (answer) => resolve(answer as LogLoadStats));
    child.once("exit", (code) => (code ? reject(new Error(`load generator exited with ${code}`)) : undefined));
    child.send({
      origin,
      token,
      devices,
      viewers: VIEWERS,
      warmupMs: WARMUP_MS,
      durationMs: DURATION_MS,
    } satisfies LogLoadCommand);
  });
  loop.disable();
  clearInterval(sampler);
  const seconds = DURATION_MS / 1000;
  await ctx.devices.logs.flush();
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM device_log`);
  const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;
  const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : "—");
  console.log(
    `  lines sent ${Math.round(stats.sent / seconds)}/s, delivered to viewers ${Math.round(stats.delivered / seconds)}/s (${stats.viewerErrors} viewer errors)`,
  );
  console.log(
    `  delivery latency p50 ${ms(stats.p50)}  p95 ${ms(stats.p95)}  p99 ${ms(stats.p99)}  max ${ms(stats.max)} ms`,
  );
  console.log(
    `  server RSS ${mb(rssBefore)} before, ${mb(rssMax)} at most; event-loop delay p99 ${ms(loop.percentile(99) / 1e6)} ms`,
  );
  console.log(
    `  database statements ${Math.round((statements - statementsBefore) / (seconds + WARMUP_MS / 1000))}/s; ${rows[0]?.n} lines stored`,
  );
} finally {
  await server.stop();
}
