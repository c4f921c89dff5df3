/**
 * Fleet type options of the create and change dialogs (spec 2 §4 "Fleet type options", §9).
 * The state of each option comes from packages/domain once it exports `fleetTypeOption`; until
 * then this mirrors its rules: paid-only types on a free plan, multicontainer types on device
 * types without multicontainer support.
 */
export type FleetTypeState = "ok" | "discontinued" | "upcoming" | "paid_only" | "needs_multicontainer";

export interface ApplicationType {
  id: number;
  slug: string;
  name: string;
  description: string | null;
  is_legacy: boolean;
  requires_payment: boolean;
  supports_multicontainer: boolean;
  needs__os_version_range: string | null;
}

/** The pill each state shows ("unavailable", "coming soon", "paid only"); ok shows none. */
export const FLEET_TYPE_PILL_KEYS: Record<FleetTypeState, "unavailable" | "coming_soon" | "paid_only" | null> = {
  ok: null,
  discontinued: "unavailable",
  upcoming: "coming_soon",
  paid_only: "paid_only",
  needs_multicontainer: "unavailable",
};

const supportsMulticontainer = (contract: unknown): boolean => {
  const data = (contract as { data?: { supportsMulticontainer?: unknown } } | null)?.data;
  return data?.supportsMulticontainer !== false;
};

export function fleetTypeState(
  type: ApplicationType,
  deviceTypeContract: unknown,
  plan: { isFree: boolean },
): FleetTypeState {
  if (type.requires_payment && plan.isFree) return "paid_only";
  if (type.supports_multicontainer && !supportsMulticontainer(deviceTypeContract)) return "needs_multicontainer";
  return "ok";
}

/** Legacy types ("legacy-v1", "legacy-v2") are listed last (spec 2 §9). */
export function sortFleetTypes<T extends Pick<ApplicationType, "is_legacy" | "slug">>(types: readonly T[]): T[] {
  return [...types].sort((a, b) => Number(a.is_legacy) - Number(b.is_legacy) || a.slug.localeCompare(b.slug));
}

/** A device type whose contract marks it discontinued. */
export function isDiscontinuedDeviceType(contract: unknown): boolean {
  const state = (contract as { state?: unknown } | null)?.state;
  return typeof state === "string" && state.toUpperCase() === "DISCONTINUED";
}
