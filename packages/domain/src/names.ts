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
