import path from "node:path";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { APP_VERSION } from "@flotilla/domain";
import { isRegistryHost, readConfigFile } from "./config-file.ts";
import { DeviceRuntime } from "./device.ts";
import { ApiError, createHttp, describe } from "./protocol/http.ts";
import { registerDevice } from "./protocol/register.ts";
import { connectEngine, defaultEngineAddress, EngineUnreachable } from "./real/engine/client.ts";
import { DEFAULT_LOCK_ROOT, DEFAULT_UPDATE_LOCK, REAL_SUPERVISOR_VERSION, RealHost } from "./real/host.ts";
import { readNetwork, readOsVersion } from "./real/metrics.ts";
import {
  BUSY_INTERVAL_MS,
  FAIL_MODES,
  type FailMode,
  OS_VERSION as SIM_OS_VERSION,
  SUPERVISOR_VERSION,
} from "./sim/model.ts";
import { startSimulator } from "./sim/simulator.ts";
import { DEFAULT_STATE_FILE, readIdentity, UsageError, writeIdentity } from "./state-file.ts";

export const USAGE = `Usage: flotilla-agent <command> [options]

Commands:
  register   register this device with a fleet's provisioning key
               --config FILE             a device configuration downloaded from the dashboard
                                         (config.json): gives --api, --provisioning-key, --fleet,
                                         --device-type and --registry, which override it when given
               --api URL                 the Flotilla API, e.g. http://localhost:3000 (required)
               --provisioning-key KEY    a provisioning key of the fleet (required)
               --fleet ID                the fleet's numeric id (required)
               --device-type SLUG        default raspberrypi4-64
               --registry HOST[:PORT]    the fleet's image registry, kept in the identity: the only
                                         registry the device's credentials are sent to (none: no
                                         registry gets them)
               --state FILE              where the identity is kept (default ./${DEFAULT_STATE_FILE}, mode 0600)
  run        keep this device connected: target state, state reports, logs, cloudlink
               --state FILE              the identity written by register (default ./${DEFAULT_STATE_FILE})
               --allow-reboot            let reboot and shutdown actions reboot/power off this host
               --report-interval-ms MS   state report interval (default 10000)
               --docker-socket PATH|URL  the container engine's Docker Engine API that runs the release
                                         (default $DOCKER_HOST, else /var/run/balena-engine.sock when
                                         present, else /var/run/docker.sock); podman: run
                                         \`podman system service --time=0 unix:///run/podman/podman.sock\`
               --lock-root DIR           where the services' update lock directories live, each
                                         mounted at /tmp/balena in its container (default ${DEFAULT_LOCK_ROOT})
               --registry HOST[:PORT]    pull with the device's credentials from this registry only
                                         (default the one register kept; other registries get none)
  simulate   run N simulated devices in this process
               --api URL --provisioning-key KEY --fleet ID   as for register (required)
               --count N                 number of devices, 1-10000 (required)
               --interval-ms MS          state report interval of each device (default 10000)
               --busy-interval-ms MS     report interval while a device provisions or installs a
                                         release, one step per report (default ${BUSY_INTERVAL_MS})
               --device-type SLUG        default raspberrypi4-64
               --state-dir DIR           keep the devices' identities here so a restart reuses them
               --update-lock-ratio R     share of devices holding an update lock, 0-1 (default 0);
                                         a variable FLOTILLA_SIMULATOR_UPDATE_LOCK=1|0 sets it per device
               --os-version X.Y.Z        the balenaOS version the devices start on (default ${SIM_OS_VERSION.replace("balenaOS ", "")})
               --fail-release COMMIT     failure injection: devices fail the release whose commit starts
                                         with COMMIT (7+ hex digits)
               --fail-share R            share of devices that fail it, 0-1, the same devices on every
                                         run (chosen by uuid; default 1)
               --fail-mode MODE          download (the download fails) or crash-loop (its services
                                         restart over and over); default download
               --offline-after S         with --offline-for S: S seconds after start every device loses its
                                         network for S seconds, keeps logging into its offline buffer
                                         and uploads the lines with their times when back
               --supervisor-version X.Y.Z the supervisor they start with (default ${SUPERVISOR_VERSION})

Options:
  --version  print the version
  --help     print this help

Exit codes: 0 done, 1 the API refused or could not be reached, 2 bad usage.`;

type Out = { out: (text: string) => void; err: (text: string) => void };

function parse(args: string[], options: NonNullable<ParseArgsConfig["options"]>) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Record<
      string,
      string | boolean | undefined
    >;
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional.*$/s, ""));
  }
}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

function apiUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--api must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--api must be an http(s) URL, got "${value}"`);
  }
  return url.toString().replace(/\/$/, "");
}

/** `--registry`: `host[:port]` as image names start with it, compared with theirs. */
function registryOption(value: string | boolean | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !isRegistryHost(value)) {
    throw new UsageError(`--registry must be host[:port] without a scheme, e.g. registry.example.com, got "${value}"`);
  }
  return value;
}

function integer(value: string | boolean | undefined, name: string, min: number, max: number, fallback?: number) {
  if (value === undefined && fallback !== undefined) return fallback;
  const number = Number(value);
  if (typeof value !== "string" || !/^\d+$/.test(value) || number < min || number > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${String(value ?? "")}"`);
  }
  return number;
}

const fleetOptions = {
  api: { type: "string" },
  "provisioning-key": { type: "string" },
  fleet: { type: "string" },
  "device-type": { type: "string" },
} as const;

async function register(args: string[], io: Out) {
  const values = parse(args, {
    ...fleetOptions,
    registry: { type: "string" },
    state: { type: "string" },
    config: { type: "string" },
  });
  // A downloaded configuration file gives the API, key, fleet, device type and registry; flags override it.
  const config = typeof values.config === "string" ? readConfigFile(path.resolve(values.config)) : undefined;
  if (config) {
    values.api ??= config.apiEndpoint;
    values["provisioning-key"] ??= config.apiKey;
    values.fleet ??= String(config.applicationId);
    if (config.deviceType) values["device-type"] ??= config.deviceType;
    if (config.registryEndpoint) values.registry ??= config.registryEndpoint;
  }
  const registryHost = registryOption(values.registry);
  const url = apiUrl(required(values, "api"));
  const provisioningKey = required(values, "provisioning-key");
  const fleetId = integer(required(values, "fleet"), "fleet", 1, 2 ** 31 - 1);
  const stateFile = path.resolve((values.state as string | undefined) ?? DEFAULT_STATE_FILE);
  const deviceType = (values["device-type"] as string | undefined) ?? "raspberrypi4-64";
  const previous = readIdentity(stateFile);
  // Registering again without one keeps the registry the state file names.
  const registryEndpoint = registryHost ?? previous?.registryEndpoint;
  if (previous && (previous.apiUrl !== url || previous.fleetId !== fleetId)) {
    throw new UsageError(
      `${stateFile} holds a device of fleet ${previous.fleetId} at ${previous.apiUrl}; use another --state file`,
    );
  }
  const http = createHttp({ connections: 2 });
  try {
    const network = readNetwork();
    // Registering again keeps the uuid and key: the API answers 409 and the key exchange follows.
    const identity = await registerDevice(http, {
      apiUrl: url,
      provisioningKey,
      fleetId,
      deviceType,
      ...(previous ? { uuid: previous.uuid, deviceKey: previous.deviceKey, deviceId: previous.deviceId } : {}),
      supervisorVersion: REAL_SUPERVISOR_VERSION,
      ...(readOsVersion() ? { osVersion: readOsVersion() as string } : {}),
      ...(network.mac_address ? { macAddress: network.mac_address } : {}),
    });
    writeIdentity(stateFile, { ...identity, ...(registryEndpoint ? { registryEndpoint } : {}) });
    io.out(
      `registered device ${identity.uuid} (id ${identity.deviceId}) in fleet ${fleetId}; identity in ${stateFile}`,
    );
  } finally {
    await http.close();
  }
}

function waitForSignal(): Promise<string> {
  return new Promise((resolve) => {
    const done = (signal: string) => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      resolve(signal);
    };
    const onInt = () => done("SIGINT");
    const onTerm = () => done("SIGTERM");
    process.once("SIGINT", onInt);
    process.once("SIGTERM", onTerm);
  });
}

