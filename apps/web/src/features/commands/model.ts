import {
  COMMAND_RUN_LIMITS,
  type CommandDeviceState,
  type CommandRunStatus,
  type CommandRunSummary,
  type CommandTarget,
  summarizeCommandStates,
} from "@flotilla/domain";

/**
 * The pure parts of bulk commands in the dashboard (docs/bulk-commands.md): the run as the
 * server answers it, the server-sent events that change it, and the dialog's form as a request.
 */

export type OutputStream = "stdout" | "stderr";
/** A piece of a device's output; `stream` is undefined for output read back whole (a snapshot). */
export type OutputPiece = { stream: OutputStream | undefined; text: string };

export interface RunDevice {
  id: number;
  uuid: string;
  name: string;
  state: CommandDeviceState;
  exit_code: number | null;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  reason: string | null;
  truncated: boolean;
  output: string;
}

export interface RunFields {
  id: number;
  organization: number;
  fleet: number | null;
  created_by: number | null;
  created_by_username?: string | null;
  api_key: number | null;
  command: string;
  target: CommandTarget;
  timeout_s: number;
  concurrency: number;
  queue_window_s: number;
  status: CommandRunStatus;
  created_at: string;
  finished_at: string | null;
}

/** `GET /command/v1/runs/{id}`. */
export interface RunDetail extends RunFields {
  summary: CommandRunSummary;
  devices: RunDevice[];
}

/** A row of `GET /command/v1/runs`. */
export interface RunListItem extends RunFields {
  device_count: number;
  states: Partial<Record<CommandDeviceState, number>>;
}

/** What the run page shows: the run, each device's output split by stream as it came. */
export interface RunView extends Omit<RunDetail, "devices"> {
  devices: Array<RunDevice & { pieces: OutputPiece[] }>;
}

export type RunEvent =
  | { event: "snapshot"; data: RunDetail }
  | { event: "output"; data: { run: number; device: number; uuid: string; stream: OutputStream; data: string } }
  | {
      event: "state";
      data: Pick<
        RunDevice,
        "uuid" | "name" | "state" | "exit_code" | "reason" | "started_at" | "finished_at" | "duration_ms"
      > & { run: number; device: number };
    }
  | { event: "summary"; data: { run: number; status: CommandRunStatus; summary: CommandRunSummary } };

const isFinal = (state: CommandDeviceState) =>
  !["queued", "waiting_online", "running"].includes(state as "queued" | "waiting_online" | "running");

/** Keeps each device's last 64 KiB of output, as the server does, dropping the oldest pieces. */
function capPieces(pieces: OutputPiece[]): OutputPiece[] {
  let total = pieces.reduce((sum, piece) => sum + piece.text.length, 0);
  const kept = [...pieces];
  while (total > COMMAND_RUN_LIMITS.outputChars && kept.length > 0) {
    const first = kept[0] as OutputPiece;
    const over = total - COMMAND_RUN_LIMITS.outputChars;
    if (first.text.length <= over) {
      kept.shift();
      total -= first.text.length;
    } else {
      kept[0] = { ...first, text: first.text.slice(over) };
      total -= over;
    }
  }
  return kept;
}

export function viewOf(run: RunDetail): RunView {
  return {
    ...run,
    devices: run.devices.map((device) => ({
      ...device,
      pieces: device.output ? [{ stream: undefined, text: device.output }] : [],
    })),
  };
}

/** The run after one event of its stream. */
export function applyRunEvent(view: RunView | undefined, event: RunEvent): RunView | undefined {
  if (event.event === "snapshot") return viewOf(event.data);
  if (!view) return view;
  if (event.event === "summary") return { ...view, status: event.data.status, summary: event.data.summary };
  const devices = view.devices.map((device) => {
    if (device.id !== event.data.device) return device;
    if (event.event === "output") {
      const last = device.pieces.at(-1);
      const pieces =
        last && last.stream === event.data.stream
          ? [...device.pieces.slice(0, -1), { stream: last.stream, text: last.text + event.data.data }]
          : [...device.pieces, { stream: event.data.stream, text: event.data.data }];
      return { ...device, pieces: capPieces(pieces) };
    }
    const { run: _run, device: _device, ...fields } = event.data;
    return { ...device, ...fields };
  });
  // Counts follow the devices; the server's `summary` event has the last word.
  return { ...view, devices, summary: summarizeCommandStates(devices.map((device) => device.state)) };
}

/** Is the run over (nothing more will come on its stream)? */
export const runIsOver = (run: Pick<RunFields, "status">) => run.status !== "running";

/** The summary counts the page shows, in this order; `pending` is running, queued or waiting. */
export const SUMMARY_COUNTS = [
  "succeeded",
  "failed",
  "timed_out",
  "offline",
  "refused",
  "cancelled",
  "pending",
] as const;
export type SummaryCount = (typeof SUMMARY_COUNTS)[number];

