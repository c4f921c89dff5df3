// `npm run bench` (also alone: `npm run bench:scale [-- --devices N] [-- --quick]`): how many
// connected devices one API instance holds, and a restart under all of them (issue [scale]).
//
// Boots the real server process on a throwaway database of the PostgreSQL server at DATABASE_URL
// (default this machine's) with a probe loaded (scripts/lib/scale-probe.mjs: memory, CPU, open
// descriptors, event-loop delay). The demo fleet polls every 15 minutes (the fleet's
// BALENA_SUPERVISOR_POLL_INTERVAL, jittered by the agent) and the devices report metrics once a
// minute, as balena's defaults have it. Simulator processes (scripts/lib/scale-devices.ts, at
// most --per-process devices each) register the devices; each device opens its own connections,
// as a real agent does: the cloudlink websocket, its log stream (open while it logs, 30 s idle),
// and a keep-alive connection for reports and polls.
//
// 1. Once every device is connected and a warm-up has passed, a window of --window seconds
//    measures the API (resident memory, memory per device, CPU, event-loop delay p99) and, as
//    the demo user meanwhile, one dashboard device-list page (50 rows and the count) and the fleet
//    summary counts, one after the other, every second.
// 2. Reconnect storm: `kill -9` of the API, 10 s down, a restart on the same ports and database;
//    the time until every device's cloudlink socket is back, the 5xx answers the devices got and
//    the database connection errors the API logged meanwhile.
//
// The machine's hard limit on open files (`ulimit -Hn`) bounds the devices one process can hold
// at about a third of it: --workers N runs the instance as N worker processes (FLOTILLA_WORKERS,
// with Redis at REDIS_URL, default this machine's), which share the devices' connections; the
// default is the fewest workers whose limits hold --devices (default 20,000). --quick (or BENCH_QUICK=1):
// 1,000 devices, a 60 s window (one report of each device). --profile writes CPU profiles of the API during the window and the
// storm, and a heap snapshot after the window, to --profile-dir (default a temporary folder); with
// --profile the devices' registration and connection (until all are connected) is a profile too.
// --connect-only stops once every device is connected; --connect-timeout S (default 600) is how
// long to wait for that, after which the bench reports how many did and stops.
import { type ChildProcess, execFileSync, fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { cleanUp, type RunningFlotilla, startFlotilla } from "../e2e/support/flotilla.ts";
import { enc, LIST_EXPAND, LIST_SELECT } from "./lib/dashboard-queries.ts";
import { apiAt, prepareDemoFleet } from "./lib/demo-fleet.ts";
import type { DevicesAnswer, DevicesCommand, DevicesStats } from "./lib/scale-devices.ts";

const { values } = parseArgs({
  options: {
    devices: { type: "string" },
    workers: { type: "string" },
    "per-process": { type: "string" },
    window: { type: "string" },
    quick: { type: "boolean" },
    profile: { type: "boolean" },
    "profile-dir": { type: "string" },
    "skip-storm": { type: "boolean" },
    "connect-only": { type: "boolean" },
    "connect-timeout": { type: "string" },
  },
  strict: true,
});
const ROOT = path.resolve(import.meta.dirname, "..");
const QUICK = values.quick === true || process.env.BENCH_QUICK === "1";
const openFilesLimit = Number(execFileSync("bash", ["-c", "ulimit -Hn"]).toString().trim()) || 20_000;
// Three sockets a device (cloudlink, log stream, keep-alive calls) and room for the rest.
const mostThatFit = Math.floor((openFilesLimit - 600) / 3);
const DEVICES = Number(values.devices ?? (QUICK ? 1000 : 20_000));
const WORKERS = Number(values.workers ?? Math.ceil(DEVICES / mostThatFit));
const PER_PROCESS = Number(values["per-process"] ?? 2500);
const WINDOW_MS = Number(values.window ?? (QUICK ? 60 : 120)) * 1000;
// New devices finish installing together and then report a minute later: a window right after
// that hears none.
const WARMUP_MS = 60_000;
const REPORT_INTERVAL_MS = 60_000;
const POLL_INTERVAL_MS = 15 * 60_000;
const DOWN_MS = 10_000;
const CONNECT_TIMEOUT_MS = Number(values["connect-timeout"] ?? 600) * 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;

if ((DEVICES * 3) / WORKERS + 600 > openFilesLimit) {
  console.log(
    `note: ${DEVICES} devices need about ${DEVICES * 3} sockets, more than ${WORKERS} processes hold with this machine's limit of ${openFilesLimit} open files per process`,
  );
}

const probeFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-scale-")), "probe.json");
const profileDir = path.resolve(values["profile-dir"] ?? path.join(os.tmpdir(), "flotilla-scale-profile"));
const env = {
  FLOTILLA_RATE_LIMIT: "10000000",
  LOG_LEVEL: "info",
  NODE_OPTIONS: `--import ${pathToFileURL(path.join(ROOT, "scripts/lib/scale-probe.mjs")).href}`,
  BENCH_PROBE_FILE: probeFile,
  ...(values.profile ? { BENCH_PROFILE: "1" } : {}),
  ...(WORKERS > 1
    ? { FLOTILLA_WORKERS: String(WORKERS), REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }
    : {}),
};
if (values.profile) fs.mkdirSync(profileDir, { recursive: true });
process.env.DATABASE_URL ??= "postgres://postgres@127.0.0.1:5432/postgres";

type Probe = {
  pid: number;
  rss: number;
  peakRss: number;
  heapUsed: number;
  cpuMs: number;
  elapsedMs: number;
  loopP50Ms: number;
  loopP99Ms: number;
  loopMaxMs: number;
};
/** The probes of the instance's live processes (the primary and its workers, or the one process). */
function readProbes(): Probe[] {
  const prefix = `${path.basename(probeFile)}.`;
  return fs
    .readdirSync(path.dirname(probeFile))
    .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
    .map(
      (name) =>
        ({
          ...JSON.parse(fs.readFileSync(path.join(path.dirname(probeFile), name), "utf8")),
          pid: Number(name.slice(prefix.length)),
        }) as Probe,
    )
    .filter((probe) => fs.existsSync(`/proc/${probe.pid}`));
}
/** The instance as one: memory and CPU summed over its processes, the event loop of the slowest. */
function readProbe(): Probe {
  const probes = readProbes();
  const total = (field: keyof Probe) => probes.reduce((sum, probe) => sum + probe[field], 0);
  const most = (field: keyof Probe) => Math.max(...probes.map((probe) => probe[field]));
  return {
    pid: server.process.pid ?? 0,
    rss: total("rss"),
    peakRss: total("peakRss"),
    heapUsed: total("heapUsed"),
    cpuMs: total("cpuMs"),
    elapsedMs: most("elapsedMs"),
    loopP50Ms: most("loopP50Ms"),
    loopP99Ms: most("loopP99Ms"),
    loopMaxMs: most("loopMaxMs"),
  };
}
const openDescriptors = () =>
  readProbes().reduce((sum, probe) => sum + fs.readdirSync(`/proc/${probe.pid}/fd`).length, 0);
/** Asks each process's probe for a CPU profile or a heap snapshot and waits until they are written. */
async function dump(what: "profile" | "heap", name: string) {
  if (!values.profile) return;
  const targets = readProbes().map((probe) => {
    const target = path.join(profileDir, `${probe.pid}-${name}`);
    fs.writeFileSync(`${probeFile}.${probe.pid}.ask`, `${what} ${target}`);
    return target;
  });
  // Written in one go, but a heap snapshot takes a while: until its size holds for 2 s.
  for (const target of targets) {
    for (let waited = 0, size = -1; waited < 300_000; waited += 2000) {
      await sleep(2000);
      const now = fs.existsSync(target) ? fs.statSync(target).size : -1;
      if (now > 0 && now === size) break;
      size = now;
    }
  }
}
/** Opens a new measuring window in the API's probe and waits for its first sample. */
async function resetProbe(server: RunningFlotilla) {
  server.process.kill("SIGUSR2");
  await sleep(1500);
}

let server = await startFlotilla(env);
const ports = { dashboard: Number(new URL(server.dashboardUrl).port), api: Number(new URL(server.apiUrl).port) };
const api = server.apiUrl;
const database = new pg.Client({ connectionString: server.env.DATABASE_URL });
await database.connect();
const call = apiAt(api);
const { token, fleetId, key } = await prepareDemoFleet(server.env.DATABASE_URL ?? "", call, "scale bench");
await call("POST", "/v7/application_config_variable", token, {
  application: fleetId,
  name: "BALENA_SUPERVISOR_POLL_INTERVAL",
  value: String(POLL_INTERVAL_MS),
});

/** The dashboard's device table page (apps/web/src/features/devices/data.ts) and its count. */
const listFilter = enc(`belongs_to__application eq ${fleetId}`);
const dashboardPages = {
  "device list page (50 rows and the count)": [
    `/v7/device?$select=${LIST_SELECT}&$filter=${listFilter}&$expand=${enc(LIST_EXPAND)}&$orderby=${enc("device_name asc")}&$top=50&$skip=0`,
    `/v7/device/$count?$filter=${listFilter}`,
  ],
  "fleet summary counts": [
    `/v7/application(${fleetId})?$select=id,app_name,total_devices,device_count_grouped_by_status`,
  ],
};

const connectedCount = async (since: string | null) =>
  Number(
    (
      await database.query<{ n: string }>(
        since === null
          ? `SELECT count(*) AS n FROM device WHERE belongs_to__application = $1 AND is_connected_to_vpn`
          : `SELECT count(*) AS n FROM device WHERE belongs_to__application = $1 AND is_connected_to_vpn AND last_vpn_event > $2`,
        since === null ? [fleetId] : [fleetId, since],
      )
    ).rows[0]?.n,
  );

type Simulator = { child: ChildProcess; count: number; ask(command: DevicesCommand): Promise<DevicesAnswer> };
function startSimulatorProcess(count: number, index: number): Simulator {
  const child = fork(path.join(ROOT, "scripts/lib/scale-devices.ts"), [], {
    execArgv: ["--import", "tsx"],
    stdio: process.env.BENCH_DEBUG ? "inherit" : ["ignore", "ignore", "ignore", "ipc"],
  });
  const ask = (command: DevicesCommand) =>
    new Promise<DevicesAnswer>((resolve, reject) => {
      child.once("message", (answer: DevicesAnswer) =>
        answer.op === "failed" ? reject(new Error(`simulator ${index}: ${answer.message}`)) : resolve(answer),
      );
      child.send(command);
    });
  return { child, count, ask };
}
const simulatorStats = async (simulators: Simulator[]) =>
  Promise.all(
    simulators.map(async (simulator) => {
      const answer = await simulator.ask({ op: "stats" });
      if (answer.op !== "stats") throw new Error("the simulator did not answer its stats");
      return answer.stats;
    }),
  );
const sum = (all: DevicesStats[], field: keyof DevicesStats) => all.reduce((total, stats) => total + stats[field], 0);

const percentile = (sorted: number[], share: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * share) - 1))] ?? Number.NaN;

