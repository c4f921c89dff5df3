import { type ChildProcess, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { type Browser, chromium } from "playwright-core";

export const ROOT = path.resolve(import.meta.dirname, "../..");
const SERVER_BIN = path.join(ROOT, "apps/server/bin/flotilla-server.mjs");

export const DEMO_EMAIL = "demo@example.com";
export const DEMO_PASSWORD = "demo-password-1";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function adminQuery(databaseUrl: string, text: string) {
  const url = new URL(databaseUrl);
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** The PostgreSQL server of the run (DATABASE_URL), or this machine's for specs that need one. */
const POSTGRES_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A new, empty database on the PostgreSQL server, dropped by `cleanUp`. */
export async function freshDatabaseUrl(): Promise<string> {
  const name = `flotilla_e2e_${crypto.randomBytes(6).toString("hex")}`;
  await adminQuery(POSTGRES_URL, `CREATE DATABASE ${name}`);
  created.databases.add(name);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** What the specs created, removed after each file by `cleanUp` (e2e/support/setup.ts). */
const created = { processes: new Set<ChildProcess>(), databases: new Set<string>(), dataDirs: new Set<string>() };

export async function cleanUp() {
  for (const child of created.processes)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  created.processes.clear();
  for (const name of created.databases) {
    await adminQuery(POSTGRES_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  created.databases.clear();
  for (const dir of created.dataDirs) fs.rmSync(dir, { recursive: true, force: true });
  created.dataDirs.clear();
}

/**
 * An initialised, empty PGlite cluster (e2e/support/global-setup.ts): a fresh data dir starts
 * from a copy of it, which skips PGlite's initdb (~5 s a server) and nothing else — the server
 * still migrates and seeds as on a first start.
 */
let pgliteTemplate: string | undefined;
export function usePgliteTemplate(dir: string | undefined) {
  pgliteTemplate = dir;
}

export type RunningFlotilla = {
  dashboardUrl: string;
  apiUrl: string;
  dataDir: string;
  env: Record<string, string>;
  process: ChildProcess;
  output: () => string;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: the process dies at once, mid-request if one is in flight. */
  kill(): Promise<void>;
};

/**
 * Boots the real server (the same command `npm start` runs) on free ports with a fresh data
 * dir, or a fresh database on the PostgreSQL server when DATABASE_URL is set. `reuse` restarts
 * a server on its data; `{ ports }` alone starts a fresh one on ports chosen beforehand (a spec
 * that must name the dashboard's URL to another service before the server starts).
 */
export async function startFlotilla(
  env: Record<string, string> = {},
  reuse?:
    | (Pick<RunningFlotilla, "dataDir" | "env"> & { ports?: { dashboard: number; api: number } })
    | { ports: { dashboard: number; api: number }; dataDir?: undefined; env?: undefined },
): Promise<RunningFlotilla> {
  if (!reuse?.ports) {
    // freePort() closes its probe before the server binds: another process may take the port in
    // between, so a start that finds its port taken tries again on new ones.
    for (let attempt = 1; ; attempt++) {
      const ports = { dashboard: await freePort(), api: await freePort() };
      try {
        return await startFlotilla(env, reuse?.dataDir ? { ...reuse, ports } : { ports });
      } catch (error) {
        if (attempt >= 3 || !String(error).includes("EADDRINUSE")) throw error;
      }
    }
  }
  // A restart may keep the ports, so a page that is already open finds the server again.
  const [dashboardPort, apiPort] = [reuse.ports.dashboard, reuse.ports.api];
  const dataDir = reuse?.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-e2e-"));
  const fresh = !reuse?.dataDir;
  if (fresh && pgliteTemplate && !process.env.DATABASE_URL && !env.DATABASE_URL) {
    fs.cpSync(pgliteTemplate, path.join(dataDir, "pglite"), { recursive: true });
  }
  created.dataDirs.add(dataDir);
  let baseEnv: Record<string, string> = reuse?.env ?? {
    FLOTILLA_DATA_DIR: dataDir,
    FLOTILLA_DEMO: "1",
    FLOTILLA_DEMO_PASSWORD: DEMO_PASSWORD,
    // Specs that want the demo's simulated devices ask for them; the others start without.
    FLOTILLA_DEMO_DEVICES: "0",
    // Demo devices provision and install releases in 1 s steps instead of 3 s.
    FLOTILLA_DEMO_BUSY_INTERVAL_MS: "1000",
    FLOTILLA_CAPTCHA: "off",
    LOG_LEVEL: "info",
  };
  if (fresh && process.env.DATABASE_URL) {
    const name = `flotilla_e2e_${crypto.randomBytes(6).toString("hex")}`;
    await adminQuery(process.env.DATABASE_URL, `CREATE DATABASE ${name}`);
    created.databases.add(name);
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${name}`;
    baseEnv = { ...baseEnv, DATABASE_URL: url.toString() };
  }
  const fullEnv = { ...baseEnv, ...env };
  const child = spawn(process.execPath, [SERVER_BIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      ...fullEnv,
      FLOTILLA_PORT: String(dashboardPort),
      FLOTILLA_API_PORT: String(apiPort),
      // Loopback only, unless a spec needs more (a device in its own network namespace).
      FLOTILLA_HOST: fullEnv.FLOTILLA_HOST ?? "127.0.0.1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  created.processes.add(child);
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

  const dashboardUrl = `http://localhost:${dashboardPort}`;
  const apiUrl = `http://localhost:${apiPort}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Flotilla exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`Flotilla did not start within 60 s:\n${output}`);
    }
    if (output.includes("Flotilla ready in")) break;
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    dashboardUrl,
    apiUrl,
    dataDir,
    env: baseEnv,
    process: child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      return exited;
    },
    async kill() {
      if (child.exitCode !== null) return;
      child.kill("SIGKILL");
      await exited;
    },
  };
}

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: CHROMIUM_ARGS });
}

/** Screenshots go to e2e/screenshots (git-ignored) for people to look at. */
export const screenshotPath = (name: string) => path.join(ROOT, "e2e/screenshots", `${name}.png`);
