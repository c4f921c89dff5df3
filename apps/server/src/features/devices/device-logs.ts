import { DEFAULT_DEVICE_LOG_LINES, MAX_LOG_LINE_LENGTH } from "@flotilla/domain";
import type { Database } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import type { Bus } from "./bus.ts";
import { deleteLogLines, insertLogLines, pruneLogLines, readLogLines, type StoredLogLine } from "./log-queries.ts";

/**
 * Device logs (issue 10, docs/device-protocol.md "Logs"): lines from the log stream are handed to
 * live viewers from memory at once and written to `device_log` in batches (every `flushMs` or
 * FLUSH_LINES lines), each device pruned to its last `keep` lines. With Redis, lines reach viewers
 * on other instances: an instance with viewers of a device announces it, and the instance that
 * receives the device's lines sends them there (no database read per line anywhere).
 */

export { MAX_LOG_LINE_LENGTH };

const FLUSH_MS = 1000;
const FLUSH_LINES = 2000;
/** Lines waiting for the database; beyond it new lines are still shown live but not kept. */
const MAX_PENDING_LINES = 200_000;
/** Open live streams per device and per instance; more are refused with 429. */
export const MAX_VIEWERS_PER_DEVICE = 100;
export const MAX_VIEWERS = 10_000;
/** Remote instances re-announce the devices they watch this often; an announcement lasts WATCH_TTL_MS. */
const WATCH_REFRESH_MS = 10_000;
const WATCH_TTL_MS = 30_000;

export type DeviceLogLine = {
  message: string;
  timestamp: number;
  createdAt: number;
  isSystem: boolean;
  isStdErr: boolean;
  serviceId: number | null;
};

type Deliver = (lines: readonly DeviceLogLine[]) => void;

/** A log line as the agent sends it, bounded and typed; undefined when it is not one. */
export function parseLogLine(raw: unknown, now: number): DeviceLogLine | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const line = raw as Record<string, unknown>;
  if (typeof line.message !== "string") return undefined;
  const timestamp = typeof line.timestamp === "number" && Number.isFinite(line.timestamp) ? line.timestamp : now;
  const serviceId = typeof line.serviceId === "number" && Number.isSafeInteger(line.serviceId) ? line.serviceId : null;
  return {
    message: line.message.slice(0, MAX_LOG_LINE_LENGTH),
    timestamp,
    createdAt: now,
    isSystem: line.isSystem === true,
    isStdErr: line.isStdErr === true,
    serviceId,
  };
}

