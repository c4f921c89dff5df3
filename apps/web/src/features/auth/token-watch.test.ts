import { describe, expect, it } from "vitest";
import { tokenAction } from "./token-watch.ts";

describe("tokenAction", () => {
  const now = Date.parse("2026-01-01T12:00:00Z");
  const seconds = (ms: number) => Math.floor(ms / 1000);

  it("forces a logout for an expired token", () => {
    expect(tokenAction({ exp: seconds(now) - 1 }, now)).toBe("expired");
  });

  it("refreshes a token issued an hour ago or more", () => {
    expect(tokenAction({ iat: seconds(now - 3_600_000), exp: seconds(now) + 100 }, now)).toBe("refresh");
    expect(tokenAction({ iat: seconds(now - 3_000_000), exp: seconds(now) + 100 }, now)).toBe("none");
  });

  it("waits with the refresh while activities are in progress, but not with a logout", () => {
    const old = { iat: seconds(now - 3_600_000), exp: seconds(now) + 100 };
    expect(tokenAction(old, now, 2)).toBe("none");
    expect(tokenAction(old, now, 0)).toBe("refresh");
    expect(tokenAction({ exp: seconds(now) - 1 }, now, 2)).toBe("expired");
  });

  it("leaves a pending second factor and missing tokens alone", () => {
    expect(tokenAction({ iat: seconds(now - 7_200_000), twoFactorRequired: true }, now)).toBe("none");
    expect(tokenAction(undefined, now)).toBe("none");
  });
});
