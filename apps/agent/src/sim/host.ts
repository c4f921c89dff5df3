import { APP_VERSION } from "@flotilla/domain";
import type { DeviceHost, DeviceRuntime } from "../device.ts";
import { DiagnosticsRunner } from "../diagnostics.ts";
import type { ExecEvents, ExecRequest, Execution } from "../exec.ts";
import { type ActionAnswer, failure, locked, ok } from "../protocol/cloudlink.ts";
import type { CurrentState } from "../protocol/state-report.ts";
import { type TargetState, targetSupervisorVersion } from "../protocol/target-state.ts";
import type { Clock } from "../protocol/timing.ts";
import { type Shell, type ShellEvents, ShellRefused, type ShellRequest } from "../terminal.ts";
import { simulatedProbe } from "./diagnostics.ts";
import { BUSY_INTERVAL_MS, type SimulatedDevice } from "./model.ts";
import { execSandboxed, type SandboxContext, SandboxShell } from "./shell.ts";

const SERVICE_DONE = { "start-service": "Started", "stop-service": "Stopped", "restart-service": "Restarted" } as const;

export type SimulatedHostOptions = {
  model: SimulatedDevice;
  clock: Clock;
  /** How long a reboot keeps the device away (default 5–10 s). */
  rebootMs?: () => number;
  /** Chance per report that the cloudlink socket drops (a flaky network). */
  disconnectChance?: number;
  /** One step of a host OS or supervisor update (default 3 s): an OS update downloads in 5 steps, then reboots. */
  updateStepMs?: number;
  /** The report interval while provisioning or installing a release: one step each (default 3 s). */
  busyIntervalMs?: number;
  /** Told when an OS or supervisor update completes (the simulator keeps it in `--state-dir`). */
  onUpdated?: () => void;
};

/** The last OS update run, as `GET /v1/{uuid}/resinhup` answers it. */
export type HostUpdateRun = {
  status: "idle" | "triggered" | "in_progress" | "done";
  action: "resinhup";
  parameters?: { target_version: string };
  lastRun?: number;
  progress?: number;
};

/**
 * A simulated device behind the protocol runtime: ticks its model on each report, writes its
 * services' log lines, drops its socket now and then and answers every action, reboot and
 * shutdown included.
 */
export class SimulatedHost implements DeviceHost {
  readonly model: SimulatedDevice;
  private readonly clock: Clock;
  blinks = 0;
  /** A run takes a moment, as on a device, so the dashboard sees it in progress. */
  readonly diagnostics: DiagnosticsRunner;
  hostUpdateRun: HostUpdateRun = { status: "idle", action: "resinhup" };
  private supervisorTarget: string | null = null;
  /** When the simulated device last booted (its terminal's uptime). */
  private bootedAt: number;

  constructor(private readonly options: SimulatedHostOptions) {
    this.model = options.model;
    this.clock = options.clock;
    this.bootedAt = options.clock.now();
    this.diagnostics = new DiagnosticsRunner(simulatedProbe(this.model, APP_VERSION), `flotilla-agent ${APP_VERSION}`, {
      delayMs: 1500,
      setTimeout: (run, ms) => this.clock.setTimeout(run, ms),
    });
  }

  currentState(): CurrentState {
    return this.model.report();
  }

  /** Before each regular report the model moves on and the services log. */
  beforeReport(device: DeviceRuntime) {
    for (const line of this.model.tick()) {
      const serviceId = line.service ? this.model.serviceIds.get(line.service) : undefined;
      device.log({ message: line.message, isSystem: line.isSystem ?? false, ...(serviceId ? { serviceId } : {}) });
    }
    const chance = this.options.disconnectChance ?? 0;
    if (chance > 0 && device.cloudlink.connected && this.model.random() < chance) device.cloudlink.drop();
  }

