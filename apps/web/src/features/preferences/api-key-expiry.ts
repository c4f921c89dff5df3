import type { API_KEY_EXPIRY_DAYS } from "@flotilla/domain";

/** The expiry choices of a new API key (spec 1 §5, §9): 1/7/30/90 days, a custom date-time, or never. */
export type ExpiryChoice = `${(typeof API_KEY_EXPIRY_DAYS)[number]}` | "custom" | "never" | "";

export type ExpiryResult =
  | { ok: true; expiryDate: string | null }
  | { ok: false; error: "expiry_required" | "expiry_past" };

export function expiryDateFor(choice: ExpiryChoice, custom: string, now = Date.now()): ExpiryResult {
  if (choice === "") return { ok: false, error: "expiry_required" };
  if (choice === "never") return { ok: true, expiryDate: null };
  if (choice === "custom") {
    if (!custom) return { ok: false, error: "expiry_required" };
    const at = new Date(custom).getTime();
    if (Number.isNaN(at)) return { ok: false, error: "expiry_required" };
    if (at <= now) return { ok: false, error: "expiry_past" };
    return { ok: true, expiryDate: new Date(at).toISOString() };
  }
  return { ok: true, expiryDate: new Date(now + Number(choice) * 24 * 60 * 60 * 1000).toISOString() };
}
