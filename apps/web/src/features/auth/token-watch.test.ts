import { afterEach, describe, expect, it, vi } from "vitest";
import type { Sdk } from "../../lib/sdk.ts";
import { resetServerClock } from "../../lib/server-clock.ts";
import { startTokenWatch, tokenAction } from "./token-watch.ts";

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

describe("startTokenWatch with a browser clock an hour ahead of the server", () => {
  const base64Url = (value: unknown) =>
    btoa(JSON.stringify(value)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
  const jwt = (claims: Record<string, unknown>) => `${base64Url({ alg: "HS256" })}.${base64Url(claims)}.sig`;

  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    resetServerClock();
  });

  it("refreshes at most once: the fresh token's issue time tells the server's clock", async () => {
    const serverTime = Date.parse("2026-01-01T12:00:00Z");
    vi.useFakeTimers({ now: serverTime + 3_600_000 });
    const issued = (ms: number) => jwt({ id: 1, iat: Math.floor(ms / 1000), exp: Math.floor(ms / 1000) + 36 * 3600 });
    let token = issued(serverTime);
    let refreshes = 0;
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => {
        refreshes += 1;
        return new Response(issued(serverTime + refreshes * 1000), { headers: { "content-type": "text/plain" } });
      }),
    );
    const sdk = {
      auth: {
        getToken: async () => token,
        loginWithToken: async (fresh: string) => {
          token = fresh;
        },
      },
    } as unknown as Sdk;
    const stop = startTokenWatch({ sdk, apiUrl: "http://api.test", onExpired: () => {} });
    await vi.advanceTimersByTimeAsync(10_000);
    stop();
    expect(refreshes).toBe(1);
  });

  it("waits a minute before trying a failed refresh again", async () => {
    const serverTime = Date.parse("2026-01-01T12:00:00Z");
    vi.useFakeTimers({ now: serverTime });
    const token = jwt({
      id: 1,
      iat: Math.floor((serverTime - 3_700_000) / 1000),
      exp: Math.floor(serverTime / 1000) + 600,
    });
    let attempts = 0;
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => {
        attempts += 1;
        return new Response("down", { status: 503 });
      }),
    );
    const sdk = { auth: { getToken: async () => token, loginWithToken: async () => {} } } as unknown as Sdk;
    const stop = startTokenWatch({ sdk, apiUrl: "http://api.test", onExpired: () => {} });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(40_000);
    stop();
    expect(attempts).toBe(2);
  });
});
