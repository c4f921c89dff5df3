/**
 * Fleet type options (spec 2 §4 "Fleet type options", §9): whether a fleet type (application
 * type) can be chosen for a device type on an organization's plan. Shared by the dashboard's
 * create and change dialogs and the server, which refuses what the dialogs would not offer.
 *
 * Device type contract fields read here (the `contract` column of `device_type`):
 * - `state?: string` — `"DISCONTINUED"` (any case) marks a device type that can no longer be
 *   chosen for fleets or devices (spec 2 §8 "Discontinued device type: {type}").
 * - `data.supportsMulticontainer?: boolean` — `false` when the device type cannot run
 *   multicontainer fleet types; missing means it can.
 * - `data.osVersions?: { oldest: string; newest: string }` — the range of OS versions available
 *   for the device type (semver, e.g. "2.83.10" and "6.0.13"); missing means unknown, and then
 *   the OS-version rule does not apply.
 *
 * Application type fields: `needs__os_version_range` is a range like ">=2.12.0", "<3.0.0" or
 * ">=2.12.0 <3.0.0" (space-separated comparators, all must hold); null means any OS.
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

const contractData = (contract: unknown): Record<string, unknown> | undefined => {
  const data = (contract as { data?: unknown } | null | undefined)?.data;
  return data && typeof data === "object" ? (data as Record<string, unknown>) : undefined;
};

const supportsMulticontainer = (contract: unknown): boolean => contractData(contract)?.supportsMulticontainer !== false;

/** Parses "v1.2.3", "1.2.3+rev1", "2.12" into [major, minor, patch]; null when not a version. */
export function parseSemver(version: string): [number, number, number] | null {
  const match = /^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+.][0-9A-Za-z.+-]*)?\s*$/.exec(version);
  if (!match) return null;
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

/** Negative when a < b, 0 when equal, positive when a > b (prerelease and build tags ignored). */
export function compareSemver(a: string, b: string): number {
  const pa = parseSemver(a);
  const pb = parseSemver(b);
  if (!pa || !pb) return 0;
  for (let i = 0; i < 3; i++) {
    const diff = (pa[i] as number) - (pb[i] as number);
    if (diff !== 0) return diff;
  }
  return 0;
}

interface Comparator {
  op: ">=" | ">" | "<=" | "<" | "=";
  version: string;
}

const parseRange = (range: string): Comparator[] => {
  const comparators: Comparator[] = [];
  for (const part of range.trim().split(/\s+/)) {
    const match = /^(>=|<=|>|<|=)?\s*(\S+)$/.exec(part);
    if (!match || !parseSemver(match[2] as string)) continue;
    comparators.push({ op: (match[1] ?? "=") as Comparator["op"], version: match[2] as string });
  }
  return comparators;
};

/** "below" when the version is under the range, "above" when over it, "in" when it satisfies it. */
function positionInRange(version: string, comparators: readonly Comparator[]): "below" | "in" | "above" {
  for (const { op, version: bound } of comparators) {
    const c = compareSemver(version, bound);
    if ((op === ">=" && c < 0) || (op === ">" && c <= 0) || (op === "=" && c < 0)) return "below";
    if ((op === "<=" && c > 0) || (op === "<" && c >= 0) || (op === "=" && c > 0)) return "above";
  }
  return "in";
}

/** Whether a version satisfies a range like ">=2.12.0 <3.0.0". */
export function satisfiesOsVersionRange(version: string, range: string): boolean {
  return positionInRange(version, parseRange(range)) === "in";
}

const osVersionState = (range: string | null, contract: unknown): "ok" | "upcoming" | "discontinued" => {
  if (!range) return "ok";
  const osVersions = contractData(contract)?.osVersions as { oldest?: unknown; newest?: unknown } | undefined;
  const oldest = typeof osVersions?.oldest === "string" ? osVersions.oldest : undefined;
  const newest = typeof osVersions?.newest === "string" ? osVersions.newest : undefined;
  if (!oldest || !newest || !parseSemver(oldest) || !parseSemver(newest)) return "ok";
  const comparators = parseRange(range);
  if (comparators.length === 0) return "ok";
  // Every available version lies between oldest and newest: when the newest is still below the
  // range, none reaches it yet; when the oldest is already above it, none is old enough.
  if (positionInRange(newest, comparators) === "below") return "upcoming";
  if (positionInRange(oldest, comparators) === "above") return "discontinued";
  return "ok";
};

export function fleetTypeState(
  type: ApplicationType,
  deviceTypeContract: unknown,
  plan: { isFree: boolean },
): FleetTypeState {
  const os = osVersionState(type.needs__os_version_range, deviceTypeContract);
  if (os !== "ok") return os;
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
