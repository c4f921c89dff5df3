import {
  TERMINAL_FATAL_REASONS,
  TERMINAL_OFFLINE_RETRY_MS,
  TERMINAL_RECONNECT_ATTEMPTS,
  TERMINAL_RECONNECT_DELAY_MS,
  type TerminalCloseReason,
  type TerminalServerMessage,
  type TerminalState,
} from "@flotilla/domain";

/**
 * One terminal session of the dashboard (spec 2 §4 "Terminal session"): a websocket to
 * `{api}/terminal/v1/connect` that authenticates with its first message, and the rules of its
 * states. Connecting → connected on "ssh connect". On an ssh disconnect (or a dropped
 * connection) it tries again up to 5 times, 2 s apart, then fails with errors.reconnect_failed;
 * while the device is offline it tries every second; an unauthorized (or otherwise refused)
 * reply fails it at once.
 */

/** What the tab shows: the state, and the i18n key of the message under it. */
export type TerminalStatus = {
  state: TerminalState;
  /** i18n key: why it is failed or reconnecting (errors.*, devices.terminal.*). */
  message?: string;
  /** Reconnect attempt under way (1–5) after a disconnect. */
  attempt?: number;
};

export type SocketLike = {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number): void;
  onopen: (() => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: (() => void) | null;
};

export type ConnectionOptions = {
  /** `ws(s)://api/terminal/v1/connect` */
  url: string;
  token: () => Promise<string>;
  uuid: string;
  target: string;
  size: () => { cols: number; rows: number };
  onData: (data: string) => void;
  onStatus: (status: TerminalStatus) => void;
  socket?: (url: string) => SocketLike;
  setTimeout?: (run: () => void, ms: number) => unknown;
  clearTimeout?: (timer: unknown) => void;
};

/** The i18n key of a reason the session cannot get past. */
export function failureMessage(reason: TerminalCloseReason | "disconnected"): string {
  switch (reason) {
    case "unauthorized":
      return "devices.terminal.unauthorized";
    case "forbidden":
      return "devices.terminal.forbidden";
    case "device_not_found":
      return "devices.terminal.device_not_found";
    case "local_mode":
      return "devices.terminal.local_mode";
    case "service_not_running":
      return "devices.terminal.service_not_running";
    case "host_os_not_supported":
      return "devices.terminal.host_os_not_supported";
    case "too_many_sessions":
      return "devices.terminal.too_many_sessions";
    case "exited":
      return "devices.terminal.exited";
    case "ssh_disconnected":
      return "errors.ssh_session_disconnected";
    default:
      return "errors.disconnected";
  }
}

const OPEN = 1;

export class TerminalConnection {
  private socket: SocketLike | null = null;
  private timer: unknown = null;
  private closed = false;
  /** Failed reconnect attempts since the last connected session. */
  private attempts = 0;
  private reason: TerminalCloseReason | undefined;
  status: TerminalStatus = { state: "connecting" };

  constructor(private readonly options: ConnectionOptions) {}

  /** Opens the session (again: a rebind, or the user's reconnect after a failure). */
  connect() {
    this.closed = false;
    this.clearTimer();
    this.dropSocket();
    this.open();
  }

  /** Reconnects at once with a fresh session (the service's running container changed). */
  rebind() {
    if (this.closed) return;
    this.attempts = 0;
    this.connect();
  }

  send(data: string) {
    if (this.status.state === "connected" && this.socket?.readyState === OPEN) {
      this.socket.send(JSON.stringify({ event: "data", data }));
    }
  }

  resize(cols: number, rows: number) {
    if (this.socket?.readyState === OPEN && this.status.state === "connected") {
      this.socket.send(JSON.stringify({ event: "resize", cols, rows }));
    }
  }

  /** Ends the session for good (tab closed, device page left). */
  close() {
    this.closed = true;
    this.clearTimer();
    this.dropSocket();
  }

  private setStatus(status: TerminalStatus) {
    this.status = status;
    this.options.onStatus(status);
  }

  private open() {
    this.reason = undefined;
    if (this.status.state !== "connecting" || this.status.message === undefined) {
      this.setStatus({ ...this.status, state: "connecting" });
    }
    const socket = (this.options.socket ?? ((url) => new WebSocket(url) as unknown as SocketLike))(this.options.url);
    this.socket = socket;
    socket.onopen = () => {
      void this.options.token().then(
        (token) => {
          if (this.socket !== socket || socket.readyState !== OPEN) return;
          const { cols, rows } = this.options.size();
          socket.send(
            JSON.stringify({
              event: "authentication",
              token,
              uuid: this.options.uuid,
              target: this.options.target,
              cols,
              rows,
            }),
          );
        },
        () => {
          this.reason = "unauthorized";
          socket.close();
        },
      );
    };
    socket.onmessage = (event) => {
      if (this.socket !== socket || typeof event.data !== "string") return;
      let message: TerminalServerMessage;
      try {
        message = JSON.parse(event.data) as TerminalServerMessage;
      } catch {
        return;
      }
      if (message.event === "ssh connect") {
        this.attempts = 0;
        this.setStatus({ state: "connected" });
        // The size may have changed while connecting.
        const { cols, rows } = this.options.size();
        this.resize(cols, rows);
      } else if (message.event === "data") {
        this.options.onData(message.data);
      } else if (message.event === "error") {
        this.reason = message.reason;
      }
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (!this.closed) this.closedBy(this.reason);
    };
  }

  private closedBy(reason: TerminalCloseReason | undefined) {
    if (reason && (TERMINAL_FATAL_REASONS.includes(reason) || reason === "exited")) {
      this.setStatus({ state: "failed", message: failureMessage(reason) });
      return;
    }
    if (reason === "device_offline") {
      // Not an attempt of the five: the device is away, the session waits for it.
      this.setStatus({ state: "connecting", message: "devices.terminal.device_offline" });
      this.schedule(TERMINAL_OFFLINE_RETRY_MS);
      return;
    }
    // An ssh disconnect, or the connection to the API dropped.
    this.attempts += 1;
    if (this.attempts > TERMINAL_RECONNECT_ATTEMPTS) {
      this.setStatus({ state: "failed", message: "errors.reconnect_failed" });
      return;
    }
    this.setStatus({
      state: "connecting",
      message: failureMessage(reason ?? "disconnected"),
      attempt: this.attempts,
    });
    this.schedule(TERMINAL_RECONNECT_DELAY_MS);
  }

  private schedule(ms: number) {
    this.clearTimer();
    const set = this.options.setTimeout ?? ((run, delay) => globalThis.setTimeout(run, delay));
    this.timer = set(() => {
      this.timer = null;
      if (!this.closed) this.open();
    }, ms);
  }

  private clearTimer() {
    if (this.timer === null) return;
    (this.options.clearTimeout ?? ((timer) => globalThis.clearTimeout(timer as number)))(this.timer);
    this.timer = null;
  }

  private dropSocket() {
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.onclose = null;
      socket.onmessage = null;
      socket.close(1000);
    }
  }
}
