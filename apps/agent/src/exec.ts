import { COMMAND_RUN_LIMITS, type ExecFrame } from "@flotilla/domain";
import { ShellRefused } from "./terminal.ts";

/**
 * The device side of bulk commands (docs/device-protocol.md "Bulk commands"): the server's
 * `exec-start` runs a command (`sh -c` on the host, or in a service's container; the simulator
 * in its sandboxed shell), its output goes back as `exec-output`, its end as `exec-exit`;
 * `exec-cancel` stops it. The device enforces the timeout and runs at most
 * `execsPerDevice` commands at once; more wait here in order.
 */

export type ExecRequest = { command: string; target: string };
export type ExecEvents = {
  output(data: string, stream: "stdout" | "stderr"): void;
  /** The command ended: its exit code, or null and the signal that killed it. */
  exit(code: number | null, signal?: string): void;
};
/** A running command. `kill` stops it (SIGTERM, then SIGKILL a moment later). */
export type Execution = { kill(): void };
/** Starts a command; throws ShellRefused when it cannot run there (no such service). */
export type ExecFactory = (request: ExecRequest, events: ExecEvents) => Execution | Promise<Execution>;

/** Commands waiting beyond the running ones; more are refused. */
const MAX_WAITING = 100;

type Frame = { type: string } & Record<string, unknown>;

type Entry = {
  session: string;
  request: ExecRequest;
  timeoutS: number;
  execution?: Execution | "starting";
  timer?: ReturnType<typeof setTimeout>;
  timedOut: boolean;
  cancelled: boolean;
  done: boolean;
};

export class ExecSessions {
  private readonly entries = new Map<string, Entry>();
  private readonly waiting: Entry[] = [];
  private running = 0;

  constructor(
    private readonly send: (frame: ExecFrame) => boolean,
    private readonly start: ExecFactory,
    private readonly limit: number = COMMAND_RUN_LIMITS.execsPerDevice,
  ) {}

  /** Commands running or waiting. */
  get size() {
    return this.entries.size;
  }

  get runningCount() {
    return this.running;
  }

  handle(frame: Frame) {
    const session = frame.session;
    if (typeof session !== "string") return;
    if (frame.type === "exec-start") this.enqueue(session, frame);
    else if (frame.type === "exec-cancel") this.cancel(session);
  }

  /** The cloudlink socket went: commands stop, as their results have nowhere to go. */
  closeAll() {
    this.waiting.length = 0;
    for (const entry of [...this.entries.values()]) {
      entry.done = true;
      if (entry.timer) clearTimeout(entry.timer);
      if (entry.execution && entry.execution !== "starting") entry.execution.kill();
    }
    this.entries.clear();
    this.running = 0;
  }

  private enqueue(session: string, frame: Frame) {
    if (this.entries.has(session)) return;
    if (typeof frame.command !== "string" || frame.command === "") {
      this.send({ type: "exec-exit", session, code: null, reason: "error", message: "No command" });
      return;
    }
    if (this.waiting.length >= MAX_WAITING) {
      this.send({ type: "exec-exit", session, code: null, reason: "refused", message: "Too many commands" });
      return;
    }
    const timeout = typeof frame.timeout_s === "number" && frame.timeout_s > 0 ? frame.timeout_s : 60;
    const entry: Entry = {
      session,
      request: { command: frame.command, target: typeof frame.target === "string" ? frame.target : "host" },
      timeoutS: Math.min(timeout, COMMAND_RUN_LIMITS.timeoutS.max),
      timedOut: false,
      cancelled: false,
      done: false,
    };
    this.entries.set(session, entry);
    this.waiting.push(entry);
    this.next();
  }

  private next() {
    while (this.running < this.limit && this.waiting.length > 0) {
      const entry = this.waiting.shift() as Entry;
      if (entry.done) continue;
      this.running += 1;
      void this.run(entry);
    }
  }

  private finish(entry: Entry, frame: ExecFrame) {
    if (entry.done) return;
    entry.done = true;
    if (entry.timer) clearTimeout(entry.timer);
    this.entries.delete(entry.session);
    if (entry.execution !== undefined) this.running -= 1;
    this.send(frame);
    this.next();
  }

  private async run(entry: Entry) {
    const { session } = entry;
    entry.execution = "starting";
    const events: ExecEvents = {
      output: (data, stream) => {
        if (entry.done) return;
        for (let at = 0; at < data.length; at += COMMAND_RUN_LIMITS.chunkChars) {
          this.send({ type: "exec-output", session, data: data.slice(at, at + COMMAND_RUN_LIMITS.chunkChars), stream });
        }
      },
      exit: (code, signal) => {
        const frame: ExecFrame = { type: "exec-exit", session, code };
        if (signal) frame.signal = signal;
        if (entry.timedOut) {
          frame.reason = "timeout";
          frame.message = `Timed out after ${entry.timeoutS} s`;
        }
        this.finish(entry, frame);
      },
    };
    entry.timer = setTimeout(() => {
      entry.timedOut = true;
      if (entry.execution && entry.execution !== "starting") entry.execution.kill();
    }, entry.timeoutS * 1000);
    try {
      const execution = await this.start(entry.request, events);
      if (entry.done) {
        // Cancelled or the socket went while it started: it stops at once.
        execution.kill();
        return;
      }
      entry.execution = execution;
      if (entry.timedOut || entry.cancelled) execution.kill();
    } catch (error) {
      const refused = error instanceof ShellRefused;
      this.finish(entry, {
        type: "exec-exit",
        session,
        code: null,
        reason: refused ? "refused" : "error",
        message: (error as Error).message,
      });
    }
  }

  private cancel(session: string) {
    const entry = this.entries.get(session);
    if (!entry) return;
    if (entry.execution === undefined) {
      // Still waiting: it never starts, and the server already counts it cancelled.
      entry.done = true;
      this.entries.delete(session);
      return;
    }
    entry.cancelled = true;
    if (entry.execution !== "starting") entry.execution.kill();
  }
}
