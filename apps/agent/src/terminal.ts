import { MAX_TERMINAL_SESSIONS_PER_DEVICE, TERMINAL_MAX_COLS, TERMINAL_MAX_ROWS, terminalSize } from "@flotilla/domain";

/**
 * The device side of the web terminal (docs/device-protocol.md "Terminal"): the server's
 * `terminal-open` starts a shell for the Host OS or a service, `terminal-data` is typed into
 * it, `terminal-resize` resizes it, `terminal-close` ends it; the shell's output goes back as
 * `terminal-data`, its start as `terminal-open`, its end as `terminal-close`. The real host runs
 * a shell in a pseudo-terminal, the simulator a sandboxed one.
 */

/** A running shell. */
export type Shell = {
  write(data: string): void;
  resize(cols: number, rows: number): void;
  close(): void;
};

export type ShellRequest = { target: string; cols: number; rows: number };
/** What a shell tells: its output, and that it ended (the user left it). */
export type ShellEvents = { output(data: string): void; exit(): void };

/** A shell that cannot be started for this target; `reason` goes to the server as is. */
export class ShellRefused extends Error {
  constructor(
    readonly reason: "service_not_running" | "unsupported",
    message: string,
  ) {
    super(message);
  }
}

export type ShellFactory = (request: ShellRequest, events: ShellEvents) => Shell | Promise<Shell>;

type Frame = { type: string } & Record<string, unknown>;

/** The shells of one device, by session id. */
export class TerminalSessions {
  private readonly shells = new Map<string, Shell | "starting">();

  constructor(
    private readonly send: (frame: Frame) => boolean,
    private readonly start: ShellFactory,
  ) {}

  get size() {
    return this.shells.size;
  }

  handle(frame: Frame) {
    const session = frame.session;
    if (typeof session !== "string") return;
    switch (frame.type) {
      case "terminal-open":
        void this.open(session, frame);
        return;
      case "terminal-data": {
        const shell = this.shells.get(session);
        if (shell && shell !== "starting" && typeof frame.data === "string") shell.write(frame.data);
        return;
      }
      case "terminal-resize": {
        const shell = this.shells.get(session);
        const cols = terminalSize(frame.cols, TERMINAL_MAX_COLS, 0);
        const rows = terminalSize(frame.rows, TERMINAL_MAX_ROWS, 0);
        if (shell && shell !== "starting" && cols > 0 && rows > 0) shell.resize(cols, rows);
        return;
      }
      case "terminal-close": {
        const shell = this.shells.get(session);
        this.shells.delete(session);
        if (shell && shell !== "starting") shell.close();
        return;
      }
      default:
        return;
    }
  }

  /** The cloudlink socket went (or the device stops): every shell ends with it. */
  closeAll() {
    const shells = [...this.shells.values()];
    this.shells.clear();
    for (const shell of shells) if (shell !== "starting") shell.close();
  }

  private async open(session: string, frame: Frame) {
    if (this.shells.has(session)) return;
    if (this.shells.size >= MAX_TERMINAL_SESSIONS_PER_DEVICE) {
      this.send({
        type: "terminal-close",
        session,
        reason: "too_many_sessions",
        message: "Too many terminal sessions",
      });
      return;
    }
    const request: ShellRequest = {
      target: typeof frame.target === "string" ? frame.target : "host",
      cols: terminalSize(frame.cols, TERMINAL_MAX_COLS, 80),
      rows: terminalSize(frame.rows, TERMINAL_MAX_ROWS, 24),
    };
    this.shells.set(session, "starting");
    let started = false;
    const pending: string[] = [];
    const events: ShellEvents = {
      output: (data) => {
        if (!this.shells.has(session)) return;
        // Output written while starting (the first prompt) follows the open answer.
        if (!started) pending.push(data);
        else this.send({ type: "terminal-data", session, data });
      },
      exit: () => {
        if (!this.shells.has(session)) return;
        this.shells.delete(session);
        this.send({ type: "terminal-close", session, reason: "exited" });
      },
    };
    try {
      const shell = await this.start(request, events);
      if (this.shells.get(session) !== "starting") {
        // Closed (or exited) while it started.
        if (this.shells.has(session)) this.shells.delete(session);
        shell.close();
        return;
      }
      this.shells.set(session, shell);
      started = true;
      this.send({ type: "terminal-open", session });
      for (const data of pending.splice(0)) this.send({ type: "terminal-data", session, data });
    } catch (error) {
      this.shells.delete(session);
      const reason = error instanceof ShellRefused ? error.reason : "error";
      this.send({ type: "terminal-close", session, reason, message: (error as Error).message });
    }
  }
}
