import { configVariableRebootsDevice } from "@flotilla/domain";
import { type AppReport, type CurrentState, SUPERVISOR_VERSION } from "../protocol/state-report.ts";
import { type TargetState, targetRelease } from "../protocol/target-state.ts";
import type { Random } from "../protocol/timing.ts";

export { SUPERVISOR_VERSION };
export const OS_VERSION = "balenaOS 6.1.0";

/** A bounded random walk pulled back towards `mean`: metrics that drift but stay plausible. */
export function drift(
  value: number,
  options: { mean: number; min: number; max: number; step: number },
  random: Random,
) {
  const pull = (options.mean - value) * 0.1;
  const next = value + pull + (random() * 2 - 1) * options.step;
  return Math.min(options.max, Math.max(options.min, next));
}

/** A device or fleet variable that makes a simulated device hold (`1`) or release (`0`) its update lock. */
export const UPDATE_LOCK_VARIABLE = "FLOTILLA_SIMULATOR_UPDATE_LOCK";

export const CPU = { mean: 22, min: 1, max: 100, step: 8 };
export const TEMP = { mean: 52, min: 30, max: 85, step: 1.5 };

export type SimulatedLogLine = { message: string; service?: string; isSystem?: boolean };

/** What a new target state's variables change on the device (spec 2 §3 "Variables"; issue #8). */
export type VariableChanges = { lines: SimulatedLogLine[]; reboot: boolean };

/** `{added or changed names, removed names}` between two variable sets. */
function diff(before: Record<string, string>, after: Record<string, string>) {
  const changed = Object.keys(after).filter((name) => before[name] !== after[name]);
  const removed = Object.keys(before).filter((name) => !(name in after));
  return { changed: changed.sort(), removed: removed.sort() };
}

export type Phase = "configuring" | "post-provisioning" | "operational" | "rebooting" | "off";

/** Steps of provisioning: progress per step; a step lasts one busy report interval. */
const CONFIGURING_STEPS = [10, 35, 60, 85];
/** How often a device reports, and so moves one step, while it provisions or installs a release. */
export const BUSY_INTERVAL_MS = 3000;

const SERVICE_LINES = [
  "GET /health 200 2ms",
  "sensor reading: temperature=%t humidity=%h",
  "published 12 measurements to broker",
  "connected to mqtt://broker:1883",
  "cache hit ratio 0.%r",
  "worker heartbeat ok",
  "POST /api/readings 201 14ms",
  "rotated log file",
];

/**
 * A simulated device's local address, from its uuid (FNV-1a, mixed, 24 bits, in 10.0.0.0/8): unique
 * across simulators, where an index within one simulator made a second one repeat the first's.
 */
export function simulatedIpAddress(uuid: string): string {
  let hash = 0x811c9dc5;
  for (const char of uuid.toLowerCase()) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  // murmur3's finaliser, so that every bit of the uuid moves the three bytes used.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b) >>> 0;
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35) >>> 0;
  hash ^= hash >>> 16;
  return `10.${(hash >>> 16) & 255}.${(hash >>> 8) & 255}.${((hash & 255) % 254) + 1}`;
}

export type SimulatedDeviceOptions = {
  uuid: string;
  random: Random;
  /** Registered before (a restart of the simulator): skips provisioning. */
  provisioned?: boolean;
  updateLock?: boolean;
  /** What the device runs at start (default OS_VERSION and SUPERVISOR_VERSION). */
  osVersion?: string | undefined;
  supervisorVersion?: string | undefined;
  /** Make this device fail a release (failure injection, `--fail-release`): its commit or a prefix of it (7+ digits). */
  failRelease?: FailRelease | undefined;
};

/** download: the download of the release fails (update aborted); crash-loop: it installs, then its services restart over and over. */
export const FAIL_MODES = ["download", "crash-loop"] as const;
export type FailMode = (typeof FAIL_MODES)[number];
export type FailRelease = { commit: string; mode: FailMode };

/**
 * Whether a device is one of the `share` of devices that fail an injected release: a hash of its
 * uuid (FNV-1a), so the same devices fail on every run and with any random seed.
 */
export function failsInjectedRelease(uuid: string, share: number): boolean {
  let hash = 0x811c9dc5;
  const text = `fail:${uuid.toLowerCase()}`;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash / 0x1_0000_0000 < share;
}

/**
 * The state of one simulated device, advanced by `tick()`: provisioning (configuring →
 * post-provisioning → operational), drifting metrics, updates with download progress when the
 * target release changes (held at "downloaded" while an update lock is held, unless forced),
 * reboots and shutdowns. Pure: the runtime around it does the talking.
 */
