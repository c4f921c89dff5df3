// `npm run bench` (also alone: `node --import tsx scripts/bench-reconnect.ts [--count 200]`):
// how long after a `kill -9` of the API every agent is connected again.
//
// Boots the real server process, starts `flotilla-agent simulate --count N` in its own process
// against the demo fleet, waits until every device has its cloudlink socket open, kills the
// server with SIGKILL, restarts it on the same ports and data, and measures from the moment it
// is ready until each device has connected again (its `last_vpn_event` is after the restart).
// Target (docs/device-protocol.md): every agent back within 60 s of the API's return.
// Runs on a throwaway database of the PostgreSQL server at DATABASE_URL (default: this machine's),
// where the demo organization is given a paid plan so that it takes more than 10 devices.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { cleanUp, startFlotilla } from "../e2e/support/flotilla.ts";
import { apiAt, prepareDemoFleet } from "./lib/demo-fleet.ts";

const { values } = parseArgs({ options: { count: { type: "string" } }, strict: true });
const COUNT = Number(values.count ?? 200);
const ROOT = path.resolve(import.meta.dirname, "..");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// startFlotilla waits for the "ready" line, logged at info.
const env = { FLOTILLA_RATE_LIMIT: "10000000", LOG_LEVEL: "info" };
process.env.DATABASE_URL ??= "postgres://postgres@127.0.0.1:5432/postgres";
let server = await startFlotilla(env);
const ports = { dashboard: Number(new URL(server.dashboardUrl).port), api: Number(new URL(server.apiUrl).port) };
const api = server.apiUrl;
const call = apiAt(api);
const { token, fleetId, key } = await prepareDemoFleet(server.env.DATABASE_URL ?? "", call, "reconnect bench");
const connectedSince = async (since: string) =>
  (
    await call<{ d: number }>(
      "GET",
      `/v7/device/$count?$filter=belongs_to__application eq ${fleetId} and last_vpn_event gt '${since}'`,
      token,
    )
  ).d;

const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-reconnect-bench-"));
const simulator: ChildProcess = spawn(
  process.execPath,
  [
    path.join(ROOT, "apps/agent/bin/flotilla-agent.mjs"),
    "simulate",
    ...["--api", api, "--provisioning-key", key, "--fleet", String(fleetId), "--count", String(COUNT)],
    ...["--state-dir", stateDir],
  ],
  { cwd: ROOT, stdio: process.env.BENCH_DEBUG ? "inherit" : "ignore" },
);

async function waitForAll(since: string, limitMs: number): Promise<number[]> {
  const started = Date.now();
  const arrivals: number[] = [];
  let seen = 0;
  while (seen < COUNT && Date.now() - started < limitMs) {
    // While the server restarts, a failed count is no news.
    const now = await connectedSince(since).catch((error: unknown) => {
      if (process.env.BENCH_DEBUG) console.error(error);
      return seen;
    });
    for (; seen < now; seen++) arrivals.push(Date.now() - started);
    await sleep(250);
  }
  return arrivals;
}

try {
  const first = await waitForAll(new Date(0).toISOString(), 180_000);
  console.log(
    `${first.length} of ${COUNT} simulated devices connected in ${((first.at(-1) ?? 0) / 1000).toFixed(1)} s`,
  );
  await sleep(5000);
  await server.kill();
  // Connections after the kill are reconnections (some land while the server still starts up).
  const killedAt = new Date().toISOString();
  // Down for 20 s: every agent has backed off for a while before the API returns.
  await sleep(20_000);
  server = await startFlotilla(env, { dataDir: server.dataDir, env: server.env, ports });
  const back = await waitForAll(killedAt, 120_000);
  const at = (share: number) =>
    ((back[Math.min(back.length - 1, Math.ceil(back.length * share) - 1)] ?? 0) / 1000).toFixed(1);
  console.log(
    `after kill -9 and 20 s down: ${back.length} of ${COUNT} back; half within ${at(0.5)} s, 95 % within ${at(0.95)} s, the last after ${at(1)} s of the API's return`,
  );
} finally {
  simulator.kill("SIGKILL");
  await server.stop();
  fs.rmSync(stateDir, { recursive: true, force: true });
  await cleanUp();
}
