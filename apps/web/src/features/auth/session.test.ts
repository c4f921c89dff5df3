import { describe, expect, it, vi } from "vitest";
import type { Sdk } from "../../lib/sdk.ts";
import { loggedOutOnlyGuard, signedInGuard, twoFactorGuard, verifiedGuard } from "./guards.ts";
import { checkSessionState, menuUsername, type SessionState, safeRedirect } from "./session.ts";
import { jwt } from "./test-support.ts";

describe("checkSessionState", () => {
  const fakeSdk = (token: string | undefined, user: unknown) => {
    const auth = {
      getToken: vi.fn(() => (token ? Promise.resolve(token) : Promise.reject(new Error("not logged in")))),
    };
    const pine = {
      get: vi.fn(async () => {
        if (user instanceof Error) throw user;
        return user;
      }),
    };
    return { auth, pine } as unknown as Sdk & { auth: typeof auth; pine: typeof pine };
  };
  const user = { id: 5, username: "ann", must_be_verified: true, is_verified: false };

  it("is signed out without a request when no token or a malformed one is stored", async () => {
    for (const token of [undefined, "not-a-jwt", jwt({ id: "x" })]) {
      const sdk = fakeSdk(token, user);
      await expect(checkSessionState(sdk)).resolves.toEqual({ kind: "signed-out" });
      expect(sdk.pine.get).not.toHaveBeenCalled();
    }
  });

  it("is signed out for an expired token", async () => {
    const sdk = fakeSdk(jwt({ id: 5, exp: Math.floor(Date.now() / 1000) - 10 }), user);
    await expect(checkSessionState(sdk)).resolves.toEqual({ kind: "signed-out" });
  });

  it("is two-factor pending for a token with twoFactorRequired, without asking the API", async () => {
    const sdk = fakeSdk(jwt({ id: 5, twoFactorRequired: true }), user);
    expect((await checkSessionState(sdk)).kind).toBe("two-factor");
    expect(sdk.pine.get).not.toHaveBeenCalled();
  });

  it("reads the user for a valid token; a 401 or a missing user means signed out", async () => {
    const state = await checkSessionState(fakeSdk(jwt({ id: 5, twoFactorRequired: false }), user));
    expect(state).toMatchObject({ kind: "signed-in", user });
    const unauthorized = Object.assign(new Error("no"), { statusCode: 401 });
    await expect(checkSessionState(fakeSdk(jwt({ id: 5 }), unauthorized))).resolves.toEqual({
      kind: "signed-out",
      rejected: true,
    });
    await expect(checkSessionState(fakeSdk(jwt({ id: 5 }), undefined))).resolves.toEqual({ kind: "signed-out" });
    const failure = Object.assign(new Error("down"), { statusCode: 503 });
    await expect(checkSessionState(fakeSdk(jwt({ id: 5 }), failure))).rejects.toThrow("down");
  });
});

describe("guards", () => {
  const claims = { id: 5, permissions: [] };
  const signedIn = (must_be_verified: boolean, is_verified: boolean) =>
    ({ kind: "signed-in", claims, user: { must_be_verified, is_verified } }) as unknown as SessionState;

  it("sends signed-out users to /login with the page as redirect", () => {
    expect(signedInGuard({ kind: "signed-out" }, "/orgs?x=1")).toEqual({
      to: "/login",
      search: { redirect: "/orgs?x=1" },
    });
    expect(signedInGuard({ kind: "signed-out" }, "/")).toEqual({ to: "/login", search: {} });
  });

  it("sends a pending second factor to /login/two-factor", () => {
    expect(signedInGuard({ kind: "two-factor", claims }, "/fleets")).toEqual({
      to: "/login/two-factor",
      search: { redirect: "/fleets" },
    });
    expect(twoFactorGuard({ kind: "two-factor", claims })).toBeUndefined();
    expect(twoFactorGuard({ kind: "signed-out" })?.to).toBe("/login");
    expect(twoFactorGuard(signedIn(false, false))?.to).toBe("/");
  });

  it("sends unverified users to the pending page only when verification is required", () => {
    expect(verifiedGuard(signedIn(true, false))).toEqual({ to: "/user/verify-email/pending" });
    expect(verifiedGuard(signedIn(false, false))).toBeUndefined();
    expect(verifiedGuard(signedIn(true, true))).toBeUndefined();
    expect(signedInGuard(signedIn(true, false), "/fleets")).toBeUndefined();
  });

  it("sends signed-in users away from login and signup", () => {
    expect(loggedOutOnlyGuard(signedIn(false, false))).toEqual({ to: "/" });
    expect(loggedOutOnlyGuard({ kind: "signed-out" })).toBeUndefined();
    expect(loggedOutOnlyGuard({ kind: "two-factor", claims })).toBeUndefined();
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
    expect(safeRedirect("/login/two-factor")).toBeUndefined();
  });

  it("returns to the command-line login that sent a signed-out user to log in", () => {
    expect(safeRedirect("/login/cli/http%3A%2F%2F127.0.0.1%3A5000%2Fcb")).toBe(
      "/login/cli/http%3A%2F%2F127.0.0.1%3A5000%2Fcb",
    );
  });

  it("returns to an OAuth application's authorization page, its state kept", () => {
    expect(safeRedirect("/login/oauth/3f9c?state=xyz")).toBe("/login/oauth/3f9c?state=xyz");
    expect(safeRedirect("/login/oauthx")).toBeUndefined();
  });
});

describe("menuUsername", () => {
  it("cuts the username after 20 characters", () => {
    expect(menuUsername("demo")).toBe("demo");
    expect(menuUsername("a".repeat(20))).toBe("a".repeat(20));
    expect(menuUsername("abcdefghijklmnopqrstuvwxyz")).toBe("abcdefghijklmnopqrst…");
  });
});
