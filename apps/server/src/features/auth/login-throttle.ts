import { FlotillaError } from "../../errors.ts";

/**
 * Repeated failed logins for one account are answered 429 with Retry-After until the window
 * passes, so passwords cannot be guessed at speed. In memory: with several instances each counts
 * its own (the per-address rate limit still bounds the total).
 */
export function createLoginThrottle({ maxFailures = 10, windowMs = 15 * 60 * 1000 } = {}) {
  const failures = new Map<string, number[]>();
  const recent = (key: string, now: number) => (failures.get(key) ?? []).filter((at) => now - at < windowMs);

  return {
    /** Throws 429 when this login has failed too often lately. */
    check(login: string, now = Date.now()) {
      const key = login.trim().toLowerCase();
      const times = recent(key, now);
      if (times.length < maxFailures) return;
      const retryAfter = Math.ceil(((times[0] ?? now) + windowMs - now) / 1000);
      throw new FlotillaError("too_many_requests", undefined, { headers: { "retry-after": String(retryAfter) } });
    },
    failed(login: string, now = Date.now()) {
      const key = login.trim().toLowerCase();
      failures.set(key, [...recent(key, now), now]);
      if (failures.size > 100_000) failures.delete(failures.keys().next().value as string);
    },
    succeeded(login: string) {
      failures.delete(login.trim().toLowerCase());
    },
  };
}
