import {
  PING_FAILURES_BEFORE_OFFLINE,
  PING_FIRST_DELAY_MS,
  PING_RETRY_MAX_MULTIPLIER,
  PING_RETRY_STEP_MS,
} from "@flotilla/domain";

/**
 * Connectivity (spec 1 §4, §7, §9): `GET {api}/ping` without a token, first 10 s after start.
 * A failed ping is never retried as a request; instead the next ping waits 200 ms × the number
 * of consecutive failures (the multiplier capped at 10). The 3rd consecutive failure flags the
 * app offline; the next successful ping clears the flag and releases the GET requests that were
 * queued meanwhile (see request-layer.ts). While online, pings repeat every 10 s.
 */

/** Delay between pings while the API answers. */
export const PING_INTERVAL_MS = PING_FIRST_DELAY_MS;
/** A ping without an answer after this long counts as failed. */
export const PING_TIMEOUT_MS = 5000;

/** Wait before the next ping after `consecutiveFailures` failed ones (0 = healthy). */
export function nextPingDelay(consecutiveFailures: number): number {
  if (consecutiveFailures <= 0) return PING_INTERVAL_MS;
  return PING_RETRY_STEP_MS * Math.min(consecutiveFailures, PING_RETRY_MAX_MULTIPLIER);
}

export const isOfflineAfter = (consecutiveFailures: number) => consecutiveFailures >= PING_FAILURES_BEFORE_OFFLINE;

export interface ConnectivityState {
  readonly offline: boolean;
  readonly consecutiveFailures: number;
}

export interface ConnectivityMonitor {
  start(): void;
  stop(): void;
  /** A stable snapshot (a new object only on change), for useSyncExternalStore. */
  getState(): ConnectivityState;
  subscribe(listener: () => void): () => void;
  isOffline(): boolean;
  /** Resolves at once when online, otherwise when the next ping succeeds. */
  whenOnline(): Promise<void>;
  /** Ping now instead of waiting for the schedule (the offline banner's retry button). */
  checkNow(): void;
  /** A request got no answer: check right away unless a check is already under way. */
  reportNetworkError(): void;
}

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const browserTimers: Timers = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export function createConnectivityMonitor(options: {
  /** Resolves true when the API answered; never rejects (a rejection counts as a failure). */
  ping: () => Promise<boolean>;
  timers?: Timers;
}): ConnectivityMonitor {
  const timers = options.timers ?? browserTimers;
  let state: ConnectivityState = { offline: false, consecutiveFailures: 0 };
  let timer: unknown;
  let pinging = false;
  let running = false;
  const listeners = new Set<() => void>();
  let onlineWaiters: Array<() => void> = [];

  const setState = (next: ConnectivityState) => {
    if (next.offline === state.offline && next.consecutiveFailures === state.consecutiveFailures) return;
    state = next;
    for (const listener of listeners) listener();
  };

  const schedule = (ms: number) => {
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = timers.setTimeout(() => {
      timer = undefined;
      void runPing();
    }, ms);
  };

  async function runPing() {
    if (pinging || !running) return;
    pinging = true;
    let ok: boolean;
    try {
      ok = await options.ping();
    } catch {
      ok = false;
    }
    pinging = false;
    if (!running) return;
    if (ok) {
      setState({ offline: false, consecutiveFailures: 0 });
      const waiters = onlineWaiters;
      onlineWaiters = [];
      for (const resolve of waiters) resolve();
    } else {
      const consecutiveFailures = state.consecutiveFailures + 1;
      setState({ offline: state.offline || isOfflineAfter(consecutiveFailures), consecutiveFailures });
    }
    schedule(nextPingDelay(state.consecutiveFailures));
  }

  function checkNow() {
    if (!running || pinging) return;
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = undefined;
    void runPing();
  }

  return {
    start() {
      if (running) return;
      running = true;
      schedule(PING_FIRST_DELAY_MS);
    },
    stop() {
      running = false;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
    },
    getState: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    isOffline: () => state.offline,
    whenOnline() {
      if (!state.offline) return Promise.resolve();
      return new Promise<void>((resolve) => onlineWaiters.push(resolve));
    },
    checkNow,
    reportNetworkError() {
      // Already failing: the backoff schedule is on it.
      if (state.consecutiveFailures === 0) checkNow();
    },
  };
}

/** The real ping: `GET {api}/ping`, no token, no cookies, no retry; any answer below 500 counts as reachable. */
export function createApiPing(apiUrl: string, fetchImpl: typeof fetch = (input, init) => fetch(input, init)) {
  const url = new URL("/ping", apiUrl).href;
  return async (): Promise<boolean> => {
    try {
      const response = await fetchImpl(url, {
        method: "GET",
        cache: "no-store",
        credentials: "omit",
        signal: AbortSignal.timeout(PING_TIMEOUT_MS),
      });
      return response.status < 500;
    } catch {
      return false;
    }
  };
}
