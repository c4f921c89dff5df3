/**
 * Bulk commands (docs/bulk-commands.md): one shell command run on many devices over their
 * cloudlink sockets, for the host OS or in a named service.
 */

export const COMMAND_RUN_LIMITS = {
  commandChars: 10_000,
  devicesPerRun: 10_000,
  timeoutS: { min: 1, max: 3600, default: 60 },
  concurrency: { min: 1, max: 1000, default: 50 },
  queueWindowS: { min: 0, max: 86_400, default: 0 },
  /** Output kept per device: the last 64 KB (the run's `truncated` flag says some was dropped). */
  outputChars: 64 * 1024,
  /** One `exec-output` frame carries at most this much. */
  chunkChars: 16 * 1024,
  /** Commands one device runs at once; more wait on the device. */
  execsPerDevice: 4,
  /** The server gives the device this long past its timeout before it calls the device timed out. */
  graceS: 15,
} as const;

export const COMMAND_RUN_STATUSES = ["running", "finished", "cancelled"] as const;
export type CommandRunStatus = (typeof COMMAND_RUN_STATUSES)[number];

export const COMMAND_DEVICE_STATES = [
  "queued",
  "waiting_online",
  "running",
  "succeeded",
  "failed",
  "timed_out",
  "offline",
  "refused",
  "cancelled",
] as const;
export type CommandDeviceState = (typeof COMMAND_DEVICE_STATES)[number];

/** States a device of a run never leaves. */
export const COMMAND_FINAL_STATES: readonly CommandDeviceState[] = [
  "succeeded",
  "failed",
  "timed_out",
  "offline",
  "refused",
  "cancelled",
];

export const isFinalCommandState = (state: string): boolean =>
  (COMMAND_FINAL_STATES as readonly string[]).includes(state);

/** `host`, or a service of the device's release. */
export type CommandTarget = "host" | { service: string };

/** Server ↔ agent frames on the cloudlink socket (docs/device-protocol.md "Bulk commands"). */
export type ExecFrame =
  /** server → device: run `command` with `sh -c` on the host or in the service's container. */
  | { type: "exec-start"; session: string; command: string; target: string; timeout_s: number }
  /** device → server: a piece of output. */
  | { type: "exec-output"; session: string; data: string; stream: "stdout" | "stderr" }
  /**
   * device → server: the command ended. `code` null with `signal` when it was killed;
   * `reason`: `timeout` (the device's timer killed it), `refused` (no such service, too many
   * commands) or `error` (it could not start), with `message`.
   */
  | {
      type: "exec-exit";
      session: string;
      code: number | null;
      signal?: string;
      reason?: "timeout" | "refused" | "error";
      message?: string;
    }
  /** server → device: stop it (SIGTERM, then SIGKILL). */
  | { type: "exec-cancel"; session: string };

export const EXEC_FRAME_TYPES = ["exec-start", "exec-output", "exec-exit", "exec-cancel"] as const;

/** The counts of a run's devices per final state, and how many are still open. */
export type CommandRunSummary = {
  total: number;
  succeeded: number;
  failed: number;
  timed_out: number;
  offline: number;
  refused: number;
  cancelled: number;
  pending: number;
};

export function summarizeCommandStates(states: Iterable<string>): CommandRunSummary {
  const summary: CommandRunSummary = {
    total: 0,
    succeeded: 0,
    failed: 0,
    timed_out: 0,
    offline: 0,
    refused: 0,
    cancelled: 0,
    pending: 0,
  };
  for (const state of states) {
    summary.total += 1;
    if (state in summary && state !== "total" && state !== "pending") summary[state as "succeeded"] += 1;
    else summary.pending += 1;
  }
  return summary;
}

/** Keeps the last `max` characters of `text + more`; `truncated` says something was dropped. */
export function appendCapped(text: string, more: string, max: number): { text: string; dropped: boolean } {
  const joined = text + more;
  if (joined.length <= max) return { text: joined, dropped: false };
  return { text: joined.slice(joined.length - max), dropped: true };
}
