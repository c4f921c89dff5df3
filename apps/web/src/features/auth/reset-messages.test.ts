import { describe, expect, it } from "vitest";
import { AccountApiError } from "./api.ts";
import { formatWait, rateLimitText, resetErrorText } from "./reset-messages.ts";

describe("password reset messages", () => {
  it("adds when it is available again, or 'try again shortly'", () => {
    expect(rateLimitText(new AccountApiError(429, "Too many reset requests", undefined, undefined, "90"))).toBe(
      "Too many reset requests: available again in 2 min.",
    );
    expect(rateLimitText(new AccountApiError(429, "Too many reset requests."))).toBe(
      "Too many reset requests: try again shortly.",
    );
    expect(rateLimitText(new AccountApiError(429, ""))).toBe("Too many requests.");
  });

  it("formats waits", () => {
    expect(formatWait(12_000)).toBe("12 s");
    expect(formatWait(3_540_000)).toBe("59 min");
    expect(formatWait(7_200_001)).toBe("3 h");
  });

  it("maps the 2FA error codes 1-4", () => {
    expect(resetErrorText(1)).toBe("Two-factor code required.");
    expect(resetErrorText(2)).toBe("Two-factor code invalid.");
    expect(resetErrorText(3)).toBe("Reset code expired.");
    expect(resetErrorText(4)).toBe("Reset code invalid.");
    expect(resetErrorText(9)).toBeUndefined();
  });
});