export class SimulatedDevice {
  phase: Phase;
  private step = 0;
  status = "Idle";
  cpu: number;
  temp: number;
  readonly memoryTotal: number;
  memoryUsed: number;
  readonly storageTotal: number;
  storageUsed: number;
  readonly ipAddress: string;
  readonly macAddress: string;
  appUuid: string | null = null;
  currentCommit: string | null = null;
  targetCommit: string | null = null;
  targetServices: string[] = [];
  /** Service ids of the target release, by name (log lines carry them). */
  serviceIds = new Map<string, number>();
  /** Service names of the target release by image id (balena-sdk's service controls name the image). */
  imageIds = new Map<number, string>();
  downloadProgress: number | null = null;
  updateStatus = "idle";
  updateLock: boolean;
  forceUpdate = false;
  rebootUntil = 0;
  stoppedServices = new Set<string>();
  /** What the device runs: an OS update and a supervisor update change them. */
  osVersion = OS_VERSION;
  supervisorVersion = SUPERVISOR_VERSION;
  /** A host OS update under way: its target and download progress (reported as the device's). */
  hostUpdate: { target: string; progress: number } | null = null;
  readonly random: Random;
  readonly failRelease: FailRelease | null;
  /** Config and per-service environment as last applied; null before the first target state. */
  private applied: {
    commit: string | null;
    config: Record<string, string>;
    environment: Map<string, Record<string, string>>;
  } | null = null;

  constructor(options: SimulatedDeviceOptions) {
    this.random = options.random;
    const r = this.random;
    this.phase = options.provisioned ? "operational" : "configuring";
    this.updateLock = options.updateLock ?? false;
    this.failRelease = options.failRelease
      ? { commit: options.failRelease.commit.toLowerCase(), mode: options.failRelease.mode }
      : null;
    if (options.osVersion) this.osVersion = options.osVersion;
    if (options.supervisorVersion) this.supervisorVersion = options.supervisorVersion;
    this.cpu = 10 + r() * 30;
    this.temp = 42 + r() * 15;
    this.memoryTotal = r() < 0.5 ? 3794 : 7812;
    this.memoryUsed = this.memoryTotal * (0.2 + r() * 0.3);
    this.storageTotal = r() < 0.5 ? 29_542 : 59_300;
    this.storageUsed = this.storageTotal * (0.1 + r() * 0.3);
    this.ipAddress = simulatedIpAddress(options.uuid);
    this.macAddress = `02:${options.uuid.slice(0, 10).replace(/(..)(?!$)/g, "$1:")}`;
  }

  get services(): string[] {
    return this.targetServices.length > 0 ? this.targetServices : ["main"];
  }

  /** Whether the device needs quick successive reports (provisioning, updating). */
  get busy(): boolean {
    return (
      this.phase === "configuring" ||
      this.phase === "post-provisioning" ||
      (this.targetCommit !== null &&
        this.targetCommit !== this.currentCommit &&
        !(this.updateStatus === "downloaded" && this.updateLock && !this.forceUpdate))
    );
  }

  /**
   * A new target state: the release to run, the update lock variable, and the variables applied
   * (answered as log lines, and whether a boot configuration change needs a reboot). The first
   * target state after start is what the device boots with: nothing to log.
   */
  targetChanged(state: TargetState): VariableChanges {
    const { appUuid, commit, release } = targetRelease(state);
    const changes = this.applyVariables(state, commit);
    // A variable can hold or release the simulated update lock (config, or any service's environment).
    const lock = [state.config, ...Object.values(release?.services ?? {}).map((service) => service.environment)]
      .map((variables) => variables?.[UPDATE_LOCK_VARIABLE])
      .find((value) => value !== undefined);
    if (lock !== undefined) this.updateLock = ["1", "true", "yes", "on"].includes(lock.trim().toLowerCase());
    this.appUuid = appUuid;
    // A new target while an update runs: the device drops it and starts over on the new release.
    if (commit !== this.targetCommit && ["downloading", "downloaded", "applying changes"].includes(this.updateStatus)) {
      this.updateStatus = "idle";
      this.status = "Idle";
      this.downloadProgress = null;
    }
    this.targetCommit = commit;
    this.targetServices = Object.keys(release?.services ?? {});
    this.serviceIds = new Map(
      Object.entries(release?.services ?? {}).flatMap(([name, service]) =>
        typeof service.id === "number" ? [[name, service.id] as const] : [],
      ),
    );
    this.imageIds = new Map(
      Object.entries(release?.services ?? {}).flatMap(([name, service]) =>
        typeof service.image_id === "number" ? [[service.image_id, name] as const] : [],
      ),
    );
    return changes;
  }

