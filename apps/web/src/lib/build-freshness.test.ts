import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createBuildFreshness, fetchServedBuildId, isOutdated } from "./build-freshness.ts";

describe("isOutdated", () => {
  it("is true only for a different, readable build id", () => {
    expect(isOutdated("a1", "b2")).toBe(true);
    expect(isOutdated("a1", "a1")).toBe(false);
    expect(isOutdated("a1", undefined)).toBe(false);
    expect(isOutdated("a1", "")).toBe(false);
    expect(isOutdated("a1", 42)).toBe(false);
  });
});

describe("createBuildFreshness", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("re-fetches the build file every 600,000 ms and flags a new build", async () => {
    const fetchBuildId = vi
      .fn<() => Promise<string | undefined>>()
      .mockResolvedValueOnce("same")
      .mockResolvedValue("newer");
    const freshness = createBuildFreshness({ currentBuildId: "same", fetchBuildId });
    const listener = vi.fn();
    freshness.subscribe(listener);
    freshness.start();

    await vi.advanceTimersByTimeAsync(599_999);
    expect(fetchBuildId).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(fetchBuildId).toHaveBeenCalledTimes(1);
    expect(freshness.isOutdated()).toBe(false);

    await vi.advanceTimersByTimeAsync(600_000);
    expect(fetchBuildId).toHaveBeenCalledTimes(2);
    expect(freshness.isOutdated()).toBe(true);
    expect(listener).toHaveBeenCalledTimes(1);
    freshness.stop();
  });

  it("does not poll a dev build", async () => {
    const fetchBuildId = vi.fn(async () => "x");
    const freshness = createBuildFreshness({ currentBuildId: "dev", fetchBuildId });
    freshness.start();
    await vi.advanceTimersByTimeAsync(1_200_000);
    expect(fetchBuildId).not.toHaveBeenCalled();
  });
});

describe("fetchServedBuildId", () => {
  it("reads buildId without caches and survives failures", async () => {
    const ok = vi.fn(async (_input: RequestInfo | URL, _init?: RequestInit) => Response.json({ buildId: "abc" }));
    await expect(fetchServedBuildId(ok)).resolves.toBe("abc");
    expect(ok.mock.calls[0]?.[0]).toBe("/build-info.json");
    expect(ok.mock.calls[0]?.[1]?.cache).toBe("no-store");
    await expect(fetchServedBuildId(async () => new Response("nope", { status: 404 }))).resolves.toBeUndefined();
    await expect(fetchServedBuildId(() => Promise.reject(new TypeError("offline")))).resolves.toBeUndefined();
  });
});
