/**
 * The server's clock as the dashboard estimates it. Token decisions (expired? an hour old, so
 * refresh?) compare the token's `iat`/`exp`, written by the server's clock, with "now": a browser
 * clock an hour off would otherwise see every fresh token as an hour old and refresh it every
 * second. The offset is learnt from what the server says the time is: a token it has just issued
 * (its `iat`) and, where the browser may read it, the Date header of an answer.
 */

let offsetMs = 0;

/** The server's time now, in ms since the epoch. */
export const serverNow = (localNow = Date.now()) => localNow + offsetMs;

/** The current estimate of server time minus local time, in ms. */
export const serverClockOffset = () => offsetMs;

/**
 * The server said the time was `serverMs` at local time `localMs`. Differences under two seconds
 * are noise (a token's `iat` is whole seconds, a Date header too) and keep the current estimate.
 */
export function noteServerTime(serverMs: number, localMs = Date.now()): void {
  if (!Number.isFinite(serverMs)) return;
  const next = serverMs - localMs;
  if (Math.abs(next - offsetMs) >= 2000) offsetMs = next;
}

/** A Date header (RFC 9110 IMF-fixdate) of an answer just received. */
export function noteDateHeader(value: string | null | undefined, localMs = Date.now()): void {
  if (!value) return;
  const parsed = Date.parse(value);
  if (!Number.isNaN(parsed)) noteServerTime(parsed, localMs);
}

/** Back to "the clocks agree" (tests). */
export function resetServerClock(): void {
  offsetMs = 0;
}
