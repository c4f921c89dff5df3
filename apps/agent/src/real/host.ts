import { spawn } from "node:child_process";
import fs from "node:fs";
import { APP_VERSION } from "@flotilla/domain";
import type Docker from "dockerode";
import type { DeviceHost, DeviceRuntime } from "../device.ts";
import { DiagnosticsRunner } from "../diagnostics.ts";
import type { ExecEvents, ExecRequest, Execution } from "../exec.ts";
import { type ActionAnswer, failure, locked, ok } from "../protocol/cloudlink.ts";
import { type CurrentState, SUPERVISOR_VERSION } from "../protocol/state-report.ts";
import { type TargetState, targetRelease } from "../protocol/target-state.ts";
import { type Shell, type ShellEvents, ShellRefused, type ShellRequest } from "../terminal.ts";
import { connectLocally } from "../tunnel.ts";
import { realProbe } from "./diagnostics.ts";
import { AppRunner, type EngineLog, type RegistryAuth } from "./engine/apply.ts";
import { execShell } from "./engine/exec.ts";
import { execInContainer, execOnHost } from "./exec.ts";
import { HostMetrics, readNetwork } from "./metrics.ts";
import { openHostShell } from "./shell.ts";

/** The supervisor API level reported (see SUPERVISOR_VERSION); the agent's version is printed at start. */
export const REAL_SUPERVISOR_VERSION = SUPERVISOR_VERSION;
/** The balena supervisor's update lock file; an application holding it blocks disruptive actions. */
export const DEFAULT_UPDATE_LOCK = "/tmp/balena/updates.lock";

const NO_CONTAINERS = "This agent runs no containers yet: there is nothing to";

export type RealHostOptions = {
  allowReboot: boolean;
  updateLockFile?: string;
  /** How reboot and shutdown are done (tests replace it). */
  powerCommand?: (action: "reboot" | "shutdown") => void;
  print?: (line: string) => void;
  /** The container engine that runs the release's services (none: this host runs no containers). */
  engine?: {
    docker: Docker;
    deviceUuid: string;
    lockRoot?: string;
    lockPollMs?: number;
    registryAuth?: RegistryAuth;
  };
};

/** balena's host directory of the services' lock directories (each mounted at /tmp/balena). */
export const DEFAULT_LOCK_ROOT = "/tmp/balena-supervisor";
const SERVICE_DONE = { "start-service": "Started", "stop-service": "Stopped", "restart-service": "Restarted" } as const;

function runPowerCommand(action: "reboot" | "shutdown") {
  const [command, ...args] = action === "reboot" ? ["systemctl", "reboot"] : ["systemctl", "poweroff"];
  const child = spawn(command as string, args, { stdio: "ignore", detached: true });
  child.on("error", () => {
    spawn(action === "reboot" ? "reboot" : "poweroff", [], { stdio: "ignore", detached: true }).on("error", () => {});
  });
  child.unref();
}

/** This machine as a device: real metrics, actions done for real where the host allows. */
export class RealHost implements DeviceHost {
  private readonly metrics = new HostMetrics();
  private status = "Idle";
  private commit: string | null = null;
  private appUuid: string | null = null;
  private readonly diagnostics = new DiagnosticsRunner(realProbe(APP_VERSION), `flotilla-agent ${APP_VERSION}`);

  /** Runs the release's containers when an engine is configured. */
  readonly runner: AppRunner | null;
  private device: DeviceRuntime | null = null;
  /** Lines logged before the runtime is known (the first target state brings it). */
  private pending: EngineLog[] = [];

  constructor(private readonly options: RealHostOptions) {
    const engine = options.engine;
    this.runner = engine
      ? new AppRunner({
          docker: engine.docker,
          deviceUuid: engine.deviceUuid,
          lockRoot: engine.lockRoot ?? DEFAULT_LOCK_ROOT,
          hostLockFile: options.updateLockFile ?? DEFAULT_UPDATE_LOCK,
          ...(engine.lockPollMs ? { lockPollMs: engine.lockPollMs } : {}),
          ...(engine.registryAuth ? { registryAuth: engine.registryAuth } : {}),
          log: (line) => {
            if (line.isSystem) this.options.print?.(line.message);
            if (this.device) this.device.log(line);
            else this.pending.push(line);
          },
          changed: () => this.device?.reportNow(),
        })
      : null;
  }

