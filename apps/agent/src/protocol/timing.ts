/** Timers the protocol code uses, so tests can drive them with a fake clock. */
export type Clock = {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
};

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export type Random = () => number;

/** `interval` ± `ratio` (default 10 %), evenly spread: polls of many devices do not line up. */
export function jittered(interval: number, random: Random = Math.random, ratio = 0.1): number {
  return Math.max(0, Math.round(interval * (1 - ratio + 2 * ratio * random())));
}

/**
 * The longest wait between attempts: with a handshake of at most CONNECT_TIMEOUT_MS, every agent
 * is back within 60 s of the API's return, however long it was away (docs/device-protocol.md).
 */
export const RECONNECT_CAP_MS = 30_000;
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Exponential backoff with full jitter: `random(0, min(cap, base × 2^attempt))`; the attempt
 * count goes back to 0 once a connection stayed up for `resetAfterMs`.
 */
export class Backoff {
  attempt = 0;
  constructor(
    private readonly options: { baseMs?: number; capMs?: number; resetAfterMs?: number; random?: Random } = {},
  ) {}

  get baseMs() {
    return this.options.baseMs ?? 1000;
  }
  get capMs() {
    return this.options.capMs ?? RECONNECT_CAP_MS;
  }
  get resetAfterMs() {
    return this.options.resetAfterMs ?? 30_000;
  }

  /** The largest delay the next attempt may wait. */
  ceiling(): number {
    return Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.attempt, 30));
  }

  /** The delay before the next attempt; counts the attempt. */
  next(): number {
    const delay = Math.floor((this.options.random ?? Math.random)() * this.ceiling());
    this.attempt += 1;
    return delay;
  }

  /** A connection that lasted `connectedMs` resets the count when it lasted long enough. */
  connectionEnded(connectedMs: number) {
    if (connectedMs >= this.resetAfterMs) this.attempt = 0;
  }

  reset() {
    this.attempt = 0;
  }
}