  /** Applies the target state; variable changes are logged, boot configuration changes reboot. */
  targetChanged(state: TargetState, device?: DeviceRuntime) {
    const { lines, reboot } = this.model.targetChanged(state);
    if (!device) return;
    for (const line of lines) {
      const serviceId = line.service ? this.model.serviceIds.get(line.service) : undefined;
      device.log({ message: line.message, isSystem: line.isSystem ?? false, ...(serviceId ? { serviceId } : {}) });
    }
    // A device still provisioning (or already going down) applies it with its next boot.
    if (reboot && this.model.phase === "operational" && this.model.status !== "Rebooting") this.reboot(device);
    this.updateSupervisor(targetSupervisorVersion(state), device);
  }

  /** A supervisor release in the target state: the new supervisor starts after a step. */
  private updateSupervisor(version: string | null, device: DeviceRuntime) {
    if (!version || version === this.model.supervisorVersion || version === this.supervisorTarget) return;
    this.supervisorTarget = version;
    device.log({ message: `Updating supervisor to ${version}`, isSystem: true });
    this.clock.setTimeout(() => {
      this.supervisorTarget = null;
      this.model.supervisorVersion = version;
      this.options.onUpdated?.();
      device.log({ message: `Supervisor ${version} started`, isSystem: true });
      device.reportNow();
    }, this.stepMs);
  }

  private get stepMs() {
    return this.options.updateStepMs ?? 3000;
  }

  /**
   * `resinhup` (the device actions service's OS update): answered at once with "triggered", then
   * the host OS downloads in steps (status Updating with its progress), installs, reboots and
   * comes back reporting the new OS version. Run false answers the last run.
   */
  private hostOsUpdate(data: Record<string, unknown>, isLocked: boolean, device: DeviceRuntime): ActionAnswer {
    if (data.run !== true) return { status: 200, body: this.hostUpdateRun };
    const target = (data.parameters as { target_version?: unknown } | undefined)?.target_version;
    if (typeof target !== "string" || !/^\d+\.\d+\.\d+/.test(target)) {
      return failure(400, "target_version must be an OS version");
    }
    if (this.model.hostUpdate) return failure(409, `An OS update to ${this.model.hostUpdate.target} is running`);
    if (isLocked) return locked();
    const lastRun = this.clock.now();
    this.model.hostUpdate = { target, progress: 0 };
    this.hostUpdateRun = { status: "triggered", action: "resinhup", parameters: { target_version: target }, lastRun };
    device.log({ message: `Starting OS update to balenaOS ${target}`, isSystem: true });
    const step = () => {
      const update = this.model.hostUpdate;
      if (!update) return;
      if (update.progress < 100) {
        update.progress = Math.min(100, update.progress + 20);
        this.hostUpdateRun = { ...this.hostUpdateRun, status: "in_progress", progress: update.progress };
        device.log({ message: `Downloading OS update ${target} … ${update.progress}%`, isSystem: true });
        device.reportNow();
        this.clock.setTimeout(step, this.stepMs);
        return;
      }
      device.log({ message: `OS update ${target} installed, rebooting`, isSystem: true });
      this.reboot(device, () => {
        this.model.hostUpdate = null;
        this.model.osVersion = `balenaOS ${target}`;
        this.options.onUpdated?.();
        this.hostUpdateRun = { ...this.hostUpdateRun, status: "done", progress: 100 };
        device.log({ message: `Running balenaOS ${target}`, isSystem: true });
      });
    };
    this.clock.setTimeout(step, this.stepMs);
    device.reportNow();
    return { status: 202, body: this.hostUpdateRun };
  }

  nextReportInMs(intervalMs: number): number {
    return this.model.busy ? Math.min(intervalMs, this.options.busyIntervalMs ?? BUSY_INTERVAL_MS) : intervalMs;
  }

