import { describe, expect, it } from "vitest";
import { AccountApiError } from "./api.ts";
import { isLoginLocked, loginErrorText } from "./login-lock.ts";

describe("login lock texts", () => {
  it("shows the whole text of a lock, with how long it lasts", () => {
    const lock = new AccountApiError(
      429,
      "Too Many Requests. Try again later. Try again in 14 minutes.",
      "too_many_requests",
      undefined,
      "840",
    );
    expect(isLoginLocked(lock)).toBe(true);
    expect(loginErrorText(lock)).toBe("Too Many Requests. Try again later. Try again in 14 minutes.");
  });

  it("falls back to the catalogue's texts", () => {
    expect(loginErrorText(new AccountApiError(429, "", "too_many_requests"))).toBe(
      "Too Many Requests. Try again later.",
    );
    const wrong = new AccountApiError(401, "Invalid login credentials.", "invalid_login_credentials");
    expect(isLoginLocked(wrong)).toBe(false);
    expect(loginErrorText(wrong)).toBe("Invalid login credentials.");
  });
});
