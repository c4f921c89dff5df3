import { describe, expect, it } from "vitest";
import { failureInjection } from "./cli.ts";

describe("simulate --fail-release", () => {
  it("reads the commit, share and mode, with defaults", () => {
    expect(failureInjection({})).toBeNull();
    expect(failureInjection({ "fail-release": "ABCDEF1" })).toEqual({ commit: "abcdef1", share: 1, mode: "download" });
    expect(failureInjection({ "fail-release": "abcdef1234", "fail-share": "0.5", "fail-mode": "crash-loop" })).toEqual({
      commit: "abcdef1234",
      share: 0.5,
      mode: "crash-loop",
    });
  });

  it("refuses what it cannot use, naming the option", () => {
    expect(() => failureInjection({ "fail-share": "0.5" })).toThrow(/need --fail-release/);
    expect(() => failureInjection({ "fail-release": "v1.2" })).toThrow(/--fail-release must be/);
    expect(() => failureInjection({ "fail-release": "abcdef1", "fail-share": "2" })).toThrow(/--fail-share/);
    expect(() => failureInjection({ "fail-release": "abcdef1", "fail-mode": "boom" })).toThrow(/--fail-mode/);
  });
});