  private attach(device: DeviceRuntime) {
    if (this.device === device) return;
    this.device = device;
    for (const line of this.pending.splice(0)) device.log(line);
  }

  /** Keeps the reported container states fresh (a crash, a restart by the engine). */
  beforeReport(device: DeviceRuntime) {
    this.attach(device);
    void this.runner?.refresh().catch(() => {});
  }

  /** Quick reports while an update runs, so the dashboard sees its progress. */
  nextReportInMs(intervalMs: number): number {
    const runner = this.runner;
    const busy = runner && !runner.waitingForLock && !["idle", "done", "aborted"].includes(runner.updateStatus);
    return busy ? Math.min(intervalMs, 2000) : intervalMs;
  }

  currentState(): CurrentState {
    const state: CurrentState = {
      status: this.status,
      supervisor_version: REAL_SUPERVISOR_VERSION,
      api_port: 48484,
      provisioning_state: "",
      provisioning_progress: null,
      download_progress: null,
      update_status: "idle",
      ...this.metrics.read(),
    };
    if (this.runner) return { ...state, ...this.runner.report() };
    if (this.appUuid) state.apps = { [this.appUuid]: { release_uuid: null, releases: {} } };
    return state;
  }

  targetChanged(state: TargetState, device?: DeviceRuntime) {
    const { appUuid, commit } = targetRelease(state);
    this.appUuid = appUuid;
    if (device) this.attach(device);
    if (this.runner) {
      this.commit = commit;
      this.runner.setTarget(state);
      return;
    }
    if (commit && commit !== this.commit) {
      this.options.print?.(`target release ${commit}: running releases needs Docker, which this agent does not do yet`);
    }
    this.commit = commit;
  }

  /** Tunnels reach the device's own ports, as balena's tunnels reach its host network. */
  readonly connectTunnel = connectLocally;

  /** The web terminal: a real shell through a pseudo-terminal for the Host OS (real/shell.ts). */
  async openShell(request: ShellRequest, events: ShellEvents): Promise<Shell> {
    if (request.target === "host" || !this.runner || !this.options.engine) return openHostShell(request, events);
    const container = await this.runner.runningContainer(request.target);
    if (!container) throw new ShellRefused("service_not_running", `Service not found: ${request.target}`);
    return execShell(this.options.engine.docker, container.Id, request, events);
  }

  /** A bulk command: `sh -c` on the host, or the engine's exec in the service's running container. */
  async exec(request: ExecRequest, events: ExecEvents): Promise<Execution> {
    if (request.target === "host") return execOnHost(request.command, events);
    const container = this.runner ? await this.runner.runningContainer(request.target) : undefined;
    if (!container || !this.options.engine) {
      throw new ShellRefused("service_not_running", `Service not found: ${request.target}`);
    }
    return execInContainer(this.options.engine.docker, container.Id, request.command, events);
  }

  private get locked() {
    return this.runner ? this.runner.locked() : fs.existsSync(this.options.updateLockFile ?? DEFAULT_UPDATE_LOCK);
  }

  handle(action: string, data: Record<string, unknown>, device: DeviceRuntime): Promise<ActionAnswer> | ActionAnswer {
    this.attach(device);
    const runner = this.runner;
    if (!runner) return this.handleHost(action, data, device);
    return this.handleContainers(runner, action, data, device).then(
      (answer) => answer ?? this.handleHost(action, data, device),
      (error: Error) => failure(500, `The container engine refused: ${error.message}`),
    );
  }

