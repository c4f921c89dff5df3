import { spawn } from "node:child_process";
import fs from "node:fs";
import { APP_VERSION } from "@flotilla/domain";
import type { DeviceHost, DeviceRuntime } from "../device.ts";
import { DiagnosticsRunner } from "../diagnostics.ts";
import { type ActionAnswer, failure, locked, ok } from "../protocol/cloudlink.ts";
import { type CurrentState, SUPERVISOR_VERSION } from "../protocol/state-report.ts";
import { type TargetState, targetRelease } from "../protocol/target-state.ts";
import type { Shell, ShellEvents, ShellRequest } from "../terminal.ts";
import { realProbe } from "./diagnostics.ts";
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
};

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

  constructor(private readonly options: RealHostOptions) {}

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
    if (this.appUuid) state.apps = { [this.appUuid]: { release_uuid: null, releases: {} } };
    return state;
  }

  targetChanged(state: TargetState) {
    const { appUuid, commit } = targetRelease(state);
    this.appUuid = appUuid;
    if (commit && commit !== this.commit) {
      this.options.print?.(`target release ${commit}: running releases needs Docker, which this agent does not do yet`);
    }
    this.commit = commit;
  }

  /** The web terminal: a real shell through a pseudo-terminal for the Host OS (real/shell.ts). */
  openShell(request: ShellRequest, events: ShellEvents): Promise<Shell> {
    return openHostShell(request, events);
  }

  private get locked() {
    return fs.existsSync(this.options.updateLockFile ?? DEFAULT_UPDATE_LOCK);
  }

  handle(action: string, data: Record<string, unknown>, device: DeviceRuntime): ActionAnswer {
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
            commit: null,
            status: this.status,
            download_progress: null,
            os_version: this.metrics.osVersion,
            supervisor_version: REAL_SUPERVISOR_VERSION,
            update_pending: this.commit !== null,
            update_failed: false,
            update_downloaded: false,
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
