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

  return {
    /** Throws 429 when this key reached the limit within the window. */
    check(rawKey: string, now = Date.now()) {
      const key = normal(rawKey);
      const times = recent(key, now);
      if (times.length < max) return;
      const retryAfter = Math.max(1, Math.ceil(((times[0] ?? now) + windowMs - now) / 1000));
      throw new FlotillaError("too_many_requests", message, { headers: { "retry-after": String(retryAfter) } });
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