/** Every second, the pages the dashboard loads, one after the other, until `until`. */
async function dashboardLatencies(until: number) {
  const latencies = new Map<string, number[]>(Object.keys(dashboardPages).map((name) => [name, []]));
  let failures = 0;
  while (Date.now() < until) {
    for (const [name, urls] of Object.entries(dashboardPages)) {
      const started = performance.now();
      try {
        await Promise.all(urls.map((url) => call("GET", url, token)));
        latencies.get(name)?.push(performance.now() - started);
      } catch (error) {
        failures += 1;
        if (process.env.BENCH_DEBUG) console.error(error);
      }
    }
    await sleep(1000);
  }
  return { latencies, failures };
}

const stateRoot = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-scale-devices-"));
const simulators: Simulator[] = [];
const serverLog = () => server.output();
const DB_CONNECTION_ERROR =
  /too many clients|remaining connection slots|timeout exceeded when trying to connect|Connection terminated|ECONNREFUSED 127\.0\.0\.1:5432/g;
const countMatches = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;
const errorLines = (text: string) => text.split("\n").filter((line) => /"level":(50|60)/.test(line));
/** The errors the API logged, counted by message: "3 × device services: … (deadlock detected)". */
function errorSummary(lines: string[]) {
  const counts = new Map<string, number>();
  for (const line of lines) {
    let text = line.slice(0, 200);
    try {
      const entry = JSON.parse(line) as { msg?: string; err?: { message?: string } };
      text = `${entry.msg ?? ""}${entry.err?.message ? ` (${entry.err.message.slice(0, 160)})` : ""}`;
    } catch {
      // not JSON: the line as it is
    }
    counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  return [...counts].map(([text, count]) => `${count} × ${text}`).join("; ") || "none";
}

try {
  await sleep(2000);
  const idle = readProbe();
  console.log(
    `scale bench: ${DEVICES} devices in ${Math.ceil(DEVICES / PER_PROCESS)} simulator process(es), ` +
      `${WORKERS} API worker process(es), open-files limit ${openFilesLimit}, API idle at ${mib(idle.rss)} resident`,
  );

  await resetProbe(server);
  const registering = Date.now();
  for (let index = 0, left = DEVICES; left > 0; index++) {
    const count = Math.min(PER_PROCESS, left);
    simulators.push(startSimulatorProcess(count, index));
    left -= count;
  }
  await Promise.all(
    simulators.map((simulator, index) =>
      simulator.ask({
        op: "start",
        apiUrl: api,
        provisioningKey: key,
        fleetId,
        count: simulator.count,
        intervalMs: REPORT_INTERVAL_MS,
        stateDir: path.join(stateRoot, String(index)),
      }),
    ),
  );
  console.log(`registered ${DEVICES} devices in ${((Date.now() - registering) / 1000).toFixed(1)} s`);

  const connecting = Date.now();
  const connectedBy: string[] = [];
  for (let connected = 0, lastNoted = 0; connected < DEVICES; ) {
    if (Date.now() - connecting > CONNECT_TIMEOUT_MS) {
      const probe = readProbe();
      console.log(`  connected over time: ${connectedBy.join(", ")}`);
      console.log(
        `  API CPU since registering ${((probe.cpuMs / probe.elapsedMs) * 100).toFixed(0)} % of one core; simulators ${sum(await simulatorStats(simulators), "cpuMs").toFixed(0)} ms CPU`,
      );
      await dump("profile", "connect.cpuprofile");
      throw new Error(`only ${connected} of ${DEVICES} devices connected`);
    }
    await sleep(2000);
    connected = await connectedCount(null);
    if (Date.now() - lastNoted >= 10_000) {
      lastNoted = Date.now();
      connectedBy.push(`${((Date.now() - connecting) / 1000).toFixed(0)} s ${connected}`);
    }
  }
  console.log(`all ${DEVICES} cloudlink sockets open ${((Date.now() - connecting) / 1000).toFixed(1)} s later`);
  console.log(`  connected over time: ${connectedBy.join(", ")}`);
  {
    const probe = readProbe();
    const simulatorsNow = await simulatorStats(simulators);
    console.log(
      `  registration and connection: API CPU ${((probe.cpuMs / probe.elapsedMs) * 100).toFixed(0)} % of one core, ` +
        `simulators ${((sum(simulatorsNow, "cpuMs") / probe.elapsedMs) * 100).toFixed(0)} % of one core (since they started), ` +
        `event-loop delay p99 ${probe.loopP99Ms.toFixed(0)} ms, max ${probe.loopMaxMs.toFixed(0)} ms`,
    );
  }
  await dump("profile", "connect.cpuprofile");
  // --connect-only ends here.
  if (!values["connect-only"]) {
    // New devices install the fleet's release first, reporting every few seconds: measure them once
    // that is over (a few stay `configuring` while they apply the fleet's configuration).
    const summary = dashboardPages["fleet summary counts"][0] ?? "";
    for (let operational = 0; operational < DEVICES * 0.98 && Date.now() - connecting < 600_000; ) {
      await sleep(5000);
      operational =
        (await call<{ d: { device_count_grouped_by_status: Record<string, number> }[] }>("GET", summary, token)).d[0]
          ?.device_count_grouped_by_status.operational ?? 0;
    }
    console.log(
      `devices by status ${((Date.now() - connecting) / 1000).toFixed(1)} s after registering: ` +
        JSON.stringify((await call<{ d: { device_count_grouped_by_status: unknown }[] }>("GET", summary, token)).d[0]),
    );
    await sleep(WARMUP_MS);

    console.log(`  errors the API logged meanwhile: ${errorSummary(errorLines(serverLog()))}`);

    // 1. The measuring window.
    await resetProbe(server);
    const before = await simulatorStats(simulators);
    const errorsBefore = errorLines(serverLog()).length;
    const { latencies, failures } = await dashboardLatencies(Date.now() + WINDOW_MS);
    const probe = readProbe();
    const after = await simulatorStats(simulators);
    await dump("profile", "window.cpuprofile");
    const delta = (field: keyof DevicesStats) => sum(after, field) - sum(before, field);
    const seconds = probe.elapsedMs / 1000;
    const simulatorCpu = delta("cpuMs") / probe.elapsedMs;
    console.log(`\n1. ${DEVICES} connected devices, ${seconds.toFixed(0)} s window:`);
    console.log(
      `  API resident memory ${mib(probe.rss)} (peak ${mib(probe.peakRss)}, heap ${mib(probe.heapUsed)}), ` +
        `${((probe.rss - idle.rss) / DEVICES / 1024).toFixed(1)} KiB per device over the idle ${mib(idle.rss)}; ` +
        `${openDescriptors()} open descriptors`,
    );
    console.log(
      `  API CPU ${((probe.cpuMs / probe.elapsedMs) * 100).toFixed(0)} % of one core; event-loop delay (the slowest process) p50 ${probe.loopP50Ms.toFixed(1)} ms, ` +
        `p99 ${probe.loopP99Ms.toFixed(1)} ms, max ${probe.loopMaxMs.toFixed(0)} ms` +
        (WORKERS > 1
          ? `; p99 by process ${readProbes()
              .map((one) => one.loopP99Ms.toFixed(1))
              .join(", ")} ms`
          : ""),
    );
    console.log(
      `  simulators: ${(simulatorCpu * 100).toFixed(0)} % of one core in all, ${mib(sum(after, "rss"))} resident; ` +
        `${(delta("reports") / seconds).toFixed(0)} reports/s (${delta("reportErrors")} failed), ` +
        `${(delta("polls") / seconds).toFixed(1)} polls/s (${delta("pollErrors")} failed), ${(delta("logLines") / seconds).toFixed(0)} log lines/s, ` +
        `${delta("cloudlinkDrops")} cloudlink drops, ${delta("serverErrors")} answers 5xx`,
    );
    for (const [name, list] of latencies) {
      const sorted = [...list].sort((a, b) => a - b);
      console.log(
        `  dashboard ${name}: p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p95 ${percentile(sorted, 0.95).toFixed(1)} ms (${sorted.length} loads)`,
      );
    }
    console.log(
      `  dashboard failures ${failures}; errors the API logged: ${errorSummary(errorLines(serverLog()).slice(errorsBefore))}`,
    );

    await dump("heap", "window.heapsnapshot");

    // 2. The reconnect storm.
    if (!values["skip-storm"]) {
      const stormBefore = await simulatorStats(simulators);
      await server.kill();
      const killedAt = new Date().toISOString();
      await sleep(DOWN_MS);
      server = await startFlotilla(env, { dataDir: server.dataDir, env: server.env, ports });
      const ready = Date.now();
      await resetProbe(server);
      const arrivals: number[] = [];
      for (let back = 0; back < DEVICES && Date.now() - ready < 180_000; ) {
        const now = await connectedCount(killedAt);
        for (; back < now; back++) arrivals.push(Date.now() - ready);
        await sleep(500);
      }
      await sleep(5000); // answers still on their way
      const stormProbe = readProbe();
      await dump("profile", "storm.cpuprofile");
      const stormAfter = await simulatorStats(simulators);
      const at = (share: number) => (percentile(arrivals, share) / 1000).toFixed(1);
      const log = serverLog();
      console.log(`\n2. kill -9 of the API under ${DEVICES} devices, ${DOWN_MS / 1000} s down, then a restart:`);
      console.log(
        `  ${arrivals.length} of ${DEVICES} back; half within ${at(0.5)} s, 95 % within ${at(0.95)} s, the last after ${at(1)} s of the API's return`,
      );
      console.log(
        `  answers 5xx to the devices ${sum(stormAfter, "serverErrors") - sum(stormBefore, "serverErrors")}; ` +
          `database connection errors logged ${countMatches(log, DB_CONNECTION_ERROR)}; errors logged: ${errorSummary(errorLines(log))}`,
      );
      console.log(
        `  API meanwhile: peak resident ${mib(stormProbe.peakRss)}, CPU ${((stormProbe.cpuMs / stormProbe.elapsedMs) * 100).toFixed(0)} % of one core, ` +
          `event-loop delay p99 ${stormProbe.loopP99Ms.toFixed(0)} ms, max ${stormProbe.loopMaxMs.toFixed(0)} ms`,
      );
    }
  }
} finally {
  await Promise.all(
    simulators.map(async (simulator) => {
      simulator.child.send({ op: "stop" } satisfies DevicesCommand);
      await Promise.race([new Promise((resolve) => simulator.child.once("exit", resolve)), sleep(15_000)]);
      simulator.child.kill("SIGKILL");
    }),
  );
  await database.end();
  await server.stop();
  if (values.profile) console.log(`CPU profiles in ${profileDir}`);
  fs.rmSync(stateRoot, { recursive: true, force: true });
  fs.rmSync(path.dirname(probeFile), { recursive: true, force: true });
  await cleanUp();
}
