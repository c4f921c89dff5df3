// The load generator of bench/device-path.ts, in its own process (forked with an IPC channel):
// registers the devices, then drives one scenario at a time over an undici keep-alive pool and
// answers its figures. Device keys stay in this process.
import crypto from "node:crypto";
import { Pool } from "undici";

export type Device = { uuid: string; key: string };
export type Kind = "patch" | "get-etag" | "get" | "bare" | "saturation";
export type Stats = {
  label: string;
  connections: number;
  seconds: number;
  requests: number;
  rate: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Answers with another status than the scenario expects (statuses counted in `statuses`). */
  errors: number;
  timeouts: number;
  /** The longest time with no request completing, in ms: a stall shows here. */
  longestGap: number;
  statuses: Record<string, number>;
  /** Database statements the server ran meanwhile (warm-up included), set by the parent. */
  statements?: number;
  /** With --workers: the server's Redis commands meanwhile (warm-up included), set by the parent. */
  redisCalls?: number;
};
export type Command =
  | {
      op: "register";
      origin: string;
      provisioningKey: string;
      fleet: { id: number; uuid: string; commit: string; services: string[] };
      count: number;
      concurrency: number;
    }
  | { op: "load"; label: string; kind: Kind; origin: string; connections: number; warmupMs: number; durationMs: number }
  /** Every device polls once (16 at a time): the server caches its target state, the device keeps the ETag. */
  | { op: "prime"; origin: string }
  | { op: "exit" };
export type Answer =
  | { op: "registered"; stats: Stats }
  | { op: "result"; stats: Stats }
  | { op: "failed"; message: string };

/** Requests stuck longer than this count as timeouts (the server's pool gives up after 10 s). */
const TIMEOUT_MS = 15_000;

const devices: Device[] = [];
/** The ETag each device got last (prime), as a device that polled before keeps it. */
const etags = new Map<string, string>();
let fleet: Extract<Command, { op: "register" }>["fleet"] | undefined;

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN);

/** What the agent reports (apps/agent/src/sim/model.ts): metrics that drift, services running. */
function reportBody(device: Device, n: number): string {
  const services: Record<string, unknown> = {};
  for (const name of fleet?.services ?? []) {
    services[name] = { image: `${name}:${fleet?.commit.slice(0, 7)}`, status: "Running", download_progress: null };
  }
  const wobble = (n * 7919) % 100;
  return JSON.stringify({
    [device.uuid]: {
      status: "Idle",
      os_version: "balenaOS 6.0.13",
      os_variant: "prod",
      supervisor_version: "16.7.3",
      ip_address: "192.168.1.20 10.114.101.4",
      mac_address: "dc:a6:32:00:00:01",
      api_port: 48484,
      cpu_usage: 5 + (wobble % 40),
      cpu_temp: 42 + (wobble % 15),
      memory_usage: 900 + wobble * 3,
      memory_total: 3884,
      storage_usage: 5100 + (wobble % 7),
      storage_total: 29_000,
      storage_block_device: "/dev/mmcblk0p6",
      is_undervolted: false,
      provisioning_state: "",
      provisioning_progress: null,
      download_progress: null,
      update_status: "done",
      apps: fleet
        ? {
            [fleet.uuid]: {
              release_uuid: fleet.commit,
              releases: { [fleet.commit]: { update_status: "done", services } },
            },
          }
        : {},
    },
  });
}

type Request = { method: "GET" | "PATCH" | "POST"; path: string; headers: Record<string, string>; body?: string };

