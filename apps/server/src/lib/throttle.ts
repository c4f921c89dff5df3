import { FlotillaError } from "../errors.ts";

/**
 * Counts events (failed logins, wrong codes, reset mails) per key in a sliding window and answers
 * 429 with Retry-After once a key reached `max`. In memory: with several instances each counts its
 * own, which the per-address rate limit still bounds.
 */
export function createThrottle({
  max,
  windowMs,
  message,
  maxKeys = 100_000,
}: {
  max: number;
  windowMs: number;
  /** The 429's text; the catalogue's "Too Many Requests. Try again later." when absent. */
  message?: string;
  maxKeys?: number;
}) {
  const events = new Map<string, number[]>();
  const normal = (key: string) => key.trim().toLowerCase();
  const recent = (key: string, now: number) => (events.get(key) ?? []).filter((at) => now - at < windowMs);
  /** Seconds until this key may go on (its oldest event leaves the window), or undefined when it may now. */
  const retryAfter = (rawKey: string, now = Date.now()): number | undefined => {
    const times = recent(normal(rawKey), now);
    if (times.length < max) return undefined;
    return Math.max(1, Math.ceil(((times[0] ?? now) + windowMs - now) / 1000));
  };

  return {
    /** Throws 429 when this key reached the limit within the window. */
    check(rawKey: string, now = Date.now()) {
      const seconds = retryAfter(rawKey, now);
      if (seconds === undefined) return;
      throw new FlotillaError("too_many_requests", message, { headers: { "retry-after": String(seconds) } });
    },
    retryAfter,
    /** Forgets every key that starts with `prefix` (already normalised: lower case, trimmed). */
    resetPrefix(prefix: string) {
      for (const key of events.keys()) if (key.startsWith(prefix)) events.delete(key);
    },
    /** Has this key reached the limit within the window? */
    reached(rawKey: string, now = Date.now()) {
      return recent(normal(rawKey), now).length >= max;
    },
    hit(rawKey: string, now = Date.now()) {
      const key = normal(rawKey);
      const times = [...recent(key, now), now];
      // Re-inserted, so the map's order is least recently hit first.
      events.delete(key);
      events.set(key, times);
      // Oldest keys go first when the map is full, so a flood of keys cannot exhaust memory.
      if (events.size > maxKeys) events.delete(events.keys().next().value as string);
    },
    reset(rawKey: string) {
      events.delete(normal(rawKey));
    },
  };
}

export type Throttle = ReturnType<typeof createThrottle>;
