import { describe, expect, it } from "vitest";
import { changedFields } from "./state-report.ts";

describe("changedFields", () => {
  it("sends everything first, then only what changed (apps compared by value)", () => {
    const first = { status: "Idle", cpu_usage: 10, apps: { a: { release_uuid: "r", releases: {} } } };
    expect(changedFields(null, first)).toEqual(first);
    expect(changedFields(first, { ...first, apps: { a: { release_uuid: "r", releases: {} } } })).toEqual({});
    expect(changedFields(first, { ...first, cpu_usage: 11 })).toEqual({ cpu_usage: 11 });
    expect(changedFields({ ...first, download_progress: 50 }, { ...first, download_progress: null })).toEqual({
      download_progress: null,
    });
  });
});
