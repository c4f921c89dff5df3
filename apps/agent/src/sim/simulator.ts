import path from "node:path";
import { DeviceRuntime, type DeviceStats, newStats } from "../device.ts";
import { ApiError, createHttp, type Http } from "../protocol/http.ts";
import { registerDevice } from "../protocol/register.ts";
import { systemClock } from "../protocol/timing.ts";
import { readSimulatedIdentities, type SimulatedIdentity, writeJsonPrivate } from "../state-file.ts";
import { SimulatedHost } from "./host.ts";
import { type FailMode, failsInjectedRelease, OS_VERSION, SimulatedDevice, SUPERVISOR_VERSION } from "./model.ts";

/**
 * Where simulated devices stand. The device protocol carries no location (balena derives it
 * from the public IP on the server side), so these are for whoever runs the simulator to set as
 * the devices' custom location (the demo does it through the data API).
 */
export const SIMULATED_LOCATIONS = [
  { city: "Amsterdam", latitude: 52.3676, longitude: 4.9041 },
  { city: "Athens", latitude: 37.9838, longitude: 23.7275 },
  { city: "Berlin", latitude: 52.52, longitude: 13.405 },
  { city: "Lisbon", latitude: 38.7223, longitude: -9.1393 },
  { city: "New York", latitude: 40.7128, longitude: -74.006 },
  { city: "Seattle", latitude: 47.6062, longitude: -122.3321 },
  { city: "São Paulo", latitude: -23.5505, longitude: -46.6333 },
  { city: "Tokyo", latitude: 35.6762, longitude: 139.6503 },
] as const;

/** Offline log buffer of one simulated device, in lines (real agents keep LOG_BUFFER_LINES). */
export const SIMULATED_LOG_BUFFER_LINES = 1000;

export type SimulatorOptions = {
  apiUrl: string;
  provisioningKey: string;
  fleetId: number;
  count: number;
  /** The state report interval of each device (ms). */
  intervalMs?: number;
  deviceType?: string;
  /** Keeps the devices' identities (`simulated-devices.json`) so a restart brings the same devices back. */
  stateDir?: string;
  signal?: AbortSignal;
  /** The OS ("balenaOS 5.1.20") and supervisor ("6.6.11") the devices run at start, to try updates and old devices. */
  osVersion?: string;
  supervisorVersion?: string;
  /** Share of devices that hold an update lock (actions other than blink/device answer 423 unless forced). */
  updateLockRatio?: number;
  /**
   * Failure injection: `share` (0-1) of the devices, chosen by their uuid (the same on every run),
   * fail the release whose commit starts with `commit`: its download fails, or its services crash-loop.
   */
  failRelease?: { commit: string; share: number; mode: FailMode };
  /** Chance per report that a device's cloudlink socket drops (default 0.002). */
  disconnectChance?: number;
  /** One step of a simulated OS or supervisor update (default 3 s; an OS update takes 5 steps and a reboot). */
  updateStepMs?: number;
  /** How long a simulated reboot keeps a device away (default 5–10 s). */
  rebootMs?: number;
  /** The report interval while a device provisions or installs a release; it moves one step per report (default 3 s). */
  busyIntervalMs?: number;
  /**
   * Cuts every device's network `after` ms from start, for `for` ms (`--offline-after/--offline-for`):
   * they keep logging into their offline buffers and upload it when back (docs/device-protocol.md "Logs").
   */
  offline?: { afterMs: number; forMs: number };
  /** Registrations in flight at once. */
  registerConcurrency?: number;
  /** Told of every action a device answered (`flotilla-agent simulate` prints `<uuid7>: <action> → <status>`). */
  onAction?: (uuid: string, action: string, data: Record<string, unknown>, status: number) => void;
  /** Where the simulator tells about problems (folded: one line per kind per 10 s). */
  log?: (message: string) => void;
  random?: () => number;
  http?: Http;
  /**
   * Each device opens its own connections (one for calls, one for its log stream) and keeps its log
   * stream open as long as a real agent does, instead of sharing the process's pool: what N real
   * devices cost the API in sockets and requests (the scale benchmark).
   */
  connectionPerDevice?: boolean;
};

