// biome-ignore-all lint/style/noRestrictedImports: the benchmark runs the agent's simulator in this process next to the API.
// `npm run bench -w @flotilla/server` (after device-logs.ts), or `npm run bench:rollouts -w @flotilla/server`:
// a phased rollout over 1,000 simulated devices in one process (issue #23, docs/rollouts.md).
//
// Boots the API in this process (PostgreSQL: a throwaway database next to DATABASE_URL; PGlite
// with --pglite), its statements counted (support.ts), and runs the agent's simulator
// (startSimulator, the protocol code of `flotilla-agent simulate`) with BENCH_DEVICES devices
// (1,000) in a fleet on release A. Then:
//   1. without a release policy, release A2 reaches every device at once;
//   2. with a policy of three waves (10 %, 30 %, the rest; soak 0, every device healthy), release
//      B rolls out to completion.
// For each wave transition it reports the delay between the gate being met (the server received
// the report that made the last needed device of the wave healthy) and the next wave's first
// target-state change (the first device of the next wave answered a target with B), split into
// "judged" (until the next wave's `started_at`) and "told" (until a device fetched it). For both
// phases it reports the database statements per state report the API received (a transaction
// counts as one). Figures go into docs/benchmarks.md by hand.
import { parseArgs } from "node:util";
import { startSimulator } from "../../agent/src/sim/simulator.ts";
import { createApiKey } from "../src/features/api-keys/service.ts";
import { createFactories } from "../test/factories.ts";
import { startBenchApi, statements } from "./support.ts";

const { values } = parseArgs({ options: { pglite: { type: "boolean" } }, strict: true });
const COUNT = Number(process.env.BENCH_DEVICES ?? 1000);
const POLICY = {
  waves: [
    { name: "ten", selector: { type: "share" }, size: { percent: 10 } },
    { name: "thirty", selector: { type: "share" }, size: { percent: 30 } },
    { name: "rest", selector: { type: "share" } },
  ],
  rollback_on_halt: true,
};

const api = await startBenchApi(values.pglite ? "pglite" : "postgres");
// A failed run still drops its database.
process.on("uncaughtException", (error) => {
  console.error(error);
  void api.stop().finally(() => process.exit(1));
});
const { db, ctx, origin } = api;
const factories = createFactories(db.orm);
const owner = await factories.user();
const org = await factories.organization({ admins: [owner], plan: "production-v2" });
const fleet = await factories.fleet(org, { deviceType: "raspberrypi4-64" });
const token = await ctx.tokens.start(owner);
const provisioningKey = await createApiKey(db.orm, { actor: fleet.actor, role: "provisioning-api-key" });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** A draft release with one service; finalizing it through the data API is what moves the fleet. */
async function draftRelease() {
  const row = await factories.release(fleet);
  await db.query(`UPDATE "release" SET is_final = false, is_finalized_at__date = NULL WHERE id = $1`, [row.id]);
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO "service" (application, service_name) VALUES ($1, 'main')
       ON CONFLICT (application, service_name) DO UPDATE SET service_name = EXCLUDED.service_name RETURNING id`,
    [fleet.id],
  );
  const { rows: images } = await db.query<{ id: number }>(
    `INSERT INTO "image" (is_a_build_of__service, is_stored_at__image_location, status)
     VALUES ($1, 'registry.local/main:' || $2, 'success') RETURNING id`,
    [rows[0]?.id, row.commit],
  );
  await db.query(`INSERT INTO "release_image" (image, is_part_of__release) VALUES ($1, $2)`, [images[0]?.id, row.id]);
  return row;
}
const finalize = (id: number) => call("PATCH", `/v7/release(${id})`, { is_final: true });

// What the server saw, by device id: the first report running `watched` with every service up,
// and the first target state it answered with `watched`.
let watched = "";
const healthyAt = new Map<number, number>();
const targetedAt = new Map<string, number>();
let reports = 0;
const record = ctx.devices.reports.record;
ctx.devices.reports.record = async (device, report) => {
  reports += 1;
  const app = Object.values(report.apps ?? {})[0];
  const services = Object.values(app?.releases?.[watched]?.services ?? {});
  if (
    watched &&
    app?.release_uuid === watched &&
    services.length > 0 &&
    services.every((s) => s.status === "Running") &&
    !healthyAt.has(device.id)
  ) {
    healthyAt.set(device.id, performance.now());
  }
  return record(device, report);
};
const targetStates = ctx.devices.targetStates;
const get = targetStates.get.bind(targetStates);
targetStates.get = async (uuid) => {
  const state = await get(uuid);
  if (watched && !targetedAt.has(uuid) && state && JSON.stringify(state).includes(watched)) {
    targetedAt.set(uuid, performance.now());
  }
  return state;
};

/** The benchmark's own statements (its polls), left out of the figures. */
let own = 0;
async function runningCount(release: number) {
  own += 1;
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "device" WHERE belongs_to__application = $1 AND is_running__release = $2`,
    [fleet.id, release],
  );
  return rows[0]?.n ?? 0;
}
async function untilAllRun(release: number, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  while ((await runningCount(release)) < COUNT) {
    if (Date.now() > until) throw new Error(`only ${await runningCount(release)} of ${COUNT} devices run ${release}`);
    await sleep(500);
  }
}

