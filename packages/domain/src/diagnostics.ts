/**
 * Health checks and diagnostics (spec 2 §3 "Check result", "Check report", §4 "Health checks and
 * diagnostics", §7 device actions service, §9). The agent runs them, the server relays them
 * (`GET|POST /v1/{uuid}/{checks|diagnose}`), the dashboard shows them.
 */

export const DIAGNOSTICS_ACTIONS = ["checks", "diagnose"] as const;
export type DiagnosticsAction = (typeof DIAGNOSTICS_ACTIONS)[number];

export const DIAGNOSTICS_STATES = ["configuring", "done", "error", "idle", "in_progress"] as const;
export type DiagnosticsState = (typeof DIAGNOSTICS_STATES)[number];

/** Whether a report's status is one of the five states of spec 2 §4. */
export const isDiagnosticsState = (value: unknown): value is DiagnosticsState =>
  typeof value === "string" && (DIAGNOSTICS_STATES as readonly string[]).includes(value);

/** The states a run is still under way in: the dashboard shows its loading overlay (spec 2 §4). */
export const diagnosticsRunning = (state: DiagnosticsState | undefined) =>
  state === "configuring" || state === "in_progress";

export type CheckResult = { name: string; success: boolean; status: string };

export type CheckReport = {
  status: DiagnosticsState;
  checks: CheckResult[];
  diagnose_version: string;
  /** When the last run ended (ISO 8601), null before the first. */
  lastRun: string | null;
  stdout: string;
  error: string | null;
};

/** Health checks poll every 15 s, diagnostics every 5 s (spec 2 §9). */
export const HEALTH_CHECKS_POLL_MS = 15_000;
export const DIAGNOSTICS_POLL_MS = 5000;
/** Checks warn on devices whose OS is older than this (spec 2 §5, §9). */
export const CHECKS_MIN_OS_VERSION = "2.11.0";

export const emptyReport = (diagnose_version: string): CheckReport => ({
  status: "idle",
  checks: [],
  diagnose_version,
  lastRun: null,
  stdout: "",
  error: null,
});

/** Devices on an OS older than 2.11.0 get a warning before checks (spec 2 §5, §9); "balenaOS 2.9.7" reads as 2.9.7. */
export function checksNeedNewerOs(osVersion: string | null | undefined): boolean {
  const match = /(\d+)\.(\d+)\.(\d+)/.exec(osVersion ?? "");
  if (!match) return false;
  const [major, minor, patch] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const [minMajor, minMinor, minPatch] = CHECKS_MIN_OS_VERSION.split(".").map(Number) as [number, number, number];
  if (major !== minMajor) return major < minMajor;
  if (minor !== minMinor) return minor < minMinor;
  return patch < minPatch;
}

/** The supervisor target state is asked as v2 below supervisor 13.0.0, else v3 (spec 2 §7, §9). */
export function supervisorTargetStateVersion(supervisorVersion: string | null | undefined): 2 | 3 {
  const major = Number(/(\d+)\./.exec(supervisorVersion ?? "")?.[1] ?? Number.NaN);
  return Number.isFinite(major) && major < 13 ? 2 : 3;
}
