import { type ExecEvents, type ExecRequest, ExecSessions, type Execution } from "./exec.ts";
import { type ActionAnswer, CloudlinkClient, DROPPED } from "./protocol/cloudlink.ts";
import { ApiError, describe, type Http } from "./protocol/http.ts";
import { type LogLine, LogStream } from "./protocol/log-stream.ts";
import type { Identity } from "./protocol/register.ts";
import { type CurrentState, StateReporter } from "./protocol/state-report.ts";
import { pollIntervalOf, type TargetState, TargetStateClient } from "./protocol/target-state.ts";
import { type Clock, jittered, type Random, systemClock } from "./protocol/timing.ts";
import { type Shell, type ShellEvents, ShellRefused, type ShellRequest, TerminalSessions } from "./terminal.ts";
import { DeviceTunnels, type TunnelConnector } from "./tunnel.ts";

/** What runs on the device: the real host or a simulated one. */
export type DeviceHost = {
  /** The fields of the next state report (the reporter sends only what changed). */
  currentState(now: number): CurrentState;
  /** A new target state arrived (200, not 304); the runtime is there for logs and reboots. */
  targetChanged?(state: TargetState, device: DeviceRuntime): void;
  /** A cloudlink action; the device runtime is there for reboots, polls and logs. */
  handle(action: string, data: Record<string, unknown>, device: DeviceRuntime): Promise<ActionAnswer> | ActionAnswer;
  /** Before each regular report (a simulated device moves on a tick here). */
  beforeReport?(device: DeviceRuntime): void;
  /** The delay to the next report, when the host wants it sooner than the interval. */
  nextReportInMs?(intervalMs: number): number;
  /** A terminal's shell for the Host OS or a service (terminal.ts); throws ShellRefused when it cannot. */
  openShell?(request: ShellRequest, events: ShellEvents, device: DeviceRuntime): Shell | Promise<Shell>;
  /** A bulk command (exec.ts) on the Host OS or in a service; throws ShellRefused when it cannot. */
  exec?(request: ExecRequest, events: ExecEvents, device: DeviceRuntime): Execution | Promise<Execution>;
  /** A tunnel's connection to a local port (tunnel.ts); a host without it refuses tunnels. */
  connectTunnel?: TunnelConnector;
};

/** Counters shared by all devices of a process (the benchmark and the simulator read them). */
export type DeviceStats = {
  reports: number;
  reportErrors: number;
  lateReports: number;
  polls: number;
  notModified: number;
  pollErrors: number;
  cloudlinkConnects: number;
  cloudlinkDrops: number;
  actions: number;
  logLines: number;
};

export const newStats = (): DeviceStats => ({
  reports: 0,
  reportErrors: 0,
  lateReports: 0,
  polls: 0,
  notModified: 0,
  pollErrors: 0,
  cloudlinkConnects: 0,
  cloudlinkDrops: 0,
  actions: 0,
  logLines: 0,
});

export type DeviceRuntimeOptions = {
  http: Http;
  identity: Identity;
  host: DeviceHost;
  reportIntervalMs: number;
  clock?: Clock;
  random?: Random;
  stats?: DeviceStats;
  /** Where problems go (the simulator folds them per kind, real mode prints them). */
  onProblem?: (kind: "report" | "poll" | "logs" | "cloudlink", message: string) => void;
  /** Log streams of simulated devices end sooner so 1,000 devices do not hold 1,000 requests. */
  logIdleMs?: number;
  /** Offline log buffer bounds (default LOG_BUFFER_LINES / LOG_BUFFER_BYTES); the simulator keeps less per device. */
  logBufferLines?: number;
  logBufferBytes?: number;
  /**
   * The target-state poll says the device is gone: 401 (its key was deleted with it) or 404
   * `device_not_found` (the API still knew the key for a moment).
   */
  onGone?: (device: DeviceRuntime) => void;
  /** Told of every cloudlink action and its answer (the CLI prints them). */
  onAction?: (action: string, data: Record<string, unknown>, answer: ActionAnswer) => void;
  /** A report starting this much after it was due counts as late. */
  lateAfterMs?: number;
};

