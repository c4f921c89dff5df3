import { describe, expect, it } from "vitest";
import { appendCapped, isFinalCommandState, summarizeCommandStates } from "./command-runs.ts";

describe("bulk command states", () => {
  it("counts final states and leaves the open ones pending", () => {
    expect(
      summarizeCommandStates(["succeeded", "succeeded", "failed", "offline", "running", "waiting_online"]),
    ).toEqual({ total: 6, succeeded: 2, failed: 1, timed_out: 0, offline: 1, refused: 0, cancelled: 0, pending: 2 });
    expect(isFinalCommandState("timed_out")).toBe(true);
    expect(isFinalCommandState("queued")).toBe(false);
  });

  it("keeps the last characters of output and says when some were dropped", () => {
    expect(appendCapped("abc", "de", 10)).toEqual({ text: "abcde", dropped: false });
    expect(appendCapped("abcdef", "ghij", 5)).toEqual({ text: "fghij", dropped: true });
  });
});
