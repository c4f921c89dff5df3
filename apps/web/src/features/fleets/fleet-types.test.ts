import { describe, expect, it } from "vitest";
import {
  type ApplicationType,
  FLEET_TYPE_PILL_KEYS,
  fleetTypeState,
  isDiscontinuedDeviceType,
  sortFleetTypes,
} from "./fleet-types.ts";

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

describe("fleet type options", () => {
  it("lists legacy-v1 and legacy-v2 last", () => {
    const sorted = sortFleetTypes([type("legacy-v2"), type("microservices"), type("legacy-v1"), type("essentials")]);
    expect(sorted.map((t) => t.slug)).toEqual(["essentials", "microservices", "legacy-v1", "legacy-v2"]);
  });

  it("marks paid-only types on a free plan and multicontainer types on device types without it", () => {
    expect(fleetTypeState(type("paid", { requires_payment: true }), {}, { isFree: true })).toBe("paid_only");
    expect(fleetTypeState(type("paid", { requires_payment: true }), {}, { isFree: false })).toBe("ok");
    const multi = type("microservices", { supports_multicontainer: true });
    expect(fleetTypeState(multi, { data: { supportsMulticontainer: false } }, { isFree: false })).toBe(
      "needs_multicontainer",
    );
    expect(fleetTypeState(multi, { data: {} }, { isFree: false })).toBe("ok");
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