export function createDeviceLogs(options: {
  db: Database;
  bus: Bus;
  keep?: number;
  flushMs?: number;
  onError: (error: unknown) => void;
}) {
  const { db, bus, onError } = options;
  const keep = options.keep ?? DEFAULT_DEVICE_LOG_LINES;
  // Pruning costs an index walk of `keep` entries: done once a device wrote a tenth of that again.
  const pruneEvery = Math.max(1, Math.ceil(keep / 10));
  const pending = new Map<number, DeviceLogLine[]>();
  let pendingCount = 0;
  let notKept = 0;
  const sincePrune = new Map<number, number>();
  const viewers = new Map<number, Set<Deliver>>();
  let viewerCount = 0;
  /** Devices watched on other instances: device → instance → announcement expiry. */
  const remote = new Map<number, Map<string, number>>();

  // Flushes, history reads and clears take turns: a read sees each line exactly once, in the table
  // or still pending, never both or neither.
  let turn: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = turn.then(fn);
    turn = run.catch(() => undefined);
    return run;
  };

  async function writePending() {
    if (pendingCount === 0) return;
    const batch: StoredLogLine[] = [];
    const written = new Map<number, number>();
    for (const [deviceId, lines] of pending) {
      for (const line of lines) batch.push({ ...line, deviceId });
      written.set(deviceId, lines.length);
    }
    pending.clear();
    pendingCount = 0;
    if (notKept > 0) {
      onError(new Error(`device logs: the database fell behind, ${notKept} lines were shown live but not kept`));
      notKept = 0;
    }
    try {
      await insertLogLines(db, batch);
    } catch (error) {
      // Not retried: a batch the database refuses (e.g. a device deleted meanwhile) must not block the rest.
      onError(error);
      return;
    }
    const toPrune: number[] = [];
    for (const [deviceId, lines] of written) {
      const count = (sincePrune.get(deviceId) ?? 0) + lines;
      if (count >= pruneEvery) {
        toPrune.push(deviceId);
        sincePrune.delete(deviceId);
      } else sincePrune.set(deviceId, count);
    }
    await pruneLogLines(db, toPrune, keep).catch(onError);
  }

  let flushing: Promise<void> | undefined;
  const flush = (): Promise<void> => {
    flushing ??= exclusive(writePending).finally(() => {
      flushing = undefined;
    });
    return flushing;
  };
  const flushTimer = setInterval(() => void flush(), options.flushMs ?? FLUSH_MS);
  flushTimer.unref();

  function deliverHere(deviceId: number, lines: readonly DeviceLogLine[]) {
    for (const deliver of viewers.get(deviceId) ?? []) deliver(lines);
  }

  function announce(devices: number[]) {
    if (bus.redis && devices.length > 0) bus.toAll("device-logs.watch", { devices }).catch(onError);
  }
  const announceTimer = setInterval(() => announce([...viewers.keys()]), WATCH_REFRESH_MS);
  announceTimer.unref();

  bus.on("device-logs.watch", (payload, from) => {
    const expires = Date.now() + WATCH_TTL_MS;
    for (const deviceId of (payload as { devices: number[] }).devices) {
      const watchers = remote.get(deviceId) ?? new Map<string, number>();
      watchers.set(from, expires);
      remote.set(deviceId, watchers);
    }
  });
  bus.on("device-logs.hello", () => announce([...viewers.keys()]));
  bus.on("device-logs.lines", (payload) => {
    const { device, lines } = payload as { device: number; lines: DeviceLogLine[] };
    deliverHere(device, lines);
  });
  bus.on("device-logs.clear", (payload) => {
    const { device } = payload as { device: number };
    pendingCount -= pending.get(device)?.length ?? 0;
    pending.delete(device);
  });
  // A new instance learns at once which devices others watch.
  if (bus.redis) bus.toAll("device-logs.hello", {}).catch(onError);

  return {
    /** Lines this instance received from a device's log stream. */
    append(deviceId: number, lines: readonly DeviceLogLine[]) {
      if (lines.length === 0) return;
      if (pendingCount + lines.length <= MAX_PENDING_LINES) {
        const queue = pending.get(deviceId);
        if (queue) queue.push(...lines);
        else pending.set(deviceId, [...lines]);
        pendingCount += lines.length;
        if (pendingCount >= FLUSH_LINES) void flush();
      } else notKept += lines.length;
      deliverHere(deviceId, lines);
      const watchers = remote.get(deviceId);
      if (!watchers) return;
      const now = Date.now();
      for (const [instance, expires] of watchers) {
        if (expires < now) watchers.delete(instance);
        else bus.toInstance(instance, "device-logs.lines", { device: deviceId, lines }).catch(onError);
      }
      if (watchers.size === 0) remote.delete(deviceId);
    },

    /** The last `count` lines (at most `keep`) received at or after `start` (ms), oldest first. */
    history(deviceId: number, count: number, start?: number): Promise<DeviceLogLine[]> {
      const wanted = Math.min(count, keep);
      return exclusive(async () => {
        const local = (pending.get(deviceId) ?? []).filter((l) => start === undefined || l.createdAt >= start);
        const stored = local.length >= wanted ? [] : await readLogLines(db, deviceId, wanted - local.length, start);
        return wanted <= 0 ? [] : [...stored, ...local].slice(-wanted);
      });
    },

    /** Removes every line of the device, here, in the table, and still pending on other instances. */
    async clear(deviceId: number) {
      await exclusive(async () => {
        pendingCount -= pending.get(deviceId)?.length ?? 0;
        pending.delete(deviceId);
        sincePrune.delete(deviceId);
        await deleteLogLines(db, deviceId);
      });
      await bus.toAll("device-logs.clear", { device: deviceId }).catch(onError);
    },

    /** Live lines of one device as they arrive (from this instance or others); returns the unwatch. */
    watch(deviceId: number, deliver: Deliver): () => void {
      const set = viewers.get(deviceId) ?? new Set<Deliver>();
      if (set.size >= MAX_VIEWERS_PER_DEVICE || viewerCount >= MAX_VIEWERS) {
        throw new FlotillaError("too_many_requests", "Too many open log streams. Try again later.");
      }
      set.add(deliver);
      viewerCount += 1;
      if (set.size === 1) {
        viewers.set(deviceId, set);
        announce([deviceId]);
      }
      let watching = true;
      return () => {
        if (!watching) return;
        watching = false;
        viewerCount -= 1;
        set.delete(deliver);
        if (set.size === 0) viewers.delete(deviceId);
      };
    },

    /** Live viewers of one device on this instance (tests wait for a stream to be attached). */
    viewersOf: (deviceId: number) => viewers.get(deviceId)?.size ?? 0,

    /** Lines kept per device. */
    keep,
    /** Writes what is pending now (tests, shutdown). */
    flush,

    /** Writes what is still pending; call before the database closes. */
    async close() {
      clearInterval(flushTimer);
      clearInterval(announceTimer);
      // The second round writes what arrived while a flush already under way was writing.
      await flush();
      await flush();
    },
  };
}

export type DeviceLogs = ReturnType<typeof createDeviceLogs>;