  /** The actions that act on the release's containers; null for the others. */
  private async handleContainers(
    runner: AppRunner,
    action: string,
    data: Record<string, unknown>,
    device: DeviceRuntime,
  ): Promise<ActionAnswer | null> {
    const force = data.force === true;
    switch (action) {
      case "restart":
        if (this.locked && !force) return locked();
        device.log({ message: "Restarting services", isSystem: true });
        await runner.control("restart", {});
        return ok();
      case "purge":
        if (this.locked && !force) return locked();
        device.log({ message: "Purging data", isSystem: true });
        await runner.purge();
        return ok();
      case "update":
        if (this.locked && !force) return locked();
        if (force) runner.force = true;
        device.pollNow();
        void runner.apply();
        return ok();
      case "start-service":
      case "stop-service":
      case "restart-service": {
        if (this.locked && !force) return locked();
        const target = {
          ...(typeof data.serviceName === "string" ? { serviceName: data.serviceName } : {}),
          ...(typeof data.imageId === "number" ? { imageId: data.imageId } : {}),
        };
        const done = await runner.control(action.replace("-service", "") as "start" | "stop" | "restart", target);
        if (done.length === 0) {
          return failure(
            404,
            target.serviceName ? `Service not found: ${target.serviceName}` : `Image not found: ${target.imageId}`,
          );
        }
        for (const service of done)
          device.log({ message: `${SERVICE_DONE[action]} service ${service}`, isSystem: true });
        return ok();
      }
      default:
        return null;
    }
  }

  private handleHost(action: string, data: Record<string, unknown>, device: DeviceRuntime): ActionAnswer {
    const force = data.force === true;
    const print = this.options.print ?? (() => {});
    switch (action) {
      case "blink":
        print("Blinking (this host has no LED the agent drives)");
        device.log({ message: "Blinking", isSystem: true });
        return ok();
      case "restart":
      case "purge":
        if (this.locked && !force) return locked();
        device.log({ message: `${action}: ${NO_CONTAINERS} ${action}`, isSystem: true });
        return { status: 200, body: { Data: "OK", Error: null, message: `${NO_CONTAINERS} ${action}.` } };
      case "reboot":
      case "shutdown": {
        if (!this.options.allowReboot) {
          return failure(
            400,
            `${action === "reboot" ? "Reboot" : "Shutdown"} is not allowed on this device: start flotilla-agent run with --allow-reboot`,
          );
        }
        if (this.locked && !force) return locked();
        this.status = action === "reboot" ? "Rebooting" : "Shutting down";
        device.log({ message: action === "reboot" ? "Rebooting" : "Shutting down", isSystem: true });
        print(`${action} requested over cloudlink`);
        device.reportNow();
        setTimeout(() => (this.options.powerCommand ?? runPowerCommand)(action), 1000);
        return ok();
      }
      case "update":
        if (this.locked && !force) return locked();
        device.pollNow();
        return ok();
      case "checks":
      case "diagnose":
        return this.diagnostics.answer(action, data);
      case "device":
        return {
          status: 200,
          body: {
            api_port: 48484,
            ip_address: readNetwork().ip_address,
            commit: this.runner?.currentCommit ?? null,
            status: this.runner?.status ?? this.status,
            download_progress: this.runner?.report().download_progress ?? null,
            os_version: this.metrics.osVersion,
            supervisor_version: REAL_SUPERVISOR_VERSION,
            update_pending: this.commit !== null && this.commit !== (this.runner?.currentCommit ?? null),
            update_failed: this.runner?.updateStatus === "aborted",
            update_downloaded: this.runner?.updateStatus === "downloaded",
          },
        };
      case "start-service":
      case "stop-service":
      case "restart-service":
        return failure(400, `${NO_CONTAINERS} ${action.replace("-service", "")}`);
      // The real agent runs beside the host OS, not as its supervisor: it cannot update it.
      case "resinhup":
        return data.run === true
          ? failure(501, "This device cannot update its host OS from Flotilla")
          : { status: 200, body: { status: "idle", action: "resinhup" } };
      default:
        return failure(400, `Unsupported action: ${action}`);
    }
  }
}
