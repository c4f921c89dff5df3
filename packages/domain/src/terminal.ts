/**
 * The web terminal (spec 2 §2 "Web terminal", §4 "Terminal session", §7, §8, §9): the browser
 * opens `GET /terminal/v1/connect` on the API, the server relays the session over the device's
 * cloudlink socket (frames `terminal-*`), the agent runs a shell (real) or a sandboxed one
 * (simulator). Shared by server, agent and dashboard; docs/device-protocol.md "Terminal".
 */

/** The target of a session: the host OS, or a service by name. */
export const TERMINAL_HOST_TARGET = "host";

/** Session states (spec 2 §4 "Terminal session"). */
export const TERMINAL_STATES = ["connecting", "connected", "failed"] as const;
export type TerminalState = (typeof TERMINAL_STATES)[number];

/** Terminal scrollback in lines (spec 2 §9). */
export const TERMINAL_SCROLLBACK = 3000;
/** On an ssh disconnect: up to 5 attempts, 2 s apart, then failed (spec 2 §4, §9). */
export const TERMINAL_RECONNECT_ATTEMPTS = 5;
export const TERMINAL_RECONNECT_DELAY_MS = 2000;
/** While the device is offline the session tries again every second (spec 2 §4, §9). */
export const TERMINAL_OFFLINE_RETRY_MS = 1000;

/** Bounds (DESIGN §8): sessions open at once per device, per user, and one frame's data. */
export const MAX_TERMINAL_SESSIONS_PER_DEVICE = 8;
export const MAX_TERMINAL_SESSIONS_PER_USER = 16;
export const MAX_TERMINAL_DATA_CHARS = 64 * 1024;
export const TERMINAL_MAX_COLS = 1000;
export const TERMINAL_MAX_ROWS = 500;
/** The first message (authentication) must arrive this soon after the socket opens. */
export const TERMINAL_AUTH_TIMEOUT_MS = 10_000;

/**
 * Host OS access is offered only for certain OS versions (spec 2 §7, §8): balenaOS before 2.7.5
 * has no host OS access through the proxy (a Flotilla decision on the spec's "certain versions").
 */
export const HOST_OS_ACCESS_MIN_OS_VERSION = "2.7.5";

/** Does this OS version (e.g. "balenaOS 2.9.7") offer host OS access? An unknown version does not. */
export function hostOsAccessSupported(osVersion: string | null | undefined): boolean {
  const match = /(\d+)\.(\d+)\.(\d+)/.exec(osVersion ?? "");
  if (!match) return false;
  const version = [Number(match[1]), Number(match[2]), Number(match[3])];
  const minimum = HOST_OS_ACCESS_MIN_OS_VERSION.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if (version[i] !== minimum[i]) return (version[i] ?? 0) > (minimum[i] ?? 0);
  }
  return true;
}

/**
 * Why a session closed, as the server tells the browser (`{"event":"error","reason",...}` then a
 * close). The dashboard maps them to the spec's rules: `unauthorized`, `forbidden`,
 * `device_not_found`, `local_mode`, `service_not_running`, `host_os_not_supported`,
 * `too_many_sessions` and `bad_request` fail the session; `device_offline` retries every second;
 * `ssh_disconnected` retries 5 times; `exited` ends it (the shell was left).
 */
export const TERMINAL_CLOSE_REASONS = [
  "unauthorized",
  "forbidden",
  "device_not_found",
  "device_offline",
  "local_mode",
  "service_not_running",
  "host_os_not_supported",
  "too_many_sessions",
  "bad_request",
  "ssh_disconnected",
  "exited",
  "server_shutdown",
] as const;
export type TerminalCloseReason = (typeof TERMINAL_CLOSE_REASONS)[number];

/** Close reasons the session never recovers from by retrying. */
export const TERMINAL_FATAL_REASONS: readonly TerminalCloseReason[] = [
  "unauthorized",
  "forbidden",
  "device_not_found",
  "local_mode",
  "service_not_running",
  "host_os_not_supported",
  "too_many_sessions",
  "bad_request",
];

/** Browser → server messages on the terminal websocket. */
export type TerminalClientMessage =
  | { event: "authentication"; token: string; uuid: string; target: string; cols?: number; rows?: number }
  | { event: "data"; data: string }
  | { event: "resize"; cols: number; rows: number };

/** Server → browser messages. */
export type TerminalServerMessage =
  | { event: "ssh connect" }
  | { event: "data"; data: string }
  | { event: "error"; reason: TerminalCloseReason; message: string };

/** Server ↔ agent frames on the cloudlink socket (docs/device-protocol.md "Terminal"). */
export type TerminalFrame =
  | { type: "terminal-open"; session: string; target: string; cols: number; rows: number; env?: Record<string, string> }
  | { type: "terminal-data"; session: string; data: string }
  | { type: "terminal-resize"; session: string; cols: number; rows: number }
  /** `reason`: `exited` (the shell was left), `service_not_running`, `too_many_sessions` or another failure; `message` says it. */
  | { type: "terminal-close"; session: string; reason?: string; message?: string };

export const TERMINAL_FRAME_TYPES = ["terminal-open", "terminal-data", "terminal-resize", "terminal-close"] as const;

/** A whole number of columns or rows within bounds, or the fallback. */
export function terminalSize(value: unknown, max: number, fallback: number): number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= max ? value : fallback;
}
