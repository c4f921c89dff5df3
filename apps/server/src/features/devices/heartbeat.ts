import type { WebhookEvent } from "@flotilla/domain";
import type { Redis } from "ioredis";
import type { Queryable } from "../../db/index.ts";
import { deliveriesFrom } from "../webhooks/events.ts";
import { inPieces } from "./batches.ts";
import { DEFAULT_POLL_INTERVAL_MS } from "./target-state.ts";

/**
 * Heartbeat (docs/device-protocol.md "Heartbeat", DESIGN §4): any device call makes the device
 * `online`; 1.5 × its poll interval without a call makes it `timeout`, 15 s more `offline`.
 * Calls cost no database write: last-seen times live in memory (in Redis when several API
 * instances run), a sweep every second writes only the changes of `api_heartbeat_state`, and
 * `last_connectivity_event` is written with each change and in batches for devices seen since.
 */

export type HeartbeatState = "online" | "timeout" | "offline";

/** Webhook events of heartbeat changes; `timeout` is a step towards offline, not an event. */
const HEARTBEAT_EVENTS: Partial<Record<HeartbeatState, WebhookEvent>> = {
  online: "device.online",
  offline: "device.offline",
};
export type Clock = { now(): number };

export const TIMEOUT_FACTOR = 1.5;
export const OFFLINE_AFTER_TIMEOUT_MS = 15_000;

type Seen = { seen: number; interval: number };
type Tracked = Seen & { state: HeartbeatState | undefined };

/** Where last-seen times and the written state are shared between instances. */
type Store = {
  touch(id: number, seen: Seen): void;
  /** Shares the touches not shared yet (a sweep does first, so what this process saw is shared before it reads). */
  flush(): Promise<void>;
  latest(ids: number[]): Promise<Map<number, Seen>>;
  /** Records the state; true when this instance is the one to write it (it changed). */
  claim(id: number, state: HeartbeatState, ttlMs: number): Promise<boolean>;
  /** Forgets a claimed state whose write failed, so that the next sweep claims and writes it again. */
  unclaim(id: number): Promise<void>;
};

export function stateAfter(elapsedMs: number, intervalMs: number): HeartbeatState {
  const timeoutAt = TIMEOUT_FACTOR * intervalMs;
  if (elapsedMs < timeoutAt) return "online";
  return elapsedMs < timeoutAt + OFFLINE_AFTER_TIMEOUT_MS ? "timeout" : "offline";
}

/** One instance alone: its own memory is the truth, every change it sees is its to write. */
function memoryStore(): Store {
  return {
    touch: () => undefined,
    flush: async () => undefined,
    latest: async () => new Map(),
    claim: async () => true,
    unclaim: async () => undefined,
  };
}

/**
 * Touches wait this long and go in one command: a SET per device call was the largest piece of a
 * worker's CPU in a connect storm (ioredis's command for each call, docs/benchmarks.md), and a
 * device calls several times a second while it starts (poll, report, log stream, cloudlink).
 */
const TOUCH_FLUSH_MS = 250;
const TOUCHES_PER_COMMAND = 1000;
/** SET with PX for each key: KEYS[i] gets ARGV[2i-1] for ARGV[2i] ms. */
const SET_EACH = `for i, key in ipairs(KEYS) do redis.call('SET', key, ARGV[2 * i - 1], 'PX', ARGV[2 * i]) end return #KEYS`;

function redisStore(redis: Redis, prefix: string): Store {
  const seenKey = (id: number) => `${prefix}hb:seen:${id}`;
  const stateKey = (id: number) => `${prefix}hb:state:${id}`;
  let touches = new Map<number, Seen>();
  let timer: NodeJS.Timeout | undefined;
  const flush = async () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (touches.size === 0) return;
    const batch = [...touches];
    touches = new Map();
    for (let start = 0; start < batch.length; start += TOUCHES_PER_COMMAND) {
      const piece = batch.slice(start, start + TOUCHES_PER_COMMAND);
      const args: (string | number)[] = piece.map(([id]) => seenKey(id));
      for (const [, { seen, interval }] of piece) {
        args.push(`${seen}:${interval}`, Math.ceil(TIMEOUT_FACTOR * interval + OFFLINE_AFTER_TIMEOUT_MS + 60_000));
      }
      // Fire and forget: a lost touch only delays a state change by one call.
      await redis.eval(SET_EACH, piece.length, ...args).catch(() => undefined);
    }
  };
  return {
    touch(id, seen) {
      touches.set(id, seen);
      if (!timer) {
        timer = setTimeout(() => void flush(), TOUCH_FLUSH_MS);
        timer.unref();
      }
    },
    flush,
    async latest(ids) {
      const found = new Map<number, Seen>();
      if (ids.length === 0) return found;
      const values = await redis.mget(ids.map(seenKey));
      ids.forEach((id, index) => {
        const [seen, interval] = (values[index] ?? "").split(":").map(Number);
        if (seen && interval) found.set(id, { seen, interval });
      });
      return found;
    },
    async claim(id, state, ttlMs) {
      const previous = await redis.set(stateKey(id), state, "PX", ttlMs, "GET");
      return previous !== state;
    },
    async unclaim(id) {
      await redis.del(stateKey(id));
    },
  };
}

type Db = Pick<Queryable, "query">;

