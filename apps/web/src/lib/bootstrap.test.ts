import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createBootstrap, setLoadFailedMarker } from "./bootstrap.ts";

describe("createBootstrap", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("reports a failure and retries by itself after 10 seconds", async () => {
    const run = vi.fn().mockRejectedValueOnce(new Error("config down")).mockResolvedValueOnce(undefined);
    const onFailure = vi.fn();
    const onSuccess = vi.fn();
    await createBootstrap({ run, onFailure, onSuccess }).start();
    expect(onFailure).toHaveBeenCalledWith(expect.objectContaining({ message: "config down" }), 10_000);
    expect(run).toHaveBeenCalledTimes(1);

    await vi.advanceTimersByTimeAsync(9999);
    expect(run).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(run).toHaveBeenCalledTimes(2);
    expect(onSuccess).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(run).toHaveBeenCalledTimes(2);
  });

  it("keeps retrying every 10 s until it works", async () => {
    const run = vi.fn().mockRejectedValue(new Error("still down"));
    const onFailure = vi.fn();
    await createBootstrap({ run, onFailure }).start();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(run).toHaveBeenCalledTimes(4);
    expect(onFailure).toHaveBeenCalledTimes(4);
  });

  it("retries at once on request, without a second scheduled retry", async () => {
    const run = vi.fn().mockRejectedValueOnce(new Error("down")).mockResolvedValue(undefined);
    const bootstrap = createBootstrap({ run, onFailure: () => {} });
    await bootstrap.start();
    await bootstrap.retryNow();
    expect(run).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(run).toHaveBeenCalledTimes(2);
  });
});

describe("setLoadFailedMarker", () => {
  it("adds and removes data-load-failed", () => {
    const root = { dataset: {} as Record<string, string> } as unknown as HTMLElement;
    setLoadFailedMarker(true, root);
    expect(root.dataset.loadFailed).toBe("true");
    setLoadFailedMarker(false, root);
    expect(root.dataset.loadFailed).toBeUndefined();
  });
});
