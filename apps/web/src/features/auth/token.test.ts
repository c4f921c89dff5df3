import { describe, expect, it } from "vitest";
import { decodeToken, isAdmin, isTokenExpired, twoFactorState } from "./token.ts";

const jwt = (payload: unknown) =>
  `eyJhbGciOiJIUzI1NiJ9.${btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(payload))))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "")}.sig`;

describe("decodeToken", () => {
  it("reads id, authTime, actualUser, twoFactorRequired and permissions", () => {
    const claims = decodeToken(
      jwt({
        id: 7,
        username: "zoë",
        authTime: 1000,
        actualUser: 3,
        twoFactorRequired: true,
        permissions: ["admin.home", 4],
      }),
    );
    expect(claims).toMatchObject({
      id: 7,
      username: "zoë",
      authTime: 1000,
      actualUser: 3,
      twoFactorRequired: true,
      permissions: ["admin.home"],
    });
  });

  it("treats malformed tokens as none", () => {
    expect(decodeToken(undefined)).toBeUndefined();
    expect(decodeToken("")).toBeUndefined();
    expect(decodeToken("a.b")).toBeUndefined();
    expect(decodeToken("a.%%%.c")).toBeUndefined();
    expect(decodeToken(jwt("text"))).toBeUndefined();
    expect(decodeToken(jwt({ id: "7" }))).toBeUndefined();
  });
});

describe("twoFactorState", () => {
  it("is disabled without the flag, pending when true, passed when false", () => {
    expect(twoFactorState({})).toBe("disabled");
    expect(twoFactorState({ twoFactorRequired: true })).toBe("pending");
    expect(twoFactorState({ twoFactorRequired: false })).toBe("passed");
  });
});

describe("isAdmin / isTokenExpired", () => {
  it("knows platform administrators by admin.home", () => {
    expect(isAdmin({ permissions: ["admin.home"] })).toBe(true);
    expect(isAdmin({ permissions: ["support.home"] })).toBe(false);
    expect(isAdmin(undefined)).toBe(false);
  });

  it("compares exp (seconds) with now", () => {
    expect(isTokenExpired({ exp: 10 }, 10_000)).toBe(true);
    expect(isTokenExpired({ exp: 11 }, 10_000)).toBe(false);
    expect(isTokenExpired({}, 10_000)).toBe(false);
  });
});
