import { describe, expect, it } from "vitest";
import {
  type ApplicationType,
  compareSemver,
  FLEET_TYPE_PILL_KEYS,
  fleetTypeState,
  isDiscontinuedDeviceType,
  satisfiesOsVersionRange,
  sortFleetTypes,
} from "./index.ts";

const type = (slug: string, extra: Partial<ApplicationType> = {}): ApplicationType => ({
  id: slug.length,
  slug,
  name: slug,
  description: null,
  is_legacy: slug.startsWith("legacy"),
  requires_payment: false,
  supports_multicontainer: false,
  needs__os_version_range: null,
  ...extra,
});

const withOs = (oldest: string, newest: string, extra: Record<string, unknown> = {}) => ({
  data: { osVersions: { oldest, newest }, ...extra },
});
const paid = { isFree: false };

describe("fleet type options", () => {
  it("lists legacy-v1 and legacy-v2 last", () => {
    const sorted = sortFleetTypes([type("legacy-v2"), type("microservices"), type("legacy-v1"), type("essentials")]);
    expect(sorted.map((t) => t.slug)).toEqual(["essentials", "microservices", "legacy-v1", "legacy-v2"]);
  });

  it("marks paid-only types on a free plan and multicontainer types on device types without it", () => {
    expect(fleetTypeState(type("paid", { requires_payment: true }), {}, { isFree: true })).toBe("paid_only");
    expect(fleetTypeState(type("paid", { requires_payment: true }), {}, paid)).toBe("ok");
    const multi = type("microservices", { supports_multicontainer: true });
    expect(fleetTypeState(multi, { data: { supportsMulticontainer: false } }, paid)).toBe("needs_multicontainer");
    expect(fleetTypeState(multi, { data: {} }, paid)).toBe("ok");
    expect(fleetTypeState(multi, null, paid)).toBe("ok");
  });

  it("marks types whose OS range no available version reaches as upcoming, or has passed as discontinued", () => {
    const needs = (range: string) => type("t", { needs__os_version_range: range });
    expect(fleetTypeState(needs(">=2.12.0"), withOs("2.0.0", "2.11.9"), paid)).toBe("upcoming");
    expect(fleetTypeState(needs(">=2.12.0"), withOs("2.0.0", "2.12.0"), paid)).toBe("ok");
    expect(fleetTypeState(needs(">=2.12.0"), withOs("2.83.10", "6.0.13"), paid)).toBe("ok");
    expect(fleetTypeState(needs("<2.12.0"), withOs("2.12.0", "6.0.13"), paid)).toBe("discontinued");
    expect(fleetTypeState(needs("<2.12.0"), withOs("2.11.0", "6.0.13"), paid)).toBe("ok");
    expect(fleetTypeState(needs(">=2.0.0 <3.0.0"), withOs("3.1.0", "6.0.13"), paid)).toBe("discontinued");
    expect(fleetTypeState(needs(">=7.0.0 <8.0.0"), withOs("2.0.0", "6.0.13"), paid)).toBe("upcoming");
    expect(fleetTypeState(needs(">=2.0.0 <3.0.0"), withOs("2.5.0", "6.0.13"), paid)).toBe("ok");
    // Unknown OS versions or an unparseable range: the rule does not apply.
    expect(fleetTypeState(needs(">=2.12.0"), {}, paid)).toBe("ok");
    expect(fleetTypeState(needs("whatever"), withOs("1.0.0", "1.0.0"), paid)).toBe("ok");
    // The OS rule comes before the plan.
    expect(fleetTypeState(needs(">=9.0.0"), withOs("1.0.0", "6.0.13"), { isFree: true })).toBe("upcoming");
  });

  it("compares versions", () => {
    expect(compareSemver("2.12.0", "2.9.9")).toBeGreaterThan(0);
    expect(compareSemver("v6.0.13+rev1", "6.0.13")).toBe(0);
    expect(compareSemver("2.12", "2.12.1")).toBeLessThan(0);
    expect(satisfiesOsVersionRange("2.12.0", ">=2.12.0")).toBe(true);
    expect(satisfiesOsVersionRange("3.0.0", ">=2.12.0 <3.0.0")).toBe(false);
  });

  it("shows the spec's pills", () => {
    expect(FLEET_TYPE_PILL_KEYS).toEqual({
      ok: null,
      discontinued: "unavailable",
      upcoming: "coming_soon",
      paid_only: "paid_only",
      needs_multicontainer: "unavailable",
    });
  });

  it("recognises a discontinued device type by its contract", () => {
    expect(isDiscontinuedDeviceType({ state: "DISCONTINUED" })).toBe(true);
    expect(isDiscontinuedDeviceType({ state: "RELEASED" })).toBe(false);
    expect(isDiscontinuedDeviceType(null)).toBe(false);
  });
});