async function run(args: string[], io: Out) {
  const values = parse(args, {
    state: { type: "string" },
    "allow-reboot": { type: "boolean" },
    "report-interval-ms": { type: "string" },
    "docker-socket": { type: "string" },
    "lock-root": { type: "string" },
    registry: { type: "string" },
  });
  const registryHost = registryOption(values.registry);
  const stateFile = path.resolve((values.state as string | undefined) ?? DEFAULT_STATE_FILE);
  const identity = readIdentity(stateFile);
  if (!identity) throw new UsageError(`no device identity in ${stateFile}: run flotilla-agent register first`);
  // The device key goes to the fleet's registry only: another registry an image names gets nothing.
  const registryEndpoint = registryHost ?? identity.registryEndpoint;
  const interval = integer(values["report-interval-ms"], "report-interval-ms", 1000, 3_600_000, 10_000);
  const address = (values["docker-socket"] as string | undefined) || defaultEngineAddress();
  // A device without a reachable engine cannot run its release: say so at start, not on the first update.
  const engine = await connectEngine(address).catch((error: unknown) => {
    throw error instanceof EngineUnreachable ? new UsageError(error.message, 1) : error;
  });
  const http = createHttp({ connections: 4 });
  const host = new RealHost({
    allowReboot: values["allow-reboot"] === true,
    print: io.out,
    engine: {
      docker: engine.docker,
      deviceUuid: identity.uuid,
      ...(registryEndpoint
        ? { registryAuth: { registry: registryEndpoint, username: `d_${identity.uuid}`, password: identity.deviceKey } }
        : {}),
      lockRoot: path.resolve((values["lock-root"] as string | undefined) ?? DEFAULT_LOCK_ROOT),
    },
  });
  const lastProblem = new Map<string, string>();
  const device = new DeviceRuntime({
    http,
    identity,
    host,
    reportIntervalMs: interval,
    onAction: (action, data, answer) =>
      io.out(`action ${action}${data.force === true ? " (force)" : ""} → ${answer.status}`),
    onProblem: (kind, message) => {
      // Say each problem once until it changes, not on every retry.
      if (lastProblem.get(kind) === message) return;
      lastProblem.set(kind, message);
      io.err(`flotilla-agent: ${kind}: ${message}`);
    },
  });
  device.start();
  device.log({ message: `flotilla-agent ${APP_VERSION} started`, isSystem: true });
  io.out(
    `flotilla-agent ${APP_VERSION}: device ${identity.uuid} running against ${identity.apiUrl} with ${engine.version} at ${address} (reports every ${interval / 1000} s` +
      `${values["allow-reboot"] ? ", reboot allowed" : ""}; update lock file ${DEFAULT_UPDATE_LOCK}; ` +
      `${registryEndpoint ? `registry credentials for ${registryEndpoint} only` : "no registry credentials"})`,
  );
  const signal = await waitForSignal();
  io.out(`${signal}: stopping`);
  // The containers keep running: they are the device's, and a restarted agent finds them again.
  host.runner?.close();
  await device.shutdown();
  await http.close();
}

/** An optional x.y.z version (with an optional +revN), e.g. `--os-version 5.1.20`. */
function version(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^\d+\.\d+\.\d+(\+rev\d+)?$/.test(value)) {
    throw new UsageError(`--${name} must be a version such as 6.1.0, got "${String(value)}"`);
  }
  return value;
}

/** `--fail-release COMMIT [--fail-share R] [--fail-mode download|crash-loop]`: failure injection. */
export function failureInjection(
  values: Record<string, string | boolean | undefined>,
): { commit: string; share: number; mode: FailMode } | null {
  const commit = values["fail-release"] as string | undefined;
  if (commit === undefined) {
    if (values["fail-share"] !== undefined || values["fail-mode"] !== undefined) {
      throw new UsageError("--fail-share and --fail-mode need --fail-release COMMIT");
    }
    return null;
  }
  if (!/^[0-9a-f]{7,64}$/i.test(commit)) {
    throw new UsageError(`--fail-release must be a release commit or its first 7+ hex digits, got "${commit}"`);
  }
  const shareText = values["fail-share"] as string | undefined;
  const share = shareText === undefined ? 1 : Number(shareText);
  if (!Number.isFinite(share) || share < 0 || share > 1) {
    throw new UsageError(`--fail-share must be a number from 0 to 1, got "${shareText}"`);
  }
  const mode = (values["fail-mode"] as string | undefined) ?? "download";
  if (!(FAIL_MODES as readonly string[]).includes(mode)) {
    throw new UsageError(`--fail-mode must be ${FAIL_MODES.join(" or ")}, got "${mode}"`);
  }
  return { commit: commit.toLowerCase(), share, mode: mode as FailMode };
}

/** `--offline-after S --offline-for S`: cut every device's network once, for a while (log buffering). */
function offlineWindow(
  values: Record<string, string | boolean | undefined>,
): { afterMs: number; forMs: number } | undefined {
  const after = values["offline-after"];
  const duration = values["offline-for"];
  if (after === undefined && duration === undefined) return undefined;
  if (after === undefined || duration === undefined) {
    throw new UsageError("--offline-after and --offline-for go together");
  }
  return {
    afterMs: integer(after, "offline-after", 0, 86_400) * 1000,
    forMs: integer(duration, "offline-for", 1, 86_400) * 1000,
  };
}

