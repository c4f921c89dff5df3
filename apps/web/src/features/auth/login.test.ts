import { afterEach, describe, expect, it, vi } from "vitest";
import { TOKEN_STORAGE_KEY } from "../../lib/api-client.ts";
import { logIn, loginSearch, pageAfterLogin, redirectQuery } from "./login.ts";
import { jwt, memoryStorage } from "./test-support.ts";
import type { TokenClaims } from "./token.ts";

afterEach(() => vi.unstubAllGlobals());

describe("loginSearch", () => {
  it("reads the query as the router's /login route does: strings only, JSON strings unquoted", () => {
    expect(
      loginSearch("?redirect=%2Ffleets%2F3%3Ftab%3Da&saml_error=saml_domain_not_verified&domain=example.com&x=1"),
    ).toEqual({ redirect: "/fleets/3?tab=a", saml_error: "saml_domain_not_verified", domain: "example.com" });
    expect(loginSearch('?social_error=social_login_failed&provider="12"')).toEqual({
      social_error: "social_login_failed",
      provider: "12",
    });
    // A number or an object is no string: dropped, as validateSearch does.
    expect(loginSearch("?provider=12&redirect=%7B%7D")).toEqual({});
  });

  it("writes a redirect back the same way", () => {
    expect(redirectQuery(undefined)).toBe("");
    expect(redirectQuery("")).toBe("");
    expect(redirectQuery("/fleets/3")).toBe("?redirect=%2Ffleets%2F3");
    expect(loginSearch(redirectQuery("12")).redirect).toBe("12");
  });
});

describe("logIn", () => {
  it("posts the credentials to /login_ without a token, keeps the token where the SDK does, and gives its claims", async () => {
    const local = memoryStorage();
    const session = memoryStorage();
    vi.stubGlobal("localStorage", local);
    vi.stubGlobal("sessionStorage", session);
    const token = jwt({ id: 7, twoFactorRequired: false, iat: Math.floor(Date.now() / 1000) });
    const fetchMock = vi.fn(async () => new Response(token, { headers: { "content-type": "text/plain" } }));
    vi.stubGlobal("fetch", fetchMock);

    const claims = await logIn("https://api.example", {
      username: "ann",
      password: "x".repeat(65),
      twoFactorCode: "123456",
    });

    expect(fetchMock).toHaveBeenCalledWith("https://api.example/login_", {
      method: "POST",
      headers: { accept: "application/json, text/plain", "content-type": "application/json" },
      body: JSON.stringify({ username: "ann", password: "x".repeat(65), twoFactorCode: "123456" }),
      credentials: "omit",
    });
    expect(local.getItem(TOKEN_STORAGE_KEY)).toBe(token);
    expect(claims).toMatchObject({ id: 7, twoFactorRequired: false });
    // A password over 64 characters raises the change-password banner (spec 1 §5).
    expect(session.getItem("flotilla.passwordTooLong")).toBe("1");
  });

  it("keeps the server's whole text of a lock and stores nothing", async () => {
    const local = memoryStorage();
    vi.stubGlobal("localStorage", local);
    vi.stubGlobal(
      "fetch",
      vi.fn(
        async () =>
          new Response("Too Many Requests. Try again later. Try again in 15 minutes.", {
            status: 429,
            headers: { "content-type": "text/plain" },
          }),
      ),
    );
    await expect(logIn("https://api.example", { username: "ann", password: "p" })).rejects.toMatchObject({
      statusCode: 429,
      body: "Too Many Requests. Try again later. Try again in 15 minutes.",
    });
    expect(local.getItem(TOKEN_STORAGE_KEY)).toBeNull();
  });
});

describe("pageAfterLogin", () => {
  const claims = (extra: Partial<TokenClaims> = {}): TokenClaims => ({ id: 7, permissions: [], ...extra });

  it("goes to the two-factor step, keeping the redirect, while the second factor is pending", () => {
    expect(pageAfterLogin(claims({ twoFactorRequired: true }), "/fleets/3")).toBe(
      "/login/two-factor?redirect=%2Ffleets%2F3",
    );
    expect(pageAfterLogin(claims({ twoFactorRequired: true }), undefined)).toBe("/login/two-factor");
  });

  it("otherwise goes to a safe redirect, the user's last page, or /", () => {
    vi.stubGlobal("sessionStorage", memoryStorage());
    const local = memoryStorage();
    vi.stubGlobal("localStorage", local);
    expect(pageAfterLogin(claims({ twoFactorRequired: false }), "/fleets/3")).toBe("/fleets/3");
    expect(pageAfterLogin(claims(), "https://evil.example/")).toBe("/");
    local.setItem("flotilla.lastPath.7", "/orgs/2/members");
    expect(pageAfterLogin(claims(), undefined)).toBe("/orgs/2/members");
  });
});
