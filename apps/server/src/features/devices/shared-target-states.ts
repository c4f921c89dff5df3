import type { Redis } from "ioredis";
import type { Invalidation, TargetState } from "./target-state.ts";

/**
 * Target states built by one process, for the others (worker processes and instances sharing
 * Redis): without it each process builds each device's target state itself after every change
 * (about 7 statements), so N workers read the database N times for one device; with it the
 * first process builds and the others take its entry from Redis (one round trip).
 *
 * Never older than a build from the database would be: every change gets a number in Redis
 * (INCR `ts:seq`) after it committed, and its invalidation message carries that number. An
 * entry carries the number read before the reads that built it, so it was built after every
 * change numbered up to it; a process takes an entry only when no change was numbered since
 * (the entry's number is the current one, read in the same round trip as the entry), whether
 * or not that change's message has reached it yet: a device told to fetch its new state at
 * once gets it from any worker. Changes anywhere make every shared entry go, so the next poll
 * of each device builds again once, in one process. Besides, as for its own cache, a process
 * takes no entry older than a change it knows of (its device, fleet or everything), than its
 * floor (its own INCR after it began listening, or after a change that could not be numbered:
 * Redis down, or an instance that numbers none), nor one its own unnumbered changes touch.
 */

/** A shared entry lives this long after it was written; rewritten by the next build after a change. */
const ENTRY_TTL_MS = 15 * 60_000;

type Stamped = TargetState & { stamp: number };

export type SharedTargetStates = ReturnType<typeof createSharedTargetStates>;

export function createSharedTargetStates(options: {
  redis: Redis;
  prefix: string;
  onError?: (error: unknown) => void;
}) {
  const { redis, prefix, onError = () => undefined } = options;
  const seqKey = `${prefix}ts:seq`;
  const entryKey = (uuid: string) => `${prefix}ts:entry:${uuid}`;
  // When each scope last changed, in ts:seq's numbers, as far as this process knows.
  let everythingChangedAt = 0;
  const fleetChangedAt = new Map<number, number>();
  const deviceChangedAt = new Map<number, number>();
  /** Entries numbered below this are not taken; Infinity until this process's INCR answers. */
  let floor = Number.POSITIVE_INFINITY;
  let floorRound = 0;
  let floorAsking = false;
  /** This process's changes waiting for their number: entries they touch are not taken meanwhile. */
  const pending = new Set<Invalidation>();

  const raiseFloor = () => {
    floor = Number.POSITIVE_INFINITY;
    const round = ++floorRound;
    floorAsking = true;
    redis.incr(seqKey).then(
      (number) => {
        // A change that could not be numbered after this INCR was sent waits for a later one.
        if (round !== floorRound) return;
        floor = number;
        floorAsking = false;
      },
      (error: unknown) => {
        if (round === floorRound) floorAsking = false;
        onError(error);
      },
    );
  };

  const mark = ({ devices = [], fleets = [], all = false }: Invalidation, number: number) => {
    if (all) everythingChangedAt = Math.max(everythingChangedAt, number);
    for (const fleet of fleets) fleetChangedAt.set(fleet, Math.max(fleetChangedAt.get(fleet) ?? 0, number));
    for (const device of devices) deviceChangedAt.set(device, Math.max(deviceChangedAt.get(device) ?? 0, number));
  };

  const touches = (change: Invalidation, entry: TargetState) =>
    change.all === true || change.fleets?.includes(entry.fleet) || change.devices?.includes(entry.deviceId);

  const trusted = (entry: Stamped) =>
    entry.stamp >= floor &&
    entry.stamp >= everythingChangedAt &&
    entry.stamp >= (fleetChangedAt.get(entry.fleet) ?? 0) &&
    entry.stamp >= (deviceChangedAt.get(entry.deviceId) ?? 0) &&
    ![...pending].some((change) => touches(change, entry));

  raiseFloor();

  return {
    /**
     * The entry another process built, when it may be taken; otherwise the number to build a new
     * one under (undefined when Redis does not answer: build, share nothing).
     */
    async find(uuid: string): Promise<{ state: TargetState } | { stamp: number | undefined }> {
      if (floor === Number.POSITIVE_INFINITY && !floorAsking) raiseFloor();
      let found: (string | null)[];
      try {
        found = await redis.mget(entryKey(uuid), seqKey);
      } catch (error) {
        onError(error);
        return { stamp: undefined };
      }
      const [json, seq] = found;
      if (json && seq !== null) {
        try {
          const entry = JSON.parse(json) as Stamped;
          if (entry.stamp === Number(seq) && trusted(entry)) {
            const { stamp: _, ...state } = entry;
            return { state };
          }
        } catch {
          // not an entry of ours: built again below
        }
      }
      return { stamp: Number(seq ?? 0) };
    },
    /** Shares a state built from reads made after `stamp` was read (fire and forget). */
    share(uuid: string, state: TargetState, stamp: number) {
      const entry: Stamped = { ...state, stamp };
      redis.set(entryKey(uuid), JSON.stringify(entry), "PX", ENTRY_TTL_MS).catch(onError);
    },
    /** Numbers a change this process made (after its commit): the number goes with its message; undefined when Redis did not answer. */
    async number(change: Invalidation): Promise<number | undefined> {
      pending.add(change);
      try {
        const number = await redis.incr(seqKey);
        mark(change, number);
        return number;
      } catch (error) {
        onError(error);
        raiseFloor();
        return undefined;
      } finally {
        pending.delete(change);
      }
    },
    /** Another process's change, with its number (none from a process that could not number it). */
    received(change: Invalidation, number: unknown) {
      if (typeof number === "number" && Number.isFinite(number)) mark(change, number);
      else raiseFloor();
    },
  };
}
