import { describe, expect, it, vi } from "vitest";
import { CLIENT_ID, createSdk, TOKEN_STORAGE_KEY, withClientId } from "./sdk.ts";

describe("client identification", () => {
  it("identifies the dashboard as app version 31.1.1", () => {
    expect(CLIENT_ID).toBe("flotilla-dashboard/31.1.1");
  });

  it("adds the dashboard to the SDK's X-Balena-Client header once", () => {
    expect(withClientId("balena-sdk/23.2.15")).toBe("balena-sdk/23.2.15 flotilla-dashboard/31.1.1");
    expect(withClientId("balena-sdk/23.2.15 flotilla-dashboard/31.1.1")).toBe(
      "balena-sdk/23.2.15 flotilla-dashboard/31.1.1",
    );
    expect(withClientId(undefined)).toBe("flotilla-dashboard/31.1.1");
  });
});

describe("the lazily loaded SDK", () => {
  const config = {
    apiUrl: "http://api.test",
    publicUrl: "http://dashboard.test",
    appVersion: "31.1.1",
    deviceUrlsBaseDomain: null,
    deviceActionsHost: null,
    statusPageUrl: null,
    supportForumUrl: "https://forums.balena.io/",
    featureRequestsUrl: "https://forums.balena.io/c/product-support/feature-requests/",
    docsSearchUrl: null,
    mapTilesUrl: null,
    salesUrl: "mailto:",
    stripePublishableKey: null,
    sshGateway: null,
  };
  const connectivity = { isOffline: () => false, whenOnline: async () => {}, reportNetworkError: () => {} };

  it("reads and drops the stored token without loading balena-sdk, and is not a thenable", async () => {
    const store = new Map<string, string>([[TOKEN_STORAGE_KEY, "a.b.c"]]);
    vi.stubGlobal("localStorage", {
      getItem: (key: string) => store.get(key) ?? null,
      removeItem: (key: string) => store.delete(key),
    });
    try {
      const sdk = createSdk(config, connectivity);
      expect(await sdk.auth.getToken()).toBe("a.b.c");
      await sdk.auth.logout();
      await expect(sdk.auth.getToken()).rejects.toMatchObject({ code: "BalenaNotLoggedIn" });
      // Awaiting the SDK (returning it from an async function) gives the SDK, not a call.
      expect(await Promise.resolve(sdk)).toBe(sdk);
      expect(sdk.models.device).toBe(sdk.models.device);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
