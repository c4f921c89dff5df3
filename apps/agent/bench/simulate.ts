// biome-ignore-all lint/style/noRestrictedImports: the benchmark boots the real API in-process (as the server's tests do) to have something real to talk to.
// `npm run bench -w @flotilla/agent` (and the root `npm run bench`): can one process carry 1,000
// simulated devices at a 10 s state interval on this machine?
//
// Boots the API in this process on a fresh PGlite database (or a throwaway PostgreSQL database
// next to DATABASE_URL), creates a paid organization, a fleet and a provisioning key, registers
// the devices with startSimulator (the same protocol code as `flotilla-agent simulate`), lets
// them provision, then measures for BENCH_SECONDS (default 60): CPU of the process (server and
// devices together, % of one core and of the machine), resident memory, state reports per
// second against the expected count / interval, late reports (started > 1 s after they were
// due), errors and event-loop delay. Options: --count N (1000), --interval-ms MS (10000).
// Figures go into docs/benchmarks.md by hand, with the machine they were taken on.
import crypto from "node:crypto";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import pino from "pino";
import { buildApi, buildContext } from "../../server/src/app.ts";
import { loadConfig } from "../../server/src/config.ts";
import { openPglite, openPostgres } from "../../server/src/db/connection.ts";
import { wrapDriver } from "../../server/src/db/index.ts";
import { migrate } from "../../server/src/db/migrate.ts";
import { createApiKey } from "../../server/src/features/api-keys/service.ts";
import { createFactories } from "../../server/test/factories.ts";
import { startSimulator } from "../src/sim/simulator.ts";

const { values } = parseArgs({
  options: { count: { type: "string" }, "interval-ms": { type: "string" } },
  strict: true,
});
const COUNT = Number(values.count ?? 1000);
const INTERVAL_MS = Number(values["interval-ms"] ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const WARMUP_SECONDS = 20;

async function adminQuery(url: string, text: string) {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function openDatabase() {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const driver = await openPglite({});
    await migrate(driver);
    return { db: wrapDriver(driver), label: "PGlite (in-process)", drop: async () => {} };
  }
  const name = `flotilla_agent_bench_${crypto.randomBytes(4).toString("hex")}`;
  await adminQuery(base, `CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const driver = await openPostgres(url.toString(), 10);
  await migrate(driver);
  return {
    db: wrapDriver(driver),
    label: "PostgreSQL",
    drop: () => adminQuery(base, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);

const { db, label, drop } = await openDatabase();
const dataDir = fs.mkdtempSync(`${os.tmpdir()}/flotilla-agent-bench-`);
// The per-address limit (1,000 calls a minute) would spread registration over minutes.
const config = loadConfig({
  FLOTILLA_DATA_DIR: dataDir,
  FLOTILLA_CAPTCHA: "off",
  LOG_LEVEL: "silent",
  FLOTILLA_RATE_LIMIT: "10000000",
});
const ctx = await buildContext(config, db);
const app = await buildApi(ctx, pino({ level: "silent" }));
await app.listen({ port: 0, host: "127.0.0.1" });
const apiUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

const factories = createFactories(db.orm);
const owner = await factories.user();
const org = await factories.organization({ admins: [owner] });
await db.query(
  `INSERT INTO "subscription" (is_for__organization, is_for__plan) SELECT $1, id FROM "plan" WHERE billing_code <> 'free' LIMIT 1`,
  [org.id],
);
const fleet = await factories.fleet(org, { deviceType: "raspberrypi4-64" });
const provisioningKey = await createApiKey(db.orm, { actor: fleet.actor, role: "provisioning-api-key" });

console.log(
  `agent simulator: ${COUNT} devices, state every ${INTERVAL_MS / 1000} s, API in-process on ${label}, ` +
    `${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), Node ${process.version}`,
);
const problems: string[] = [];
const registerStarted = performance.now();
const simulator = await startSimulator({
  apiUrl,
  provisioningKey,
  fleetId: fleet.id,
  count: COUNT,
  intervalMs: INTERVAL_MS,
  log: (message) => problems.push(message),
});
const registerSeconds = (performance.now() - registerStarted) / 1000;
console.log(
  `registration: ${COUNT} devices in ${registerSeconds.toFixed(1)} s (${Math.round(COUNT / registerSeconds)}/s)`,
);

await sleep(WARMUP_SECONDS * 1000);
const operational = simulator.devices.filter((device) => device.host.model.phase === "operational").length;
const connected = simulator.devices.filter((device) => device.runtime.cloudlink.connected).length;
console.log(`after ${WARMUP_SECONDS} s: ${operational} operational, ${connected} cloudlink sockets open`);

const stats = simulator.stats;
const before = { ...stats };
const cpuBefore = process.cpuUsage();
// Event-loop lag: how late a 100 ms timer fires (what every device timer and request suffers too).
const lags: number[] = [];
let expectedAt = performance.now() + 100;
const lagTimer = setInterval(() => {
  const now = performance.now();
  lags.push(Math.max(0, now - expectedAt));
  expectedAt = now + 100;
}, 100);
const started = performance.now();
let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 1000);
await sleep(SECONDS * 1000);
clearInterval(sampler);
clearInterval(lagTimer);
lags.sort((a, b) => a - b);
const lag = (p: number) => (lags[Math.min(lags.length - 1, Math.floor(lags.length * p))] ?? 0).toFixed(1);
const wall = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const cpuPercent = ((cpu.user + cpu.system) / 1e6 / wall) * 100;
const delta = (key: keyof typeof stats) => stats[key] - before[key];
const expected = (COUNT / INTERVAL_MS) * 1000;

console.log(
  [
    `measured ${wall.toFixed(0)} s:`,
    `  CPU ${cpuPercent.toFixed(0)} % of one core (${(cpuPercent / os.cpus().length).toFixed(0)} % of the machine; API + devices)`,
    `  memory: ${mib(process.memoryUsage().rss)} MiB resident now, ${mib(peakRss)} MiB peak, heap ${mib(process.memoryUsage().heapUsed)} MiB`,
    `  state reports: ${(delta("reports") / wall).toFixed(1)}/s (expected ≈ ${expected.toFixed(1)}/s), ${delta("lateReports")} late (> 1 s), ${delta("reportErrors")} errors`,
    `  target-state polls: ${(delta("polls") / wall).toFixed(1)}/s (${delta("notModified")} answered 304), ${delta("pollErrors")} errors`,
    `  log lines: ${(delta("logLines") / wall).toFixed(1)}/s; cloudlink: ${delta("cloudlinkConnects")} connects, ${delta("cloudlinkDrops")} drops (simulated)`,
    `  event-loop lag: p50 ${lag(0.5)} ms, p99 ${lag(0.99)} ms, max ${(lags.at(-1) ?? 0).toFixed(1)} ms`,
  ].join("\n"),
);
if (problems.length) console.log(`problems reported by the simulator:\n  ${problems.slice(0, 10).join("\n  ")}`);

await simulator.stop();
await app.close();
await db.close();
await drop();
fs.rmSync(dataDir, { recursive: true, force: true });
