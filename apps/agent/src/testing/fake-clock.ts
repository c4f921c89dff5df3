import type { Clock } from "../protocol/timing.ts";

/** A clock for tests: timers fire only when `advance` moves time past them, in order. */
export class FakeClock implements Clock {
  private time: number;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private nextId = 1;

  constructor(start = 1_700_000_000_000) {
    this.time = start;
  }

  now() {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number) {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown) {
    this.timers.delete(handle as number);
  }

  get pending() {
    return this.timers.size;
  }

  advance(ms: number) {
    const end = this.time + ms;
    for (;;) {
      let first: [number, { at: number; fn: () => void }] | null = null;
      for (const entry of this.timers) if (entry[1].at <= end && (!first || entry[1].at < first[1].at)) first = entry;
      if (!first) break;
      this.timers.delete(first[0]);
      this.time = first[1].at;
      first[1].fn();
    }
    this.time = end;
  }
}

/** A seeded pseudo-random source (mulberry32): the same run every time. */
export function seeded(seed = 42): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