async function simulate(args: string[], io: Out) {
  const values = parse(args, {
    ...fleetOptions,
    count: { type: "string" },
    "interval-ms": { type: "string" },
    "busy-interval-ms": { type: "string" },
    "state-dir": { type: "string" },
    "update-lock-ratio": { type: "string" },
    "os-version": { type: "string" },
    "supervisor-version": { type: "string" },
    "fail-release": { type: "string" },
    "fail-share": { type: "string" },
    "fail-mode": { type: "string" },
    "offline-after": { type: "string" },
    "offline-for": { type: "string" },
  });
  const failRelease = failureInjection(values);
  const url = apiUrl(required(values, "api"));
  const provisioningKey = required(values, "provisioning-key");
  const fleetId = integer(required(values, "fleet"), "fleet", 1, 2 ** 31 - 1);
  const count = integer(required(values, "count"), "count", 1, 10_000);
  const intervalMs = integer(values["interval-ms"], "interval-ms", 500, 3_600_000, 10_000);
  const busyIntervalMs = integer(values["busy-interval-ms"], "busy-interval-ms", 500, 60_000, BUSY_INTERVAL_MS);
  const ratioText = values["update-lock-ratio"] as string | undefined;
  const updateLockRatio = ratioText === undefined ? 0 : Number(ratioText);
  if (!Number.isFinite(updateLockRatio) || updateLockRatio < 0 || updateLockRatio > 1) {
    throw new UsageError(`--update-lock-ratio must be a number from 0 to 1, got "${ratioText}"`);
  }
  const osVersion = version(values["os-version"], "os-version");
  const supervisorVersion = version(values["supervisor-version"], "supervisor-version");
  const offline = offlineWindow(values);
  io.out(`registering ${count} simulated device(s) in fleet ${fleetId} at ${url} …`);
  const simulator = await startSimulator({
    apiUrl: url,
    provisioningKey,
    fleetId,
    count,
    intervalMs,
    busyIntervalMs,
    deviceType: (values["device-type"] as string | undefined) ?? "raspberrypi4-64",
    ...(values["state-dir"] ? { stateDir: path.resolve(values["state-dir"] as string) } : {}),
    updateLockRatio,
    ...(failRelease ? { failRelease } : {}),
    ...(osVersion ? { osVersion: `balenaOS ${osVersion}` } : {}),
    ...(supervisorVersion ? { supervisorVersion } : {}),
    ...(offline ? { offline } : {}),
    log: io.err,
    onAction: (uuid, action, data, status) =>
      io.out(`${uuid.slice(0, 7)}: ${action}${data.force === true ? " (force)" : ""} → ${status}`),
  });
  io.out(`${count} simulated device(s) running; Ctrl-C stops them`);
  for (const device of simulator.devices.slice(0, 20)) io.out(`  ${device.uuid} (id ${device.deviceId})`);
  if (simulator.devices.length > 20) io.out(`  … and ${simulator.devices.length - 20} more`);
  // A line a minute on how the devices fare.
  let last = { ...simulator.stats };
  const summary = setInterval(() => {
    const now = { ...simulator.stats };
    const online = simulator.devices.filter((device) => device.runtime.online).length;
    io.out(
      `${online}/${count} online, ${now.reports - last.reports} reports (${now.reportErrors - last.reportErrors} failed), ` +
        `${now.polls - last.polls} polls, ${now.actions - last.actions} actions, ` +
        `${now.cloudlinkDrops - last.cloudlinkDrops} cloudlink drops in the last minute`,
    );
    last = now;
  }, 60_000);
  const signal = await waitForSignal();
  clearInterval(summary);
  io.out(`${signal}: stopping the simulated devices`);
  await simulator.stop();
  const s = simulator.stats;
  io.out(`${s.reports} reports, ${s.polls} polls (${s.notModified} unchanged), ${s.actions} actions answered`);
}

/** Runs the command line; answers the exit code. Expected failures print one line, no stack. */
export async function main(argv: string[], io: Out): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command) {
      case "--version":
        io.out(APP_VERSION);
        return 0;
      case undefined:
      case "--help":
      case "help":
        io.out(USAGE);
        return 0;
      case "register":
        await register(args, io);
        return 0;
      case "run":
        await run(args, io);
        return 0;
      case "simulate":
        await simulate(args, io);
        return 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`flotilla-agent: ${error.message}`);
      if (error.exitCode === 2) io.err('Run "flotilla-agent --help" for the commands and options.');
      return error.exitCode;
    }
    if (error instanceof ApiError) {
      io.err(`flotilla-agent: ${error.message}`);
      return 1;
    }
    io.err(`flotilla-agent: unexpected failure: ${describe(error)}`);
    if (error instanceof Error && error.stack) io.err(error.stack);
    return 1;
  }
}
