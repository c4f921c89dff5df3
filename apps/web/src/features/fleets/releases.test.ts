import { describe, expect, it } from "vitest";
import { buildInProgress, type ReleaseRow } from "./releases.ts";

const release = (id: number, status: string): ReleaseRow => ({
  id,
  status,
  commit: `c${id}`,
  raw_version: "1.0.0",
  created_at: new Date(2026, 0, id).toISOString(),
  is_invalidated: false,
});

describe("build in progress", () => {
  it("is the latest release while it is running", () => {
    expect(buildInProgress([release(2, "running"), release(1, "success")])?.id).toBe(2);
    expect(buildInProgress([release(2, "success"), release(1, "running")])).toBeUndefined();
    expect(buildInProgress([])).toBeUndefined();
  });
});
