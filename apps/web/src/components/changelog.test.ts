import { describe, expect, it } from "vitest";
import { parseChangelog, shouldShowChangelog } from "./changelog.ts";

describe("shouldShowChangelog", () => {
  it("opens when the stored major version is below the latest", () => {
    expect(shouldShowChangelog("30.9.0", "31.1.1")).toBe(true);
    expect(shouldShowChangelog("31.0.0", "31.1.1")).toBe(false);
    expect(shouldShowChangelog("32.0.0", "31.1.1")).toBe(false);
    expect(shouldShowChangelog("", "31.1.1")).toBe(false);
  });

  it("keeps only well-formed entries", () => {
    expect(parseChangelog([{ version: "1", date: "", changes: ["a"] }, { version: 2 }, null])).toHaveLength(1);
    expect(parseChangelog("x")).toEqual([]);
  });
});