/**
 * One device speaking the protocol: target-state polls (ETag, config interval ± 10 %), state
 * reports every `reportIntervalMs`, the log stream and the cloudlink socket. Real and simulated
 * devices share it; only the host differs.
 */
export class DeviceRuntime {
  readonly identity: Identity;
  readonly logs: LogStream;
  readonly cloudlink: CloudlinkClient;
  readonly targetClient: TargetStateClient;
  readonly reporter: StateReporter;
  /** Open web terminal sessions (terminal.ts); they end with the cloudlink socket. */
  readonly terminals: TerminalSessions;
  /** Bulk commands running or waiting (exec.ts); they stop with the cloudlink socket. */
  readonly execs: ExecSessions;
  /** Open tunnels to local ports (tunnel.ts); they end with the cloudlink socket too. */
  readonly tunnels: DeviceTunnels;
  readonly stats: DeviceStats;
  private readonly clock: Clock;
  private readonly random: Random;
  private pollTimer: unknown = null;
  private reportTimer: unknown = null;
  private reportDueAt = 0;
  private reporting = false;
  private reportAgain = false;
  private polling = false;
  online = false;
  /** The network is cut (cutConnection): the device runs and logs, but nothing reaches the API. */
  offline = false;

  constructor(private readonly options: DeviceRuntimeOptions) {
    this.identity = options.identity;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.stats = options.stats ?? newStats();
    const { http, identity } = options;
    this.targetClient = new TargetStateClient(http, identity.apiUrl, identity.uuid, identity.deviceKey);
    this.reporter = new StateReporter(http, identity.apiUrl, identity.uuid, identity.deviceKey);
    this.logs = new LogStream({
      http,
      apiUrl: identity.apiUrl,
      uuid: identity.uuid,
      deviceKey: identity.deviceKey,
      clock: this.clock,
      idleMs: options.logIdleMs ?? 30_000,
      ...(options.logBufferLines !== undefined ? { bufferLines: options.logBufferLines } : {}),
      ...(options.logBufferBytes !== undefined ? { bufferBytes: options.logBufferBytes } : {}),
      onError: (message) => options.onProblem?.("logs", message),
    });
    this.terminals = new TerminalSessions(
      (frame) => this.cloudlink.send(frame),
      (request, events) => {
        if (!options.host.openShell) throw new ShellRefused("unsupported", "This device offers no terminal");
        return options.host.openShell(request, events, this);
      },
    );
    this.execs = new ExecSessions(
      (frame) => this.cloudlink.send(frame),
      (request, events) => {
        if (!options.host.exec) throw new ShellRefused("unsupported", "This device runs no commands");
        return options.host.exec(request, events, this);
      },
    );
    this.tunnels = new DeviceTunnels((frame) => this.cloudlink.send(frame), options.host.connectTunnel);
    this.cloudlink = new CloudlinkClient({
      apiUrl: identity.apiUrl,
      deviceKey: identity.deviceKey,
      clock: this.clock,
      random: this.random,
      handler: async (action, data) => {
        this.stats.actions += 1;
        const answer = await options.host.handle(action, data, this);
        options.onAction?.(action, data, answer);
        return answer;
      },
      onConnected: () => {
        this.stats.cloudlinkConnects += 1;
      },
      onFrame: (frame) => {
        if (frame.type.startsWith("tunnel-")) this.tunnels.handle(frame);
        else if (frame.type.startsWith("exec-")) this.execs.handle(frame);
        else this.terminals.handle(frame);
      },
      onDisconnected: (reason) => {
        this.terminals.closeAll();
        this.execs.closeAll();
        this.tunnels.closeAll();
        this.stats.cloudlinkDrops += 1;
        if (reason !== DROPPED) options.onProblem?.("cloudlink", reason);
      },
    });
  }

  get target(): TargetState | null {
    return this.targetClient.state;
  }

  /** Connects and starts the loops; the first poll and report go out at once or after `firstReportInMs`. */
  start(options: { firstReportInMs?: number } = {}) {
    if (this.online) return;
    this.online = true;
    // A (re)started device tells everything again, as a rebooted supervisor does.
    this.reporter.resetToFull();
    this.cloudlink.start();
    this.schedulePoll(0);
    this.scheduleReport(options.firstReportInMs ?? 0);
  }

