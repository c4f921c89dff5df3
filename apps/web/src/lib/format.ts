import { DATE_FORMAT } from "@flotilla/domain";
import { format } from "date-fns";

/** A date in the product's format, "MMM do yyyy, h:mm a" (spec 1 §9), e.g. "Mar 4th 2025, 2:05 PM". */
export function formatDate(value: Date | string | number): string {
  return format(typeof value === "string" ? new Date(value) : value, DATE_FORMAT);
}

/** The full timestamp, for hover titles next to a formatted date. */
export function formatFullDate(value: Date | string | number): string {
  return format(typeof value === "string" ? new Date(value) : value, "EEEE, MMMM do yyyy, h:mm:ss a xxx");
}

export const BYTE_UNITS = ["bytes", "KB", "MB", "GB", "TB", "PB"] as const;

/**
 * A byte count with a unit from bytes up to PB (spec 1 §9), 1024-based, at most one decimal:
 * 0 → "0 bytes", 1 → "1 byte", 1536 → "1.5 KB", 3 × 1024⁵ → "3 PB"; larger values stay in PB.
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "–";
  if (bytes < 1024) {
    const whole = Math.round(bytes);
    return `${whole} ${whole === 1 ? "byte" : "bytes"}`;
  }
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  // Round first so 1023.96 KB does not print as "1024 KB".
  let rounded = Math.round(value * 10) / 10;
  if (rounded >= 1024 && unit < BYTE_UNITS.length - 1) {
    rounded = Math.round((rounded / 1024) * 10) / 10;
    unit += 1;
  }
  const text = Number.isInteger(rounded) ? String(rounded) : rounded.toFixed(1);
  return `${text} ${BYTE_UNITS[unit]}`;
}