export type SimulatedDeviceHandle = {
  uuid: string;
  deviceId: number;
  location: (typeof SIMULATED_LOCATIONS)[number];
  host: SimulatedHost;
  runtime: DeviceRuntime;
};

export type Simulator = {
  devices: SimulatedDeviceHandle[];
  stats: DeviceStats;
  /** Stops every device, ends the log streams and closes the sockets. */
  stop(): Promise<void>;
};

/** Runs `count` simulated devices in this process; resolves once all are registered and started. */
export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  if (!Number.isInteger(options.count) || options.count < 1) {
    throw new RangeError(`count must be a whole number of at least 1, got ${options.count}`);
  }
  const random = options.random ?? Math.random;
  const intervalMs = options.intervalMs ?? 10_000;
  const deviceType = options.deviceType ?? "raspberrypi4-64";
  const http = options.http ?? createHttp({ connections: Math.min(64, Math.max(4, Math.ceil(options.count / 16))) });
  const ownHttp = !options.http;
  const stats = newStats();
  const log = options.log ?? ((message: string) => process.stderr.write(`${message}\n`));
  const lastProblem = new Map<string, number>();
  const problems = new Map<string, number>();
  const onProblem = (kind: string, message: string) => {
    const now = Date.now();
    problems.set(kind, (problems.get(kind) ?? 0) + 1);
    if (now - (lastProblem.get(kind) ?? 0) < 10_000) return;
    lastProblem.set(kind, now);
    const more = (problems.get(kind) ?? 1) - 1;
    problems.set(kind, 0);
    log(`simulator: ${kind}: ${message}${more > 0 ? ` (and ${more} more since the last notice)` : ""}`);
  };

  const stateFile = options.stateDir ? path.join(options.stateDir, "simulated-devices.json") : null;
  const known = stateFile
    ? readSimulatedIdentities(stateFile).filter(
        (identity) => identity.apiUrl === options.apiUrl && identity.fleetId === options.fleetId,
      )
    : [];
  const identities: { identity: SimulatedIdentity; provisioned: boolean }[] = known
    .slice(0, options.count)
    .map((identity) => ({ identity, provisioned: true }));

  const missing = options.count - identities.length;
  let failure: unknown = null;
  let nextIndex = 0;
  let throttledUntil = 0;
  const registerOne = async () => {
    while (nextIndex < missing && failure === null && !options.signal?.aborted) {
      nextIndex += 1;
      // The API limits calls per address (1,000 a minute by default): a large simulator waits
      // for the Retry-After it is given, all registrations together, and goes on.
      for (let attempt = 0; ; attempt++) {
        const wait = throttledUntil - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (failure !== null || options.signal?.aborted) return;
        try {
          const identity = await registerDevice(http, {
            apiUrl: options.apiUrl,
            provisioningKey: options.provisioningKey,
            fleetId: options.fleetId,
            deviceType,
            supervisorVersion: options.supervisorVersion ?? SUPERVISOR_VERSION,
            osVersion: options.osVersion ?? OS_VERSION,
            osVariant: "prod",
          });
          identities.push({ identity, provisioned: false });
          break;
        } catch (error) {
          if (error instanceof ApiError && error.status === 429 && attempt < 20) {
            const delay = (error.retryAfterMs ?? 5000) + Math.floor(random() * 1000);
            if (throttledUntil < Date.now()) {
              log(`simulator: the API limits registrations; waiting ${Math.ceil(delay / 1000)} s`);
            }
            throttledUntil = Math.max(throttledUntil, Date.now() + delay);
            continue;
          }
          failure ??= error;
          break;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(missing, options.registerConcurrency ?? 16) }, registerOne));
  const kept: SimulatedIdentity[] = [...known, ...identities.filter((i) => !i.provisioned).map((i) => i.identity)];
  const save = () => {
    if (stateFile) writeJsonPrivate(stateFile, { devices: kept });
  };
  save();
  if (failure !== null) {
    if (ownHttp) await http.close();
    throw failure;
  }

  const deviceHttp: Http[] = [];
  const devices = identities.map(({ identity, provisioned }, index): SimulatedDeviceHandle => {
    const model = new SimulatedDevice({
      uuid: identity.uuid,
      random,
      provisioned,
      updateLock: random() < (options.updateLockRatio ?? 0),
      failRelease:
        options.failRelease && failsInjectedRelease(identity.uuid, options.failRelease.share)
          ? { commit: options.failRelease.commit, mode: options.failRelease.mode }
          : undefined,
      // What it last updated to (kept in --state-dir), else what it is started on.
      osVersion: identity.osVersion ?? options.osVersion,
      supervisorVersion: identity.supervisorVersion ?? options.supervisorVersion,
    });
    const host = new SimulatedHost({
      model,
      clock: systemClock,
      disconnectChance: options.disconnectChance ?? 0.002,
      ...(options.updateStepMs !== undefined ? { updateStepMs: options.updateStepMs } : {}),
      ...(options.rebootMs !== undefined ? { rebootMs: () => options.rebootMs ?? 0 } : {}),
      ...(options.busyIntervalMs !== undefined ? { busyIntervalMs: options.busyIntervalMs } : {}),
      onUpdated: () => {
        identity.osVersion = model.osVersion;
        identity.supervisorVersion = model.supervisorVersion;
        save();
      },
    });
    const own = options.connectionPerDevice ? createHttp({ connections: 1, streamConnections: 1 }) : null;
    if (own) deviceHttp.push(own);
    const runtime = new DeviceRuntime({
      http: own ?? http,
      identity,
      host,
      reportIntervalMs: intervalMs,
      random,
      stats,
      onProblem,
      // A real agent keeps its stream for 30 s without lines; pooled devices give theirs back sooner.
      ...(own ? {} : { logIdleMs: 1500 }),
      // Many devices in one process: a smaller offline buffer each (about 15 minutes of simulated logs).
      logBufferLines: SIMULATED_LOG_BUFFER_LINES,
      logBufferBytes: SIMULATED_LOG_BUFFER_LINES * 256,
      onAction: (action, data, answer) => options.onAction?.(identity.uuid, action, data, answer.status),
      // A device deleted in the dashboard loses its key: the simulated one goes away for good.
      onGone: (runtime) => {
        log(`simulator: device ${identity.uuid} is no longer accepted by the API (deleted?): stopped`);
        void runtime.shutdown();
      },
    });
    const location = SIMULATED_LOCATIONS[index % SIMULATED_LOCATIONS.length] ?? SIMULATED_LOCATIONS[0];
    return { uuid: identity.uuid, deviceId: identity.deviceId, location, host, runtime };
  });
  // Spread the first reports so 1,000 devices do not report in the same tick; new devices show
  // up within seconds (they are provisioning), known ones anywhere within one interval.
  // Devices come up over a few seconds (3 ms per device, at most one interval), as a real fleet
  // does: thousands of websocket upgrades at the same instant only measure a thundering herd.
  const bootSpread = Math.min(intervalMs, devices.length * 3);
  const booting = new Set<NodeJS.Timeout>();
  devices.forEach((device, index) => {
    const spread = identities[index]?.provisioned ? intervalMs : Math.min(intervalMs, 3000);
    const timer = setTimeout(
      () => {
        booting.delete(timer);
        device.runtime.start({ firstReportInMs: Math.floor(random() * spread) });
        const offline = options.offline;
        if (offline) {
          const cut = setTimeout(() => {
            booting.delete(cut);
            device.runtime.cutConnection(offline.forMs);
          }, offline.afterMs);
          booting.add(cut);
        }
      },
      index === 0 ? 0 : Math.floor(random() * bootSpread),
    );
    booting.add(timer);
  });

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    options.signal?.removeEventListener("abort", onAbort);
    for (const timer of booting) clearTimeout(timer);
    await Promise.all(devices.map((device) => device.runtime.shutdown()));
    await Promise.all(deviceHttp.map((own) => own.close()));
    if (ownHttp) await http.close();
  };
  const onAbort = () => void stop();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) await stop();
  return { devices, stats, stop };
}
