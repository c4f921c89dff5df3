import { describe, expect, it } from "vitest";
import { expiryDateFor } from "./api-key-expiry.ts";

describe("expiryDateFor", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  it("counts days from now, never is null", () => {
    expect(expiryDateFor("7", "", now)).toEqual({ ok: true, expiryDate: "2026-01-08T00:00:00.000Z" });
    expect(expiryDateFor("90", "", now)).toEqual({ ok: true, expiryDate: "2026-04-01T00:00:00.000Z" });
    expect(expiryDateFor("never", "", now)).toEqual({ ok: true, expiryDate: null });
  });

  it("requires an expiry and refuses a custom date in the past", () => {
    expect(expiryDateFor("", "", now)).toEqual({ ok: false, error: "expiry_required" });
    expect(expiryDateFor("custom", "", now)).toEqual({ ok: false, error: "expiry_required" });
    expect(expiryDateFor("custom", "2025-12-31T23:00:00Z", now)).toEqual({ ok: false, error: "expiry_past" });
    expect(expiryDateFor("custom", "2026-02-01T10:00:00Z", now)).toEqual({
      ok: true,
      expiryDate: "2026-02-01T10:00:00.000Z",
    });
  });
});