  private applyVariables(state: TargetState, commit: string | null): VariableChanges {
    const { release } = targetRelease(state);
    const config = { ...state.config };
    const environment = new Map(
      Object.entries(release?.services ?? {}).map(([name, service]) => [name, { ...service.environment }] as const),
    );
    const previous = this.applied;
    this.applied = { commit, config, environment };
    const changes: VariableChanges = { lines: [], reboot: false };
    if (previous === null) return changes;
    // A new release starts its services with their environment: the update's own lines tell that.
    if (previous.commit === commit) {
      for (const [service, variables] of environment) {
        const before = previous.environment.get(service);
        if (!before) continue;
        const { changed, removed } = diff(before, variables);
        for (const name of changed)
          changes.lines.push({ message: `Applied environment variable ${name} to ${service}`, service });
        for (const name of removed)
          changes.lines.push({ message: `Removed environment variable ${name} from ${service}`, service });
        if (changed.length + removed.length > 0) {
          changes.lines.push({ message: `Restarted service ${service} with its new environment`, isSystem: true });
        }
      }
    }
    const { changed, removed } = diff(previous.config, config);
    for (const name of changed)
      changes.lines.push({ message: `Applied configuration variable ${name}`, isSystem: true });
    for (const name of removed)
      changes.lines.push({ message: `Removed configuration variable ${name}`, isSystem: true });
    changes.reboot = [...changed, ...removed].some(configVariableRebootsDevice);
    if (changes.reboot) changes.lines.push({ message: "Rebooting to apply the boot configuration", isSystem: true });
    return changes;
  }

  /** Advances one tick; answers log lines the services wrote meanwhile. */
  tick(): SimulatedLogLine[] {
    const r = this.random;
    const lines: SimulatedLogLine[] = [];
    if (this.phase === "off" || this.phase === "rebooting") return lines;
    this.cpu = drift(this.cpu, CPU, r);
    // Temperature follows the load a little.
    this.temp = drift(this.temp, { ...TEMP, mean: TEMP.mean + (this.cpu - CPU.mean) * 0.2 }, r);
    this.memoryUsed = drift(
      this.memoryUsed,
      {
        mean: this.memoryTotal * 0.45,
        min: this.memoryTotal * 0.1,
        max: this.memoryTotal * 0.95,
        step: this.memoryTotal * 0.02,
      },
      r,
    );
    // Storage creeps up (logs, data) and is cleaned now and then.
    this.storageUsed = Math.min(this.storageTotal * 0.95, this.storageUsed + r() * 5);
    if (r() < 0.002) this.storageUsed = Math.max(this.storageTotal * 0.05, this.storageUsed * 0.8);

    if (this.phase === "configuring") {
      this.step += 1;
      if (this.step >= CONFIGURING_STEPS.length) {
        this.phase = "post-provisioning";
        lines.push({ message: "Device provisioned, applying post-provisioning configuration", isSystem: true });
      }
      return lines;
    }
    if (this.phase === "post-provisioning") {
      this.phase = "operational";
      this.step = 0;
      lines.push({ message: "Supervisor started", isSystem: true });
      return lines;
    }
    this.advanceUpdate(lines);
    if (this.currentCommit !== null || this.targetCommit === null) {
      for (const service of this.services) {
        if (this.stoppedServices.has(service) || r() > 0.35) continue;
        lines.push({ message: this.serviceLine(), service });
      }
    }
    return lines;
  }

  private serviceLine() {
    const r = this.random;
    const template = SERVICE_LINES[Math.floor(r() * SERVICE_LINES.length)] ?? "ok";
    return template
      .replace("%t", (18 + r() * 8).toFixed(1))
      .replace("%h", String(Math.round(35 + r() * 30)))
      .replace("%r", String(Math.round(r() * 99)).padStart(2, "0"));
  }

  /** How this device fails `commit` (failure injection), or null when it runs it fine. */
  failureFor(commit: string | null): FailMode | null {
    if (!commit || !this.failRelease) return null;
    return commit.toLowerCase().startsWith(this.failRelease.commit) ? this.failRelease.mode : null;
  }

