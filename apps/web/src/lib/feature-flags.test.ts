import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_FEATURE_FLAGS, fetchFeatureFlags, parseFeatureFlags } from "./feature-flags.ts";

const API = "http://api.example.com";

describe("parseFeatureFlags", () => {
  it("turns on only the known flags the answer sets to true", () => {
    expect(parseFeatureFlags({ flags: { displayApps: true, somethingElse: true } })).toEqual({ displayApps: true });
    expect(parseFeatureFlags({ flags: { displayApps: "yes" } })).toEqual({ displayApps: false });
    expect(parseFeatureFlags({ flags: {} })).toEqual({ displayApps: false });
  });

  it("rejects other shapes", () => {
    for (const bad of [null, 3, {}, { flags: null }, { flags: ["displayApps"] }]) {
      expect(parseFeatureFlags(bad)).toBeUndefined();
    }
  });
});

describe("fetchFeatureFlags", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("reads the flags from the API without a token", async () => {
    const fetchImpl = vi.fn(async (_input: RequestInfo | URL, _init?: RequestInit) =>
      Response.json({ flags: { displayApps: true } }),
    );
    await expect(fetchFeatureFlags(API, { fetchImpl })).resolves.toEqual({
      flags: { displayApps: true },
      source: "server",
    });
    expect(fetchImpl.mock.calls[0]?.[0]).toBe(`${API}/config/v1/feature-flags`);
    const init = fetchImpl.mock.calls[0]?.[1];
    expect(init?.credentials).toBe("omit");
    expect(init?.headers).toBeUndefined();
  });

  it("gives up after 4000 ms: the request is aborted and the defaults are used", async () => {
    let signal: AbortSignal | undefined;
    const fetchImpl = vi.fn((_input: RequestInfo | URL, init?: RequestInit) => {
      signal = init?.signal ?? undefined;
      return new Promise<Response>(() => {}); // never answers
    });
    let settled: unknown;
    void fetchFeatureFlags(API, { fetchImpl }).then((result) => {
      settled = result;
    });
    await vi.advanceTimersByTimeAsync(3999);
    expect(settled).toBeUndefined();
    expect(signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toEqual({ flags: DEFAULT_FEATURE_FLAGS, source: "timeout" });
    expect(signal?.aborted).toBe(true);
  });

  it("uses the answer when it comes just before the timeout", async () => {
    const fetchImpl = () =>
      new Promise<Response>((resolve) =>
        setTimeout(() => resolve(Response.json({ flags: { displayApps: true } })), 3900),
      );
    const result = fetchFeatureFlags(API, { fetchImpl });
    await vi.advanceTimersByTimeAsync(3900);
    await expect(result).resolves.toEqual({ flags: { displayApps: true }, source: "server" });
  });

  it("uses the defaults when the request fails or the answer is unreadable", async () => {
    const answers: Array<typeof fetch> = [
      async () => {
        throw new TypeError("Failed to fetch");
      },
      async () => new Response("oops", { status: 500 }),
      async () => new Response("{not json", { headers: { "content-type": "application/json" } }),
      async () => Response.json({ displayApps: true }),
    ];
    for (const fetchImpl of answers) {
      await expect(fetchFeatureFlags(API, { fetchImpl })).resolves.toEqual({
        flags: DEFAULT_FEATURE_FLAGS,
        source: "error",
      });
    }
  });
});
