import { afterEach, describe, expect, it, vi } from "vitest";
import type { Sdk } from "../../lib/sdk.ts";
import { AccountApiError, accountRequest, isAuthExpired } from "./api.ts";

const sdk = { auth: { getToken: async () => "tok" } } as unknown as Sdk;

afterEach(() => vi.unstubAllGlobals());

describe("accountRequest", () => {
  it("sends the token and JSON, and returns text answers (tokens)", async () => {
    const fetchMock = vi.fn(async () => new Response("new-token", { headers: { "content-type": "text/plain" } }));
    vi.stubGlobal("fetch", fetchMock);
    await expect(
      accountRequest(sdk, "https://api.example", {
        method: "POST",
        path: "/user/v1/refresh-token",
        body: { password: "p" },
      }),
    ).resolves.toBe("new-token");
    expect(fetchMock).toHaveBeenCalledWith(
      "https://api.example/user/v1/refresh-token",
      expect.objectContaining({
        method: "POST",
        body: '{"password":"p"}',
        headers: expect.objectContaining({ authorization: "Bearer tok" }),
      }),
    );
  });

  it("keeps code, errorCode, message and Retry-After of error answers", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(
        async () =>
          new Response(JSON.stringify({ code: "two_factor_code_required", message: "code required", errorCode: 1 }), {
            status: 400,
            headers: { "content-type": "application/json", "retry-after": "30" },
          }),
      ),
    );
    const error = await accountRequest(sdk, "https://api.example", { method: "POST", path: "/x", auth: false }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AccountApiError);
    expect(error).toMatchObject({
      statusCode: 400,
      apiCode: "two_factor_code_required",
      errorCode: 1,
      body: "code required",
      retryAfter: "30",
    });
  });
});

describe("isAuthExpired", () => {
  it("recognises the auth-expired answer", () => {
    expect(isAuthExpired(new AccountApiError(403, "…", "auth_expired"))).toBe(true);
    expect(isAuthExpired(new AccountApiError(403, "…", "forbidden"))).toBe(false);
    expect(isAuthExpired({ statusCode: 403, body: "auth_expired" })).toBe(true);
    expect(isAuthExpired(new Error("x"))).toBe(false);
  });
});
