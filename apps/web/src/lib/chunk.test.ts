import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChunkLoadTimeoutError, withChunkTimeout } from "./chunk.ts";
import { errorText } from "./errors.ts";

describe("withChunkTimeout", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("gives up on a chunk after 120 s", async () => {
    const never = new Promise<never>(() => {});
    const loading = withChunkTimeout(never);
    const outcome = loading.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(119_999);
    await vi.advanceTimersByTimeAsync(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(ChunkLoadTimeoutError);
    expect(errorText(error)).toBe("Loading part of the dashboard took longer than 2 minutes.");
  });

  it("passes a chunk through that arrives in time", async () => {
    const module = { name: "fleets-page" };
    const loading = withChunkTimeout(new Promise((resolve) => setTimeout(() => resolve(module), 60_000)));
    await vi.advanceTimersByTimeAsync(60_000);
    await expect(loading).resolves.toBe(module);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("passes load failures through", async () => {
    await expect(
      withChunkTimeout(Promise.reject(new TypeError("Failed to fetch dynamically imported module"))),
    ).rejects.toThrow("Failed to fetch dynamically imported module");
  });
});