async function run(
  label: string,
  origin: string,
  connections: number,
  next: (n: number) => { request: Request; expect: number; uuid?: string },
  until: { warmupMs: number; durationMs: number } | { count: number },
): Promise<Stats> {
  const pool = new Pool(origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  const started = performance.now();
  const measureFrom = "count" in until ? started : started + until.warmupMs;
  const measureTo = "count" in until ? Number.POSITIVE_INFINITY : measureFrom + until.durationMs;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let timeouts = 0;
  let issued = 0;
  let lastDone = measureFrom;
  let longestGap = 0;
  const more = () => ("count" in until ? issued < until.count : performance.now() < measureTo);
  const worker = async () => {
    while (more()) {
      const { request, expect, uuid } = next(issued++);
      const start = performance.now();
      let status: string;
      try {
        const answer = await pool.request(request);
        await answer.body.dump();
        if (uuid) etags.set(uuid, String(answer.headers.etag ?? ""));
        status = String(answer.statusCode);
        if (answer.statusCode !== expect) errors += 1;
      } catch (error) {
        const code = (error as { code?: string }).code ?? "error";
        status = code;
        if (code.includes("TIMEOUT")) timeouts += 1;
        else errors += 1;
      }
      const end = performance.now();
      if (start >= measureFrom && end <= measureTo) {
        latencies.push(end - start);
        statuses[status] = (statuses[status] ?? 0) + 1;
        longestGap = Math.max(longestGap, end - lastDone);
        lastDone = end;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const finished = performance.now();
  await pool.close();
  const seconds = ("count" in until ? finished - started : Math.min(finished, measureTo) - measureFrom) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  return {
    label,
    connections,
    seconds,
    requests: latencies.length,
    rate: latencies.length / seconds,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    errors,
    timeouts,
    longestGap,
    statuses,
  };
}

const json = (key: string) => ({ "content-type": "application/json", authorization: `Bearer ${key}` });

function registration(command: Extract<Command, { op: "register" }>, onDevice: (device: Device) => void) {
  return () => {
    const device = { uuid: crypto.randomBytes(16).toString("hex"), key: crypto.randomBytes(20).toString("hex") };
    onDevice(device);
    return {
      request: {
        method: "POST" as const,
        path: "/device/register",
        headers: json(command.provisioningKey),
        body: JSON.stringify({
          application: command.fleet.id,
          uuid: device.uuid,
          device_type: "raspberrypi4-64",
          api_key: device.key,
          supervisor_version: "16.7.3",
          os_version: "balenaOS 6.0.13",
          os_variant: "prod",
          mac_address: "dc:a6:32:00:00:01",
        }),
      },
      expect: 201,
    };
  };
}

let register: Extract<Command, { op: "register" }> | undefined;

async function prime(origin: string): Promise<Stats> {
  etags.clear();
  const stats = await run(
    "prime",
    origin,
    16,
    (n) => {
      const d = devices[n] as Device;
      return {
        request: { method: "GET", path: `/device/v3/${d.uuid}/state`, headers: { authorization: `Bearer ${d.key}` } },
        expect: 200,
        uuid: d.uuid,
      };
    },
    { count: devices.length },
  );
  return stats;
}

async function load(command: Extract<Command, { op: "load" }>): Promise<Stats> {
  const device = (n: number) => devices[n % devices.length] as Device;
  const patch = (n: number) => {
    const d = device(n);
    return {
      request: { method: "PATCH" as const, path: "/device/v3/state", headers: json(d.key), body: reportBody(d, n) },
      expect: 200,
    };
  };
  const get = (n: number) => {
    const d = device(n);
    return {
      request: {
        method: "GET" as const,
        path: `/device/v3/${d.uuid}/state`,
        headers: { authorization: `Bearer ${d.key}` },
      },
      expect: 200,
    };
  };
  const { label, origin, connections } = command;
  const timing = { warmupMs: command.warmupMs, durationMs: command.durationMs };
  switch (command.kind) {
    case "patch":
      return run(label, origin, connections, patch, timing);
    case "get":
      return run(label, origin, connections, get, timing);
    case "get-etag":
      return run(
        label,
        origin,
        connections,
        (n) => {
          const d = device(n);
          return {
            request: {
              method: "GET",
              path: `/device/v3/${d.uuid}/state`,
              headers: { authorization: `Bearer ${d.key}`, "if-none-match": etags.get(d.uuid) ?? "" },
            },
            expect: 304,
          };
        },
        timing,
      );
    case "bare":
      return run(
        label,
        origin,
        connections,
        () => ({ request: { method: "GET", path: "/json", headers: { authorization: "Bearer x" } }, expect: 200 }),
        timing,
      );
    case "saturation": {
      // Every kind of device call at once; target states are invalidated meanwhile (by the
      // parent), so polls read the database, and one in eight calls registers a new device.
      if (!register) throw new Error("register first");
      const registerOne = registration(register, () => undefined);
      return run(
        label,
        origin,
        connections,
        (n) => {
          const shape = n % 8;
          if (shape === 0) return registerOne();
          if (shape % 2 === 1) return get(n);
          return patch(n);
        },
        timing,
      );
    }
  }
}

process.on("message", (command: Command) => {
  const answer = async (): Promise<Answer> => {
    if (command.op === "exit") process.exit(0);
    if (command.op === "prime") return { op: "result", stats: await prime(command.origin) };
    if (command.op === "register") {
      register = command;
      devices.length = 0;
      fleet = command.fleet;
      const stats = await run(
        "registration",
        command.origin,
        command.concurrency,
        registration(command, (device) => devices.push(device)),
        { count: command.count },
      );
      return { op: "registered", stats };
    }
    return { op: "result", stats: await load(command) };
  };
  answer()
    .catch((error: unknown): Answer => ({ op: "failed", message: String((error as Error)?.stack ?? error) }))
    .then((reply) => process.send?.(reply));
});
