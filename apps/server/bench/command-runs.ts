// `npm run bench -w @flotilla/server` (after device-logs.ts), or `npm run bench:commands -w @flotilla/server`:
// a bulk command (docs/bulk-commands.md) on 1,000 simulated devices.
//
// Boots the real API in this process on PGlite (or a throwaway PostgreSQL database with
// --postgres), connects COUNT simulated devices in this same process (the agent's simulator, the
// real protocol and cloudlink sockets, a 60 s state interval so reports stay out of the way),
// then runs `uname -a` on all of them with concurrency 1000 and with 100: POST /command/v1/runs,
// followed on its SSE stream until the summary. Prints the time until all results are in, and per
// device the time from the POST to its result (p50, p95, max).
//   --count N (default 1000)
// Figures go into docs/benchmarks.md ("Bulk commands") by hand, with the machine.
import os from "node:os";
import { parseArgs } from "node:util";
import { createSseParser } from "@flotilla/domain";
import { createApiKey } from "../src/features/api-keys/service.ts";
import { createFactories } from "../test/factories.ts";
import { startBenchApi } from "./support.ts";

type Simulator = {
  devices: { uuid: string; deviceId: number }[];
  stop(): Promise<void>;
};
// The agent is loaded at run time, as in the server's tests (no app imports another app).
const agentModule = new URL("../../agent/src/index.ts", import.meta.url).href;
const { startSimulator } = (await import(/* @vite-ignore */ agentModule)) as {
  startSimulator(options: Record<string, unknown>): Promise<Simulator>;
};

const { values } = parseArgs({
  options: { count: { type: "string" }, postgres: { type: "boolean" } },
  strict: true,
});
const COUNT = Number(values.count ?? 1000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const api = await startBenchApi(values.postgres ? "postgres" : "pglite");
const factories = createFactories(api.db.orm);
const owner = await factories.user();
const org = await factories.organization({ admins: [owner] });
await api.db.query(
  `INSERT INTO "subscription" (is_for__organization, is_for__plan) SELECT $1, id FROM "plan" WHERE billing_code <> 'free' LIMIT 1`,
  [org.id],
);
const fleet = await factories.fleet(org, { deviceType: "raspberrypi4-64" });
const provisioningKey = await createApiKey(api.db.orm, { actor: fleet.actor, role: "provisioning-api-key" });
const token = await api.ctx.tokens.start(owner);

console.log(
  `bulk command: ${COUNT} simulated devices in the API's process on ${api.label}, ` +
    `${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), Node ${process.version}`,
);
const registering = performance.now();
const simulator = await startSimulator({
  apiUrl: api.origin,
  provisioningKey,
  fleetId: fleet.id,
  count: COUNT,
  intervalMs: 60_000,
  disconnectChance: 0,
  log: () => undefined,
});
const ids = simulator.devices.map((device) => device.deviceId);
for (;;) {
  const connected = ids.filter((id) => api.ctx.devices.relay.isConnectedHere(id)).length;
  const { rows } = await api.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM device WHERE belongs_to__application = $1 AND os_version IS NOT NULL`,
    [fleet.id],
  );
  if (connected === COUNT && rows[0]?.n === COUNT) break;
  if (performance.now() - registering > 180_000) throw new Error(`only ${connected} devices connected`);
  await sleep(250);
}
console.log(`${COUNT} devices registered and connected in ${((performance.now() - registering) / 1000).toFixed(1)} s`);

type Summary = Record<string, number>;
async function run(concurrency: number) {
  const started = performance.now();
  const startedAt = Date.now();
  const created = await fetch(`${api.origin}/command/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ command: "uname -a", devices: ids, concurrency, timeout_s: 60 }),
  });
  if (created.status !== 201) throw new Error(`POST: ${created.status} ${await created.text()}`);
  const { id } = (await created.json()) as { id: number };
  const accepted = performance.now() - started;
  const stream = await fetch(`${api.origin}/command/v1/runs/${id}/stream`, {
    headers: { authorization: `Bearer ${token}` },
  });
  let summary: Summary | undefined;
  let outputs = 0;
  const decoder = new TextDecoder();
  const parser = createSseParser();
  for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
    for (const { event, data } of parser.feed(decoder.decode(chunk, { stream: true }))) {
      if (event === "output") outputs += 1;
      if (event === "summary") summary = (data as { summary: Summary }).summary;
    }
  }
  const total = performance.now() - started;
  const detail = (await (
    await fetch(`${api.origin}/command/v1/runs/${id}`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as { devices: { finished_at: string | null; duration_ms: number | null }[] };
  const latencies = detail.devices
    .map((device) => (device.finished_at ? new Date(device.finished_at).getTime() - startedAt : Number.NaN))
    .filter((ms) => Number.isFinite(ms))
    .sort((a, b) => a - b);
  const on = detail.devices
    .map((device) => device.duration_ms ?? Number.NaN)
    .filter((ms) => Number.isFinite(ms))
    .sort((a, b) => a - b);
  const pick = (list: number[], p: number) => list[Math.min(list.length - 1, Math.floor(list.length * p))] ?? 0;
  console.log(
    [
      `concurrency ${concurrency}: all ${COUNT} results in ${(total / 1000).toFixed(2)} s (POST answered in ${accepted.toFixed(0)} ms)`,
      `  summary ${JSON.stringify(summary)}, ${outputs} output events`,
      `  per device, POST → result: p50 ${pick(latencies, 0.5)} ms, p95 ${pick(latencies, 0.95)} ms, max ${latencies.at(-1) ?? 0} ms`,
      `  per device, exec-start → exit: p50 ${pick(on, 0.5)} ms, p95 ${pick(on, 0.95)} ms`,
    ].join("\n"),
  );
}

await run(1000);
await run(100);
await simulator.stop();
await api.stop();
