import { describe, expect, it } from "vitest";
import {
  checksNeedNewerOs,
  DIAGNOSTICS_STATES,
  diagnosticsRunning,
  isDiagnosticsState,
  supervisorTargetStateVersion,
} from "./diagnostics.ts";

describe("diagnostics states (spec 2 §4)", () => {
  it("are configuring, done, error, idle and in_progress; configuring and in_progress are running", () => {
    expect([...DIAGNOSTICS_STATES].sort()).toEqual(["configuring", "done", "error", "idle", "in_progress"]);
    expect(["configuring", "done", "error", "idle", "in_progress", "running", 3].map(isDiagnosticsState)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
    expect(DIAGNOSTICS_STATES.filter((state) => diagnosticsRunning(state))).toEqual(["configuring", "in_progress"]);
  });
});

describe("diagnostics rules", () => {
  it("warns before checks on OS versions below 2.11.0", () => {
    expect(checksNeedNewerOs("balenaOS 2.9.7")).toBe(true);
    expect(checksNeedNewerOs("balenaOS 2.10.99")).toBe(true);
    expect(checksNeedNewerOs("balenaOS 2.11.0")).toBe(false);
    expect(checksNeedNewerOs("balenaOS 6.1.0")).toBe(false);
    expect(checksNeedNewerOs("1.30.1")).toBe(true);
    expect(checksNeedNewerOs(null)).toBe(false);
  });

  it("asks the supervisor target state as v2 below supervisor 13", () => {
    expect(supervisorTargetStateVersion("12.11.38")).toBe(2);
    expect(supervisorTargetStateVersion("13.0.0")).toBe(3);
    expect(supervisorTargetStateVersion("17.1.0")).toBe(3);
    expect(supervisorTargetStateVersion(null)).toBe(3);
  });
});
