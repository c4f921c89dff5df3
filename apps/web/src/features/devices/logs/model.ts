import { format } from "date-fns";
import { getStatusCode, isNetworkError } from "../../../lib/errors.ts";

/** A device log line as `GET /device/v2/{uuid}/logs` answers it (spec 2 §3 "Log line"). */
export interface LogLine {
  message: string;
  /** When the device wrote it (ms since the epoch). */
  timestamp: number;
  /** When the API received it (ms since the epoch). */
  createdAt: number;
  isSystem: boolean;
  isStdErr: boolean;
  serviceId: number | null;
}

/** The most lines the panel keeps; older ones drop out first (spec 2 §9). */
export const LOG_BUFFER_SIZE = 5000;
/** Lines asked for when subscribing first, and on a reconnect (spec 2 §7). */
export const INITIAL_LOG_COUNT = 100;
export const RECONNECT_LOG_COUNT = 0;
/** The filter applies 500 ms after typing stops (spec 2 §9). */
export const LOG_FILTER_DEBOUNCE_MS = 500;
/** "No logs yet" after this long without a line (spec 2 §4). */
export const NO_LOGS_AFTER_MS = 3000;

/** A fixed-size ring: pushing past its capacity drops the oldest lines. */
export class RingBuffer<T> {
  private items: Array<T | undefined>;
  private start = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    this.items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.count;
  }

  push(...values: T[]): void {
    // Only the last `capacity` values can survive.
    const from = Math.max(0, values.length - this.capacity);
    for (let i = from; i < values.length; i++) {
      const value = values[i] as T;
      if (this.count < this.capacity) {
        this.items[(this.start + this.count) % this.capacity] = value;
        this.count++;
      } else {
        this.items[this.start] = value;
        this.start = (this.start + 1) % this.capacity;
      }
    }
  }

  /** The i-th kept value, oldest first. */
  at(index: number): T | undefined {
    if (index < 0 || index >= this.count) return undefined;
    return this.items[(this.start + index) % this.capacity];
  }

  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.items[(this.start + i) % this.capacity] as T);
    return out;
  }

  clear(): void {
    this.items = new Array<T | undefined>(this.capacity);
    this.start = 0;
    this.count = 0;
  }
}

/** A line with what the view needs: its service name and a stable key. */
export interface ShownLine extends LogLine {
  key: number;
  service: string;
}

/** Lines whose message or service name contain the text, case-insensitive; all when it is blank. */
export function filterLines(lines: readonly ShownLine[], text: string): ShownLine[] {
  const needle = text.trim().toLowerCase();
  if (needle === "") return lines.slice();
  return lines.filter(
    (line) => line.message.toLowerCase().includes(needle) || line.service.toLowerCase().includes(needle),
  );
}

/** `2024-05-01 14:03:07` in the browser's zone, or `2024-05-01 12:03:07 UTC`. */
export function formatLogTime(timestamp: number, utc: boolean): string {
  const date = new Date(timestamp);
  if (Number.isNaN(date.getTime())) return "";
  if (utc) return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
  return format(date, "yyyy-MM-dd HH:mm:ss");
}

/** One line as text (download): `[time] [service] message`, the time only when shown. */
export function formatLogLine(line: ShownLine, options: { utc: boolean; timestamps: boolean }): string {
  const parts: string[] = [];
  if (options.timestamps) parts.push(`[${formatLogTime(line.timestamp, options.utc)}]`);
  parts.push(`[${line.isSystem ? "system" : line.service || "—"}]`);
  if (line.isStdErr) parts.push("[stderr]");
  parts.push(line.message.replace(/\r?\n$/, ""));
  return parts.join(" ");
}

/**
 * How long to wait before reconnecting a failed log stream (spec 2 §8): 10 s when the error
 * looks like the network (no answer at all) or the API answered 503, else 1 s.
 */
export function logRetryDelay(error: unknown): number {
  return isNetworkError(error) || getStatusCode(error) === 503 ? 10_000 : 1000;
}

/** A value read from the stream or the history, if it is a log line. */
export function toLogLine(raw: unknown): LogLine | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const value = raw as Record<string, unknown>;
  if (typeof value.message !== "string") return undefined;
  const time = (field: unknown) =>
    typeof field === "number" ? field : typeof field === "string" ? Date.parse(field) : Number.NaN;
  const createdAt = time(value.createdAt);
  const timestamp = time(value.timestamp);
  return {
    message: value.message,
    timestamp: Number.isFinite(timestamp) ? timestamp : Number.isFinite(createdAt) ? createdAt : Date.now(),
    createdAt: Number.isFinite(createdAt) ? createdAt : Date.now(),
    isSystem: value.isSystem === true,
    isStdErr: value.isStdErr === true,
    serviceId: typeof value.serviceId === "number" ? value.serviceId : null,
  };
}

/**
 * Splits an NDJSON body into values as chunks arrive: empty lines (the server's heartbeats) and
 * lines that are not JSON are skipped; a JSON array (a server answering history only) gives its items.
 */
export function createNdjsonSplitter(onValue: (value: unknown) => void) {
  let partial = "";
  const take = (text: string) => {
    const trimmed = text.trim();
    if (trimmed === "") return;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      return;
    }
    if (Array.isArray(value)) for (const item of value) onValue(item);
    else onValue(value);
  };
  return {
    push(chunk: string) {
      const pieces = (partial + chunk).split("\n");
      partial = pieces.pop() ?? "";
      for (const piece of pieces) take(piece);
    },
    end() {
      take(partial);
      partial = "";
    },
  };
}

/**
 * What "file-save support" means here (spec 2 §5): the browser can turn text into a Blob, give it
 * an object URL and save it through an anchor's `download` attribute. That is what the download
 * uses (no `showSaveFilePicker`: it is Chromium-only and opens a native dialog); without it the
 * download button is not offered.
 */
export function canSaveFiles(env: typeof globalThis = globalThis): boolean {
  return (
    typeof env.Blob === "function" &&
    typeof env.URL?.createObjectURL === "function" &&
    typeof env.document?.createElement === "function" &&
    typeof env.HTMLAnchorElement === "function" &&
    "download" in env.HTMLAnchorElement.prototype
  );
}

/** Same colour for the same service: an index into the panel's palette. */
export function serviceColorIndex(name: string, paletteSize: number): number {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  return Math.abs(hash) % paletteSize;
}