console.log(`rollouts: ${COUNT} simulated devices in this process, API on ${api.label}`);
const releaseA = await draftRelease();
await finalize(releaseA.id);
const simulator = await startSimulator({
  apiUrl: origin,
  provisioningKey,
  fleetId: fleet.id,
  count: COUNT,
  busyIntervalMs: 1000,
  disconnectChance: 0,
  log: () => undefined,
});
await untilAllRun(releaseA.id, 300_000);
console.log(`  ${COUNT} devices registered and running release A`);

// 1. No policy: every device moves at once.
const releaseA2 = await draftRelease();
watched = releaseA2.commit;
let before = { statements: statements - own, reports, at: performance.now() };
await finalize(releaseA2.id);
await untilAllRun(releaseA2.id, 300_000);
await ctx.devices.reports.flush();
const plain = {
  statements: statements - own - before.statements,
  reports: reports - before.reports,
  seconds: (performance.now() - before.at) / 1000,
};

// 2. A three-wave policy.
await call("POST", "/v7/release_policy", { application: fleet.id, policy: POLICY });
const releaseB = await draftRelease();
watched = releaseB.commit;
healthyAt.clear();
targetedAt.clear();
before = { statements: statements - own, reports, at: performance.now() };
await finalize(releaseB.id);
await untilAllRun(releaseB.id, 600_000);
await ctx.devices.reports.flush();
const phased = {
  statements: statements - own - before.statements,
  reports: reports - before.reports,
  seconds: (performance.now() - before.at) / 1000,
};
const { rows: waves } = await db.query<{ wave_index: number; started_at: Date; device_count: number }>(
  `SELECT w.wave_index, w.started_at, w.device_count FROM "rollout_wave" w JOIN "rollout" r ON r.id = w.rollout
    WHERE r.to__release = $1 ORDER BY w.wave_index`,
  [releaseB.id],
);
const { rows: members } = await db.query<{ wave_index: number; id: number; uuid: string }>(
  `SELECT rd.wave_index, d.id, d.uuid FROM "rollout_device" rd JOIN "rollout" r ON r.id = rd.rollout
     JOIN "device" d ON d.id = rd.device WHERE r.to__release = $1`,
  [releaseB.id],
);
// Server clock (started_at) to this process's clock: both are this machine's.
const offset = Date.now() - performance.now();
const ms = (value: number) => `${Math.round(value)} ms`;
console.log(`  waves: ${waves.map((w) => w.device_count).join(" / ")} devices`);
for (const wave of waves.slice(1)) {
  const previous = members.filter((m) => m.wave_index === wave.wave_index - 1);
  const gateMet = Math.max(...previous.map((m) => healthyAt.get(m.id) ?? Number.NaN));
  const started = new Date(wave.started_at).getTime() - offset;
  const firstTarget = Math.min(
    ...members.filter((m) => m.wave_index === wave.wave_index).map((m) => targetedAt.get(m.uuid) ?? Infinity),
  );
  console.log(
    `  wave ${wave.wave_index} → ${wave.wave_index + 1}: gate met → next wave's first target ${ms(firstTarget - gateMet)}` +
      ` (judged ${ms(started - gateMet)}, told ${ms(firstTarget - started)})`,
  );
}
for (const [label, phase] of [
  ["without a policy (all at once)", plain],
  ["with the three-wave policy", phased],
] as const) {
  console.log(
    `  ${label}: ${phase.reports} state reports in ${phase.seconds.toFixed(1)} s, ${phase.statements} statements, ` +
      `${(phase.statements / phase.reports).toFixed(2)} per report`,
  );
}
await simulator.stop();
await api.stop();
