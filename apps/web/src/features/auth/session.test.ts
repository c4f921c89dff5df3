import { describe, expect, it, vi } from "vitest";
import type { Sdk } from "../../lib/sdk.ts";
import { checkSession, menuUsername, safeRedirect } from "./session.ts";

describe("checkSession", () => {
  const fakeSdk = (token: string | undefined, valid: boolean) => {
    const auth = {
      getToken: vi.fn(() => (token ? Promise.resolve(token) : Promise.reject(new Error("not logged in")))),
      isLoggedIn: vi.fn(async () => valid),
    };
    return { auth } as unknown as Pick<Sdk, "auth"> & { auth: typeof auth };
  };

  it("does not ask the API when no token is stored", async () => {
    const sdk = fakeSdk(undefined, true);
    await expect(checkSession(sdk)).resolves.toBe(false);
    expect(sdk.auth.isLoggedIn).not.toHaveBeenCalled();
  });

  it("asks the API whether a stored token is still valid", async () => {
    await expect(checkSession(fakeSdk("jwt", true))).resolves.toBe(true);
    await expect(checkSession(fakeSdk("jwt", false))).resolves.toBe(false);
  });
});

describe("safeRedirect", () => {
  it("keeps paths of this dashboard", () => {
    expect(safeRedirect("/fleets")).toBe("/fleets");
    expect(safeRedirect("/orgs?tab=members#top")).toBe("/orgs?tab=members#top");
  });

  it("refuses other origins and odd values", () => {
    expect(safeRedirect("https://evil.example/")).toBeUndefined();
    expect(safeRedirect("//evil.example/x")).toBeUndefined();
    expect(safeRedirect("/\\evil.example")).toBeUndefined();
    expect(safeRedirect("/fleets\n")).toBeUndefined();
    expect(safeRedirect(undefined)).toBeUndefined();
    expect(safeRedirect(42)).toBeUndefined();
  });

  it("never sends a freshly signed-in user back to the login page", () => {
    expect(safeRedirect("/login")).toBeUndefined();
    expect(safeRedirect("/login?redirect=/fleets")).toBeUndefined();
  });
});

describe("menuUsername", () => {
  it("cuts the username after 20 characters", () => {
    expect(menuUsername("demo")).toBe("demo");
    expect(menuUsername("a".repeat(20))).toBe("a".repeat(20));
    expect(menuUsername("abcdefghijklmnopqrstuvwxyz")).toBe("abcdefghijklmnopqrst…");
  });
});
