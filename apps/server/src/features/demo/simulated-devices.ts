import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.ts";
import type { Database } from "../../db/index.ts";
import { createApiKey } from "../api-keys/service.ts";
import { DEMO_FLEET } from "./seed.ts";

const AGENT_BIN = fileURLToPath(new URL("../../../../agent/bin/flotilla-agent.mjs", import.meta.url));

/** A few places for the demo's devices (the device protocol carries no location; the demo sets custom ones). */
const DEMO_LOCATIONS = [
  ["52.3676", "4.9041"], // Amsterdam
  ["52.5200", "13.4050"], // Berlin
  ["38.7223", "-9.1393"], // Lisbon
  ["40.7128", "-74.0060"], // New York
  ["35.6762", "139.6503"], // Tokyo
] as const;

async function demoFleet(db: Database) {
  const { rows } = await db.query<{ id: number; actor: number }>(
    `SELECT a.id, a.actor FROM "application" a JOIN "organization" o ON o.id = a.organization
      WHERE a.app_name = $1 AND o.handle = 'demo'`,
    [DEMO_FLEET],
  );
  return rows[0];
}

/** The demo's provisioning key, kept (0600) in the data directory so restarts reuse it. */
async function provisioningKey(db: Database, actor: number, stateDir: string) {
  const file = path.join(stateDir, "provisioning-key");
  if (fs.existsSync(file)) return fs.readFileSync(file, "utf8").trim();
  const key = await createApiKey(db.orm, {
    actor,
    role: "provisioning-api-key",
    name: "Demo devices",
    description: "Registers the demo's simulated devices",
  });
  fs.writeFileSync(file, key, { mode: 0o600 });
  return key;
}

/** Spreads freshly registered demo devices over a few cities and makes the first a canary, once they exist. */
async function placeDevices(db: Database, fleetId: number, count: number, signal: AbortSignal) {
  for (let attempt = 0; attempt < 60 && !signal.aborted; attempt++) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "device" WHERE belongs_to__application = $1`,
      [fleetId],
    );
    if ((rows[0]?.n ?? 0) >= count) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  if (signal.aborted) return;
  const values = DEMO_LOCATIONS.map((_, i) => `(${i}, $${2 * i + 2}, $${2 * i + 3})`).join(", ");
  await db.query(
    `UPDATE "device" d SET custom_latitude = l.lat, custom_longitude = l.lng
       FROM (VALUES ${values}) AS l(slot, lat, lng)
      WHERE d.belongs_to__application = $1 AND d.custom_latitude IS NULL AND l.slot = d.id % ${DEMO_LOCATIONS.length}`,
    [fleetId, ...DEMO_LOCATIONS.flat()],
  );
  // The first device is the canary of the demo's release policy (seed.ts).
  await db.query(
    `INSERT INTO "device_tag" (device, tag_key, value)
     SELECT id, 'canary', 'yes' FROM "device" WHERE belongs_to__application = $1 ORDER BY id LIMIT 1
     ON CONFLICT DO NOTHING`,
    [fleetId],
  );
}

/**
 * With the demo on, `demo-fleet` gets FLOTILLA_DEMO_DEVICES simulated devices (issue 7). They run
 * in `flotilla-agent simulate` next to the server — the very protocol code real devices use —
 * as a child process the server starts and stops, with their identities kept under the data
 * directory so a restart brings the same devices back. Returns a stop function.
 */
export async function startDemoDevices(
  db: Database,
  config: Config,
  log: FastifyBaseLogger,
  apiPort: number,
): Promise<() => Promise<void>> {
  const none = async () => undefined;
  if (!config.demo || config.demoDevices === 0) return none;
  const fleet = await demoFleet(db);
  if (!fleet) return none;
  const stateDir = path.join(config.dataDir, "demo-devices");
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const fresh = !fs.existsSync(path.join(stateDir, "simulated-devices.json"));
  const key = await provisioningKey(db, fleet.actor, stateDir);
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  const local = `${config.tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${apiPort}`;
  const args = [
    AGENT_BIN,
    "simulate",
    // The generated certificate names the local address; the operator's names the API URL only.
    ...["--api", config.tls && !config.tls.generated ? config.apiUrl : local],
    ...["--provisioning-key", key, "--fleet", String(fleet.id), "--count", String(config.demoDevices)],
    ...["--state-dir", stateDir],
    ...["--busy-interval-ms", String(config.demoBusyIntervalMs)],
  ];
  const child: ChildProcess = spawn(process.execPath, args, {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      // The simulated devices trust the CA real devices get in config.json.
      ...(config.tls?.caFile ? { NODE_EXTRA_CA_CERTS: config.tls.caFile } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) if (line.trim()) log.info(`demo devices: ${line.trim()}`);
  };
  child.stdout?.on("data", forward);
  child.stderr?.on("data", forward);
  child.on("exit", (code, signal) => {
    if (!stopping) log.warn(`demo devices: the simulator exited (${signal ?? code})`);
  });
  let stopping = false;
  const placing = new AbortController();
  if (fresh) {
    void placeDevices(db, fleet.id, config.demoDevices, placing.signal).catch((error: unknown) =>
      log.warn(`demo devices: could not set their locations: ${(error as Error).message}`),
    );
  }
  log.info(`demo devices: ${config.demoDevices} simulated devices in ${DEMO_FLEET}`);
  return async () => {
    stopping = true;
    placing.abort();
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  };
}