  private advanceUpdate(lines: SimulatedLogLine[]) {
    if (this.targetCommit === null || this.targetCommit === this.currentCommit) return;
    const r = this.random;
    switch (this.updateStatus) {
      case "aborted":
        // An injected download failure is not retried: the device stays aborted on that release.
        if (this.failureFor(this.targetCommit) === "download") return;
        this.updateStatus = "downloading";
        this.status = "Downloading";
        this.downloadProgress = 0;
        lines.push({ message: `Downloading release ${this.targetCommit.slice(0, 7)}`, isSystem: true });
        return;
      case "idle":
      case "done":
      case "rejected":
        this.updateStatus = "downloading";
        this.status = "Downloading";
        this.downloadProgress = 0;
        lines.push({ message: `Downloading release ${this.targetCommit.slice(0, 7)}`, isSystem: true });
        return;
      case "downloading":
        this.downloadProgress = Math.min(100, (this.downloadProgress ?? 0) + 20 + Math.round(r() * 20));
        if (this.downloadProgress >= 60 && this.failureFor(this.targetCommit) === "download") {
          this.updateStatus = "aborted";
          this.status = "Idle";
          this.downloadProgress = null;
          lines.push({ message: `Failed to download release ${this.targetCommit.slice(0, 7)}`, isSystem: true });
          return;
        }
        if (this.downloadProgress >= 100) {
          this.updateStatus = "downloaded";
          this.status = "Installing";
        }
        return;
      case "downloaded":
        if (this.updateLock && !this.forceUpdate) {
          if (this.status !== "Idle") lines.push({ message: "Updates are locked, waiting", isSystem: true });
          this.status = "Idle";
          return;
        }
        this.updateStatus = "applying changes";
        this.status = "Starting";
        lines.push({ message: "Applying changes", isSystem: true });
        return;
      default:
        this.updateStatus = "done";
        this.status = "Idle";
        this.downloadProgress = null;
        this.currentCommit = this.targetCommit;
        this.forceUpdate = false;
        this.stoppedServices.clear();
        lines.push({ message: `Release ${this.targetCommit.slice(0, 7)} is running`, isSystem: true });
    }
  }

  /** Reboot: reports Rebooting, then is gone for `forMs`. */
  reboot(now: number, forMs: number) {
    this.status = "Rebooting";
    this.rebootUntil = now + forMs;
  }

  /** After the reboot: back with a fresh boot's load. */
  bootUp() {
    this.phase = this.phase === "rebooting" ? "operational" : this.phase;
    this.status = "Idle";
    this.cpu = 35;
    this.stoppedServices.clear();
  }

  shutDown() {
    this.status = "Shutting down";
  }

  report(): CurrentState {
    const provisioning = this.phase === "configuring" || this.phase === "post-provisioning";
    const state: CurrentState = {
      status: this.hostUpdate && this.status !== "Rebooting" ? "Updating" : this.status,
      os_version: this.osVersion,
      os_variant: "prod",
      supervisor_version: this.supervisorVersion,
      ip_address: this.ipAddress,
      mac_address: this.macAddress,
      api_port: 48484,
      cpu_usage: Math.round(this.cpu),
      cpu_temp: Math.round(this.temp),
      memory_usage: Math.round(this.memoryUsed),
      memory_total: this.memoryTotal,
      storage_usage: Math.round(this.storageUsed),
      storage_total: this.storageTotal,
      storage_block_device: "/dev/mmcblk0p6",
      is_undervolted: false,
      provisioning_state: this.phase === "configuring" ? "Configuring" : provisioning ? "Post-Provisioning" : "",
      provisioning_progress: provisioning ? (CONFIGURING_STEPS[this.step] ?? 95) : null,
      download_progress: this.hostUpdate ? this.hostUpdate.progress : this.downloadProgress,
      update_status: this.updateStatus,
    };
    const apps = this.appsReport();
    if (apps) state.apps = apps;
    return state;
  }

  private appsReport(): Record<string, AppReport> | null {
    if (!this.appUuid) return null;
    const commit = this.targetCommit ?? this.currentCommit;
    if (!commit) return { [this.appUuid]: { release_uuid: null, releases: {} } };
    const services: AppReport["releases"][string]["services"] = {};
    const updating = this.targetCommit !== this.currentCommit;
    const failure = this.failureFor(commit);
    for (const name of this.services) {
      services[name] = {
        image: `${name}:${commit.slice(0, 7)}`,
        status: updating
          ? this.updateStatus === "aborted" && failure === "download"
            ? "Download failed"
            : this.updateStatus === "downloading"
              ? "Downloading"
              : "Installing"
          : this.stoppedServices.has(name)
            ? "exited"
            : failure === "crash-loop"
              ? "Restarting"
              : "Running",
        download_progress: updating ? this.downloadProgress : null,
      };
    }
    return {
      [this.appUuid]: {
        release_uuid: this.currentCommit,
        releases: { [commit]: { update_status: this.updateStatus, services } },
      },
    };
  }

  /** A service's environment as last applied from the target state (the terminal's `env`). */
  serviceEnvironment(service: string): Record<string, string> {
    return { ...(this.applied?.environment.get(service) ?? {}) };
  }

  /** What the `device` action answers (the supervisor's state). */
  supervisorState() {
    return {
      api_port: 48484,
      ip_address: this.ipAddress,
      commit: this.currentCommit,
      status: this.status,
      download_progress: this.downloadProgress,
      os_version: this.osVersion,
      supervisor_version: this.supervisorVersion,
      update_pending: this.targetCommit !== null && this.targetCommit !== this.currentCommit,
      update_failed: false,
      update_downloaded: this.updateStatus === "downloaded",
    };
  }
}
