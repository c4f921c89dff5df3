import { type ApplicationClass, fleetName } from "@flotilla/domain";
import { inBalenaWords } from "../../errors.ts";

/**
 * A fleet, app or block name's refusals (spec 2 §5 "Fleet name"), worded for the API as balena
 * words them, which balena-cli's `fleet create` and `fleet rename` match on ("unique", "name may
 * only contain"); the dashboard shows the spec's texts (domain errors.ts `balenaWords`).
 */
const LENGTH_RULE =
  "It is necessary that each application has an app name that has a Length (Type) that is greater than or equal to 4 and is less than or equal to 100.";

/** The name, or the refusal of it. */
export function checkedFleetName(value: unknown): string {
  const parsed = fleetName.safeParse(value);
  if (parsed.success) return parsed.data;
  const problem = parsed.error.issues[0]?.message ?? "A name is required";
  const text = typeof value === "string" ? value : "";
  const lengthOk = text.length >= 4 && text.length <= 100;
  const words = !lengthOk
    ? LENGTH_RULE
    : /^[a-zA-Z0-9_-]+$/.test(text)
      ? "App name may only contain [a-zA-Z0-9_-], beginning with a letter or a digit."
      : "App name may only contain [a-zA-Z0-9_-].";
  throw inBalenaWords("fleet_name_invalid", words, { problem });
}

/** Another fleet, app or block of the organization has this name (case-insensitively). */
export const nameTaken = (type: ApplicationClass) =>
  inBalenaWords("already_used", '"organization" and "app_name" must be unique.', { type });
