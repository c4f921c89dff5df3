import { MAX_REQUESTS_IN_FLIGHT } from "@flotilla/domain";
import { beginActivity } from "./activity.ts";
import { type ConcurrencyLimiter, createConcurrencyLimiter } from "./concurrency.ts";
import { getStatusCode, isNetworkError } from "./errors.ts";

/**
 * What sits between the SDK and the network (spec 1 §4, §7, §9), wrapped around the SDK's
 * `request.send` (which every SDK call, pine included, goes through):
 * - at most 350 requests in flight; the rest wait their turn;
 * - a 429 answer is retried after its Retry-After (or a short backoff when it has none), up to
 *   3 times, unless the server asks for a wait longer than 20 s (then the page shows the error
 *   "Too Many Requests. Try again later." instead of a spinner that seems stuck);
 * - while the app is offline, GET requests are held and sent once a ping succeeds again; a GET
 *   that fails for lack of network while offline is queued the same way and replayed.
 */

export const MAX_RATE_LIMIT_RETRIES = 3;
/** Longer waits than this are not worth holding a page for: the error is shown instead. */
export const MAX_RETRY_AFTER_MS = 20_000;
const FALLBACK_RETRY_MS = 1000;

/** Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number.parseInt(trimmed, 10) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** How long to wait before retry number `attempt` (1-based) of a 429, or undefined to give up. */
export function rateLimitRetryDelay(retryAfter: string | null | undefined, attempt: number, now = Date.now()) {
  if (attempt > MAX_RATE_LIMIT_RETRIES) return undefined;
  const ms = parseRetryAfter(retryAfter, now) ?? FALLBACK_RETRY_MS * 2 ** (attempt - 1);
  return ms > MAX_RETRY_AFTER_MS ? undefined : ms;
}

interface SendOptions {
  method?: string;
  /** The SDK's own opt-out of retries. */
  doNotRetry?: boolean;
}

interface HeadersLike {
  get(name: string): string | null;
}

export interface Connectivity {
  isOffline(): boolean;
  whenOnline(): Promise<void>;
  reportNetworkError(): void;
}

export interface RequestLayerOptions {
  connectivity: Connectivity;
  limiter?: ConcurrencyLimiter;
  sleep?: (ms: number) => Promise<void>;
  /** Told about every 429 answer, with its Retry-After in ms when it has one (the throttling banner). */
  onRateLimited?: (retryAfterMs: number | undefined) => void;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const retryAfterHeader = (error: unknown): string | null => {
  const headers = (error as { responseHeaders?: HeadersLike } | null)?.responseHeaders;
  return typeof headers?.get === "function" ? headers.get("Retry-After") : null;
};

export function createRequestLayer<O extends SendOptions, R>(
  send: (options: O) => Promise<R>,
  {
    connectivity,
    limiter = createConcurrencyLimiter(MAX_REQUESTS_IN_FLIGHT),
    sleep = defaultSleep,
    onRateLimited,
  }: RequestLayerOptions,
): (options: O) => Promise<R> {
  return async function layeredSend(options: O): Promise<R> {
    const isGet = (options.method ?? "GET").toUpperCase() === "GET";
    if (isGet) return sendWithRetries(options, isGet);
    const end = beginActivity();
    try {
      return await sendWithRetries(options, isGet);
    } finally {
      end();
    }
  };

  async function sendWithRetries(options: O, isGet: boolean): Promise<R> {
    let rateLimitRetries = 0;
    let replayedAfterOffline = false;
    for (;;) {
      // Queued while offline, replayed when the connection is back.
      if (isGet && connectivity.isOffline()) await connectivity.whenOnline();
      try {
        return await limiter.run(() => send(options));
      } catch (error) {
        if (getStatusCode(error) === 429) onRateLimited?.(parseRetryAfter(retryAfterHeader(error)));
        if (getStatusCode(error) === 429 && !options.doNotRetry) {
          rateLimitRetries += 1;
          const delay = rateLimitRetryDelay(retryAfterHeader(error), rateLimitRetries);
          if (delay !== undefined) {
            // The slot is free while waiting: a rate-limited request must not block the others.
            await sleep(delay);
            continue;
          }
        }
        if (isNetworkError(error)) {
          connectivity.reportNetworkError();
          if (isGet && !replayedAfterOffline && connectivity.isOffline()) {
            replayedAfterOffline = true;
            continue;
          }
        }
        throw error;
      }
    }
  }
}