  handle(action: string, data: Record<string, unknown>, device: DeviceRuntime): ActionAnswer {
    const force = data.force === true;
    const isLocked = this.model.updateLock && !force;
    switch (action) {
      case "blink":
        this.blinks += 1;
        device.log({ message: "Blinking", isSystem: true });
        return ok();
      case "restart":
      case "purge":
        if (isLocked) return locked();
        device.log({ message: action === "restart" ? "Restarting services" : "Purging data", isSystem: true });
        this.model.stoppedServices.clear();
        return ok();
      case "reboot":
        if (isLocked) return locked();
        this.reboot(device);
        return ok();
      case "shutdown":
        if (isLocked) return locked();
        this.shutdown(device);
        return ok();
      case "update":
        if (isLocked) return locked();
        if (force) this.model.forceUpdate = true;
        device.pollNow();
        return ok();
      case "device":
        return { status: 200, body: this.model.supervisorState() };
      case "checks":
      case "diagnose":
        return this.diagnostics.answer(action, data);
      case "resinhup":
        return this.hostOsUpdate(data, isLocked, device);
      case "start-service":
      case "stop-service":
      case "restart-service": {
        if (isLocked) return locked();
        const byImage = typeof data.imageId === "number" ? this.model.imageIds.get(data.imageId) : undefined;
        if (typeof data.imageId === "number" && !byImage) return failure(404, `Image not found: ${data.imageId}`);
        const name = typeof data.serviceName === "string" ? data.serviceName : (byImage ?? null);
        const services = name ? [name] : this.model.services;
        if (name && !this.model.services.includes(name)) return failure(404, `Service not found: ${name}`);
        for (const service of services) {
          if (action === "stop-service") this.model.stoppedServices.add(service);
          else this.model.stoppedServices.delete(service);
          device.log({ message: `${SERVICE_DONE[action]} service ${service}`, isSystem: true });
        }
        device.reportNow();
        return ok();
      }
      default:
        return failure(400, `Unsupported action: ${action}`);
    }
  }

  /**
   * The web terminal: a sandboxed shell (sim/shell.ts), never a process on this machine. A
   * service target needs a running container of that service, as on a device.
   */
  openShell(request: ShellRequest, events: ShellEvents, device: DeviceRuntime): Shell {
    const shell = new SandboxShell(this.sandbox(request.target, device), events, request);
    shell.start();
    return shell;
  }

  /** A bulk command (exec.ts): run in the sandboxed shell too, never on this machine. */
  exec(request: ExecRequest, events: ExecEvents, device: DeviceRuntime): Execution {
    return execSandboxed(this.sandbox(request.target, device), request.command, events);
  }

  /** What the sandboxed shell sees of this device; a service must have a running container, as on a device. */
  private sandbox(target: string, device: DeviceRuntime): SandboxContext {
    if (target !== "host" && (!this.model.services.includes(target) || this.model.stoppedServices.has(target))) {
      throw new ShellRefused("service_not_running", `Service not found: ${target}`);
    }
    return {
      uuid: device.identity.uuid,
      target,
      osVersion: () => String(this.model.supervisorState().os_version),
      uptimeSeconds: () => (this.clock.now() - this.bootedAt) / 1000,
      now: () => new Date(this.clock.now()),
      environment: target === "host" ? {} : this.model.serviceEnvironment(target),
      services: this.model.services,
    };
  }

  private reboot(device: DeviceRuntime, onBoot?: () => void) {
    const rebootMs = this.options.rebootMs?.() ?? 5000 + Math.floor(this.model.random() * 5000);
    device.log({ message: "Rebooting", isSystem: true });
    this.model.reboot(this.clock.now(), rebootMs);
    // The answer goes out first, then the Rebooting report, then the device is gone.
    this.clock.setTimeout(() => {
      device.reportNow();
      this.clock.setTimeout(() => {
        device.stop();
        this.model.phase = "rebooting";
        this.clock.setTimeout(() => {
          this.model.bootUp();
          onBoot?.();
          this.bootedAt = this.clock.now();
          device.log({ message: "Device booted", isSystem: true });
          device.start();
        }, rebootMs);
      }, 300);
    }, 50);
  }

  private shutdown(device: DeviceRuntime) {
    device.log({ message: "Shutting down", isSystem: true });
    this.model.shutDown();
    this.clock.setTimeout(() => {
      device.reportNow();
      this.clock.setTimeout(() => {
        device.stop();
        this.model.phase = "off";
      }, 300);
    }, 50);
  }
}