export function createHeartbeat(options: {
  db: Db;
  redis?: Redis | undefined;
  /** Prefix of the Redis keys (see bus.ts). */
  prefix?: string;
  clock?: Clock;
  /** Sweep period; 0 leaves sweeping to explicit `sweep()` calls (tests). */
  sweepMs?: number;
  /** How often last-seen times of online devices are written. */
  lastSeenFlushMs?: number;
  onError?: (error: unknown) => void;
}) {
  const { db, clock = Date, onError = () => undefined } = options;
  const tracked = new Map<number, Tracked>();
  const store = options.redis ? redisStore(options.redis, options.prefix ?? "flotilla:") : memoryStore();
  /** Devices seen since the last batch of last-seen times. */
  const seenSince = new Map<number, number>();
  let sweeping: Promise<void> | undefined;

  async function write(state: HeartbeatState, changes: { id: number; seen: number }[], at: number) {
    await inPieces(changes, (piece) => writeState(state, piece, at));
  }

  async function writeState(state: HeartbeatState, changes: { id: number; seen: number }[], at: number) {
    // The same statement queues device.online / device.offline for subscribed webhooks
    // (nothing when none is): the sweep gains no statement.
    await db.query(
      `WITH changed AS (
         UPDATE "device" d SET api_heartbeat_state = $1, changed_api_heartbeat_state_on__date = $2,
                last_connectivity_event = v.seen, written_is_online = NULL
           FROM jsonb_to_recordset($3::jsonb) AS v(id int, seen timestamptz)
          WHERE d.id = v.id AND d.api_heartbeat_state <> $1
          RETURNING d.id, d.uuid, d.device_name, d.belongs_to__application),
       source AS (
         SELECT a.organization, a.id AS fleet,
                jsonb_build_object('device', c.uuid, 'device_id', c.id, 'name', c.device_name, 'state', $1::text,
                                   'last_seen', $2::text) AS data
           FROM changed c JOIN "application" a ON a.id = c.belongs_to__application
          WHERE $4::text IS NOT NULL)
       ${deliveriesFrom("source", "$4")}`,
      [
        state,
        new Date(at).toISOString(),
        JSON.stringify(changes.map((c) => ({ id: c.id, seen: new Date(c.seen).toISOString() }))),
        HEARTBEAT_EVENTS[state] ?? null,
      ],
    );
  }

  async function sweepOnce() {
    await store.flush();
    const now = clock.now();
    const ids = [...tracked.keys()];
    const shared = await store.latest(ids);
    type Change = { id: number; seen: number; local: Tracked; previous: HeartbeatState | undefined };
    const changes: Record<HeartbeatState, Change[]> = { online: [], timeout: [], offline: [] };
    for (const id of ids) {
      const local = tracked.get(id);
      if (!local) continue;
      const other = shared.get(id);
      if (other && other.seen > local.seen) Object.assign(local, other);
      const state = stateAfter(now - local.seen, local.interval);
      if (state === local.state) continue;
      const ttl = Math.ceil(TIMEOUT_FACTOR * local.interval + OFFLINE_AFTER_TIMEOUT_MS + 60_000);
      if (await store.claim(id, state, ttl))
        changes[state].push({ id, seen: local.seen, local, previous: local.state });
      local.state = state;
      // An offline device is forgotten until it calls again.
      if (state === "offline") {
        tracked.delete(id);
        seenSince.delete(id);
      }
    }
    const failures: unknown[] = [];
    for (const state of ["online", "timeout", "offline"] as const) {
      await write(state, changes[state], now).catch(async (error: unknown) => {
        // Not written: the next sweep finds the change again (the statement only writes rows
        // whose state differs, so pieces that were written are not written twice).
        failures.push(error);
        for (const { id, local, previous } of changes[state]) {
          local.state = previous;
          if (!tracked.has(id)) tracked.set(id, local);
          await store.unclaim(id).catch(() => undefined);
        }
      });
    }
    if (failures.length > 0) throw failures[0];
  }

  const sweep = async () => {
    // One sweep at a time; a caller during a sweep waits for it.
    if (!sweeping) sweeping = sweepOnce().finally(() => (sweeping = undefined));
    await sweeping;
  };

  /** Writes the last-seen times of devices seen since the last batch. */
  async function flushLastSeen() {
    if (seenSince.size === 0) return;
    const batch = [...seenSince].map(([id, seen]) => ({ id, seen: new Date(seen).toISOString() }));
    seenSince.clear();
    await inPieces(batch, (piece) =>
      db.query(
        `UPDATE "device" d SET last_connectivity_event = v.seen
           FROM jsonb_to_recordset($1::jsonb) AS v(id int, seen timestamptz)
          WHERE d.id = v.id AND (d.last_connectivity_event IS NULL OR d.last_connectivity_event < v.seen)`,
        [JSON.stringify(piece)],
      ),
    );
  }

  const timers: NodeJS.Timeout[] = [];
  if (options.sweepMs !== 0) {
    timers.push(setInterval(() => sweep().catch(onError), options.sweepMs ?? 1000));
  }
  if (options.lastSeenFlushMs !== 0) {
    timers.push(setInterval(() => flushLastSeen().catch(onError), options.lastSeenFlushMs ?? 60_000));
  }
  for (const timer of timers) timer.unref();

  return {
    /** A device call: the device is online from now on (written by the next sweep). */
    seen(deviceId: number, pollIntervalMs?: number) {
      const now = clock.now();
      const local = tracked.get(deviceId);
      const interval = pollIntervalMs ?? local?.interval ?? DEFAULT_POLL_INTERVAL_MS;
      if (local) {
        local.seen = now;
        local.interval = interval;
      } else {
        tracked.set(deviceId, { seen: now, interval, state: undefined });
      }
      seenSince.set(deviceId, now);
      store.touch(deviceId, { seen: now, interval });
    },
    sweep,
    flushLastSeen,
    /** The state this instance last saw (tests, diagnostics). */
    stateOf: (deviceId: number) => tracked.get(deviceId)?.state,
    async close() {
      for (const timer of timers) clearInterval(timer);
      await sweep().catch(onError);
      await flushLastSeen().catch(onError);
    },
  };
}

export type Heartbeat = ReturnType<typeof createHeartbeat>;