/** The counts worth showing: the five outcomes always, cancelled and pending only when there are some. */
export function shownCounts(summary: CommandRunSummary): Array<{ key: SummaryCount; count: number }> {
  return SUMMARY_COUNTS.filter((key) => (key !== "cancelled" && key !== "pending") || summary[key] > 0).map((key) => ({
    key,
    count: summary[key],
  }));
}

/** A list row's counts as a summary (the list answers counts per state). */
export function summaryOfStates(states: Partial<Record<string, number>>): CommandRunSummary {
  return summarizeCommandStates(
    Object.entries(states).flatMap(([state, count]) => Array.from({ length: count ?? 0 }, () => state)),
  );
}

/** The devices in the order people read them: open ones first, then failures, then successes, by name. */
export function sortedDevices<T extends Pick<RunDevice, "state" | "name">>(devices: readonly T[]): T[] {
  const rank = (state: CommandDeviceState) =>
    [
      "running",
      "queued",
      "waiting_online",
      "failed",
      "timed_out",
      "offline",
      "refused",
      "cancelled",
      "succeeded",
    ].indexOf(state);
  return [...devices].sort((a, b) => rank(a.state) - rank(b.state) || a.name.localeCompare(b.name));
}

/** "1.2 s", "850 ms", "2 min 5 s": a device's duration; "–" when it did not run. */
export function durationText(ms: number | null): string {
  if (ms === null || ms < 0) return "–";
  if (ms < 1000) return `${ms} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

export { isFinal as isFinalDeviceState };

/** The dialog's fields as typed. */
export interface RunForm {
  command: string;
  /** "host", or a service's name. */
  target: string;
  timeoutS: string;
  concurrency: string;
  /** Report offline devices at once, or wait for them. */
  offline: "report" | "wait";
  waitMinutes: string;
  scope: "selected" | "fleet" | "tag";
  tagKey: string;
  tagValue: string;
}

export const HOST_TARGET = "host";

export const defaultRunForm = (scope: RunForm["scope"]): RunForm => ({
  command: "",
  target: HOST_TARGET,
  timeoutS: String(COMMAND_RUN_LIMITS.timeoutS.default),
  concurrency: String(COMMAND_RUN_LIMITS.concurrency.default),
  offline: "report",
  waitMinutes: "10",
  scope,
  tagKey: "",
  tagValue: "",
});

export interface RunRequest {
  command: string;
  target: CommandTarget;
  devices?: string[];
  fleet?: number;
  filter?: { tag_key: string; tag_value?: string };
  timeout_s: number;
  concurrency: number;
  queue_window_s: number;
}

/**
 * `POST /command/v1/runs` from the form. Numbers go as typed (the server answers out-of-range ones
 * in its words on the field); a tag narrows the whole fleet.
 */
export function runRequest(form: RunForm, context: { fleetId: number; selected: readonly string[] }): RunRequest {
  const number = (text: string) => (text.trim() === "" ? Number.NaN : Number(text));
  const tagValue = form.tagValue.trim();
  return {
    command: form.command,
    target: form.target === HOST_TARGET ? "host" : { service: form.target },
    ...(form.scope === "selected" ? { devices: [...context.selected] } : { fleet: context.fleetId }),
    ...(form.scope === "tag"
      ? { filter: { tag_key: form.tagKey.trim(), ...(tagValue ? { tag_value: tagValue } : {}) } }
      : {}),
    timeout_s: number(form.timeoutS),
    concurrency: number(form.concurrency),
    queue_window_s: form.offline === "report" ? 0 : Math.round(number(form.waitMinutes) * 60),
  };
}

export type RunField = "command" | "target" | "timeoutS" | "concurrency" | "waitMinutes" | "tagKey" | "form";

/** The request fields as the server names them in its 400 messages ("timeout_s: must be at least 1"). */
const SERVER_FIELDS: Record<string, RunField> = {
  command: "command",
  target: "target",
  timeout_s: "timeoutS",
  concurrency: "concurrency",
  queue_window_s: "waitMinutes",
  filter: "tagKey",
  "filter.tag_key": "tagKey",
  tag_key: "tagKey",
};

/**
 * Where a server's validation message belongs: the field it names, with the rest of the message
 * as the field's error text; anything else is the form's (e.g. "No device matches the selection").
 */
export function fieldOfMessage(message: string): { field: RunField; text: string } {
  const match = /^([a-z_.]+(?:\[\d+\])?):\s*(.+)$/s.exec(message.trim());
  const name = (match?.[1] ?? "").replace(/\[\d+\]$/, "");
  const field = SERVER_FIELDS[name];
  // "timeout_s: timeout_s must be a whole number": the field already says which.
  if (match && field) return { field, text: sentenceCase((match[2] ?? "").replace(`${name} `, "")) };
  return { field: "form", text: message.trim() };
}

const sentenceCase = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** Checks made before asking: only what the server could not say better. */
export function formProblems(form: RunForm): Partial<Record<RunField, "required">> {
  const problems: Partial<Record<RunField, "required">> = {};
  if (form.command.trim() === "") problems.command = "required";
  if (form.scope === "tag" && form.tagKey.trim() === "") problems.tagKey = "required";
  return problems;
}
