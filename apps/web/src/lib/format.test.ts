import { describe, expect, it } from "vitest";
import { formatBytes, formatDate } from "./format.ts";

describe("formatDate", () => {
  it("uses the spec's format MMM do yyyy, h:mm a", () => {
    expect(formatDate(new Date(2025, 2, 4, 14, 5))).toBe("Mar 4th 2025, 2:05 PM");
    expect(formatDate(new Date(2024, 11, 31, 0, 0))).toBe("Dec 31st 2024, 12:00 AM");
    expect(formatDate(new Date(2023, 0, 22, 9, 30))).toBe("Jan 22nd 2023, 9:30 AM");
  });

  it("accepts ISO strings and timestamps", () => {
    const date = new Date(2025, 5, 3, 18, 45);
    expect(formatDate(date.toISOString())).toBe("Jun 3rd 2025, 6:45 PM");
    expect(formatDate(date.getTime())).toBe("Jun 3rd 2025, 6:45 PM");
  });
});

describe("formatBytes", () => {
  it("shows small counts in bytes", () => {
    expect(formatBytes(0)).toBe("0 bytes");
    expect(formatBytes(1)).toBe("1 byte");
    expect(formatBytes(1023)).toBe("1023 bytes");
  });

  it("steps through KB, MB, GB, TB up to PB", () => {
    expect(formatBytes(1024)).toBe("1 KB");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(5 * 1024 ** 2)).toBe("5 MB");
    expect(formatBytes(2.25 * 1024 ** 3)).toBe("2.3 GB");
    expect(formatBytes(7 * 1024 ** 4)).toBe("7 TB");
    expect(formatBytes(3 * 1024 ** 5)).toBe("3 PB");
  });

  it("never goes beyond PB", () => {
    expect(formatBytes(2048 * 1024 ** 5)).toBe("2048 PB");
  });

  it("rounds up into the next unit instead of printing 1024", () => {
    expect(formatBytes(1024 * 1024 - 1)).toBe("1 MB");
  });

  it("rejects nonsense", () => {
    expect(formatBytes(-1)).toBe("–");
    expect(formatBytes(Number.NaN)).toBe("–");
  });
});
