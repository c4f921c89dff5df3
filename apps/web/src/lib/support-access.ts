/** Support access (spec 2 §4, §9): off without a date, expired once it has passed; default 5 days ahead. */
export const SUPPORT_ACCESS_DEFAULT_DAYS = 5;

export type SupportAccessState = { state: "off" } | { state: "granted" | "expired"; until: Date };

export function supportAccessState(until: string | null | undefined, now = Date.now()): SupportAccessState {
  if (!until) return { state: "off" };
  const date = new Date(until);
  return { state: date.getTime() > now ? "granted" : "expired", until: date };
}

/** The value of a `datetime-local` input for a date (local time, minutes). */
export function toDateTimeLocal(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export const defaultSupportAccessInput = (now = Date.now()) =>
  toDateTimeLocal(new Date(now + SUPPORT_ACCESS_DEFAULT_DAYS * 24 * 60 * 60 * 1000));

/** The chosen date-time in ms, or why it cannot be used (missing, or earlier than now). */
export function supportAccessUntil(
  input: string,
  now = Date.now(),
): { ok: true; ms: number } | { ok: false; error: "missing" | "past" } {
  if (!input) return { ok: false, error: "missing" };
  const ms = new Date(input).getTime();
  if (Number.isNaN(ms)) return { ok: false, error: "missing" };
  if (ms <= now) return { ok: false, error: "past" };
  return { ok: true, ms };
}

/** An empty repository URL is stored as null (spec 2 §5). */
export const repositoryUrlValue = (input: string): string | null => (input.trim() === "" ? null : input.trim());
