import { describe, expect, it } from "vitest";
import { isThrottled, noteThrottled } from "./throttle-notice.ts";

describe("throttle notice", () => {
  it("lasts for Retry-After, and at least 5 s", () => {
    const now = 1_000_000;
    noteThrottled(undefined, now);
    expect(isThrottled(now + 4999)).toBe(true);
    expect(isThrottled(now + 5000)).toBe(false);
    noteThrottled(30_000, now);
    expect(isThrottled(now + 29_999)).toBe(true);
    expect(isThrottled(now + 30_000)).toBe(false);
  });
});
