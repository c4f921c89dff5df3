import { describe, expect, it } from "vitest";
import { buildInProgress, type ReleaseRow } from "./releases.ts";

const release = (id: number, status: string): ReleaseRow => ({
  id,
  status,
  commit: `c${id}`,
  raw_version: "1.0.0",
  is_final: true,
  created_at: new Date(2026, 0, id).toISOString(),
  is_invalidated: false,
});

describe("build in progress", () => {
  it("is the latest release while it is running", () => {
    const now = new Date(2026, 0, 2, 0, 1).getTime();
    expect(buildInProgress([release(2, "running"), release(1, "success")], now)?.id).toBe(2);
    expect(buildInProgress([release(2, "success"), release(1, "running")])).toBeUndefined();
    expect(buildInProgress([])).toBeUndefined();
  });

  it("is not a build whose last update is more than 120 s old (a timeout)", () => {
    const stale = { ...release(2, "running"), update_timestamp: new Date(2026, 0, 2, 0, 0).toISOString() };
    expect(buildInProgress([stale], new Date(2026, 0, 2, 0, 1, 59).getTime())?.id).toBe(2);
    expect(buildInProgress([stale], new Date(2026, 0, 2, 0, 2, 1).getTime())).toBeUndefined();
  });
});