  /** Closes the socket and stops polling and reporting (reboot, shutdown, the end). */
  stop() {
    this.online = false;
    this.terminals.closeAll();
    this.execs.closeAll();
    this.tunnels.closeAll();
    this.cloudlink.stop();
    if (this.pollTimer !== null) this.clock.clearTimeout(this.pollTimer);
    if (this.reportTimer !== null) this.clock.clearTimeout(this.reportTimer);
    this.pollTimer = null;
    this.reportTimer = null;
  }

  /**
   * Cuts the device's network for `ms` (the simulator's `--offline-for`): the cloudlink socket
   * closes, reports, polls and log uploads pause, the device keeps running and logging into its
   * offline log buffer; then everything comes back and the buffered lines go up first.
   */
  cutConnection(ms: number) {
    if (this.offline) return;
    this.offline = true;
    this.cloudlink.stop();
    this.logs.setOffline(true);
    this.clock.setTimeout(() => {
      this.offline = false;
      this.logs.setOffline(false);
      if (!this.online) return;
      this.cloudlink.start();
      this.reportNow();
      this.pollNow();
    }, ms);
  }

  async shutdown() {
    this.stop();
    await this.logs.stop();
  }

  log(line: Omit<LogLine, "timestamp"> & { timestamp?: number }) {
    this.stats.logLines += 1;
    this.logs.push({ ...line, timestamp: line.timestamp ?? this.clock.now() });
  }

  /** Polls the target state now (the `update` action). */
  pollNow() {
    this.schedulePoll(0);
  }

  /** Reports now (a status change), keeping the cadence of the next regular report. */
  reportNow() {
    if (!this.online) return;
    void this.report(false);
  }

  private schedulePoll(ms: number) {
    if (this.pollTimer !== null) this.clock.clearTimeout(this.pollTimer);
    this.pollTimer = this.clock.setTimeout(() => {
      this.pollTimer = null;
      void this.poll();
    }, ms);
  }

  private async poll() {
    if (!this.online || this.polling) return;
    if (this.offline) return this.schedulePoll(jittered(pollIntervalOf(this.targetClient.state), this.random));
    this.polling = true;
    try {
      const { state, changed } = await this.targetClient.fetch();
      this.stats.polls += 1;
      if (!changed) this.stats.notModified += 1;
      else if (state) this.options.host.targetChanged?.(state, this);
    } catch (error) {
      this.stats.pollErrors += 1;
      this.options.onProblem?.("poll", describe(error));
      if (error instanceof ApiError && (error.status === 401 || error.code === "device_not_found")) {
        this.options.onGone?.(this);
      }
    } finally {
      this.polling = false;
    }
    if (this.online && this.pollTimer === null) {
      this.schedulePoll(jittered(pollIntervalOf(this.targetClient.state), this.random));
    }
  }

  private scheduleReport(ms: number) {
    if (this.reportTimer !== null) this.clock.clearTimeout(this.reportTimer);
    this.reportDueAt = this.clock.now() + ms;
    this.reportTimer = this.clock.setTimeout(() => {
      this.reportTimer = null;
      void this.report(true);
    }, ms);
  }

  private async report(regular: boolean) {
    if (regular) {
      const interval = this.options.reportIntervalMs;
      const late = this.clock.now() - this.reportDueAt;
      if (late > (this.options.lateAfterMs ?? Math.min(1000, interval / 10))) this.stats.lateReports += 1;
      // ± 10 % keeps the reports of many devices from bunching up.
      if (this.online)
        this.scheduleReport(this.options.host.nextReportInMs?.(interval) ?? jittered(interval, this.random));
    }
    if (!this.online) return;
    if (regular) this.options.host.beforeReport?.(this);
    if (this.offline) return;
    if (this.reporting) {
      this.reportAgain = true;
      return;
    }
    this.reporting = true;
    try {
      const sent = await this.reporter.report(this.options.host.currentState(this.clock.now()));
      if (Object.keys(sent).length > 0) this.stats.reports += 1;
    } catch (error) {
      this.stats.reportErrors += 1;
      this.options.onProblem?.("report", describe(error));
    } finally {
      this.reporting = false;
    }
    if (this.reportAgain) {
      this.reportAgain = false;
      void this.report(false);
    }
  }
}
