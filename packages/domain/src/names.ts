import { z } from "zod";

/** Fleet, app and block names (spec 2 §5 "Fleet name"); the texts are the spec's. */
export const FLEET_NAME_MIN = 4;
export const FLEET_NAME_MAX = 100;

export const fleetName = z
  .string({ error: "A name is required" })
  .min(1, "A name is required")
  .min(FLEET_NAME_MIN, "The name should be at least 4 characters long")
  .max(FLEET_NAME_MAX, "The name should not be more than 100 characters long")
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_-]*$/, "The name can only contain alphanumeric characters, hyphens or underscores");

export const APPLICATION_CLASSES = ["fleet", "app", "block"] as const;
export type ApplicationClass = (typeof APPLICATION_CLASSES)[number];

/** "This name is already used by another fleet. Note that the name is case-insensitive" */
export const nameTakenText = (applicationClass: ApplicationClass) =>
  `This name is already used by another ${applicationClass}. Note that the name is case-insensitive`;

/** An organization handle made from its name: lowercase letters, digits, `_` and `-`. */
export function handleFromName(name: string): string {
  const handle = name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "_")
    .replace(/^[_-]+|[_-]+$/g, "");
  return handle || "organization";
}

/** Default device type of a new fleet, and the fallback (spec 2 §9). */
export const DEFAULT_DEVICE_TYPE = "raspberrypi4-64";

/** Legacy fleet types, listed last (spec 2 §9); they cannot be renamed and need a repository URL to go public (spec 2 §5). */
export const LEGACY_APPLICATION_TYPES = ["legacy-v1", "legacy-v2"] as const;

/**
 * The first problem of a fleet, app or block name (spec 2 §5 "Fleet name"), or undefined when it
 * is fine. `taken` are the other names of the organization in the same class; the comparison is
 * case-insensitive. The server applies the same rules.
 */
export function fleetNameProblem(
  name: string | undefined,
  applicationClass: ApplicationClass = "fleet",
  taken: readonly string[] = [],
): string | undefined {
  const parsed = fleetName.safeParse(name ?? "");
  if (!parsed.success) return parsed.error.issues[0]?.message;
  const lower = parsed.data.toLowerCase();
  return taken.some((other) => other.toLowerCase() === lower) ? nameTakenText(applicationClass) : undefined;
}

/** Free plan (spec 2 §5, §9; spec-decisions 13): the first 10 devices are free. */
export const FREE_PLAN_DEVICE_ALLOWANCE = 10;
/** "Four or more free-plan devices" marks an organization to nudge towards upgrading (spec 2 §9). */
export const FREE_PLAN_NUDGE_DEVICE_COUNT = 4;

/**
 * Whether adding a device is blocked on the free plan, and the spec's warning: at the allowance
 * "free plan allowance reached"; above it "provisioned more devices than free allowance".
 */
export function freePlanDeviceBlock(totalDeviceCount: number, allowance = FREE_PLAN_DEVICE_ALLOWANCE) {
  if (totalDeviceCount > allowance) return "provisioned more devices than free allowance" as const;
  if (totalDeviceCount === allowance) return "free plan allowance reached" as const;
  return undefined;
}
