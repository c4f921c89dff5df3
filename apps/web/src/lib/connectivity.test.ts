import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createApiPing, createConnectivityMonitor, isOfflineAfter, nextPingDelay } from "./connectivity.ts";

describe("ping schedule", () => {
  it("waits 200 ms times the failure count after a failed ping", () => {
    expect(nextPingDelay(1)).toBe(200);
    expect(nextPingDelay(2)).toBe(400);
    expect(nextPingDelay(3)).toBe(600);
    expect(nextPingDelay(9)).toBe(1800);
    expect(nextPingDelay(10)).toBe(2000);
  });

  it("caps the multiplier at 10", () => {
    expect(nextPingDelay(11)).toBe(2000);
    expect(nextPingDelay(1000)).toBe(2000);
  });

  it("is flagged offline at the 3rd failure, not before", () => {
    expect(isOfflineAfter(1)).toBe(false);
    expect(isOfflineAfter(2)).toBe(false);
    expect(isOfflineAfter(3)).toBe(true);
  });
});

describe("createConnectivityMonitor", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** A ping whose answers are scripted; records the fake time of every call. */
  function scriptedPing(answers: boolean[]) {
    const calls: number[] = [];
    const ping = vi.fn(async () => {
      calls.push(Date.now());
      return answers.shift() ?? true;
    });
    return { ping, calls };
  }

  it("sends the first ping 10 s after start", async () => {
    const { ping } = scriptedPing([true]);
    const monitor = createConnectivityMonitor({ ping });
    monitor.start();
    await vi.advanceTimersByTimeAsync(9999);
    expect(ping).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(ping).toHaveBeenCalledTimes(1);
    monitor.stop();
  });

  it("backs off 200 ms × failures, flags offline at the 3rd failure and clears it on success", async () => {
    const start = Date.now();
    const { ping, calls } = scriptedPing([false, false, false, false, true]);
    const monitor = createConnectivityMonitor({ ping });
    const states: boolean[] = [];
    monitor.subscribe(() => states.push(monitor.isOffline()));
    monitor.start();

    await vi.advanceTimersByTimeAsync(10_000);
    expect(monitor.getState()).toEqual({ offline: false, consecutiveFailures: 1 });
    await vi.advanceTimersByTimeAsync(200);
    expect(monitor.getState()).toEqual({ offline: false, consecutiveFailures: 2 });
    await vi.advanceTimersByTimeAsync(400);
    expect(monitor.getState()).toEqual({ offline: true, consecutiveFailures: 3 });
    await vi.advanceTimersByTimeAsync(600);
    expect(monitor.getState()).toEqual({ offline: true, consecutiveFailures: 4 });
    await vi.advanceTimersByTimeAsync(800);
    expect(monitor.getState()).toEqual({ offline: false, consecutiveFailures: 0 });

    expect(calls.map((time) => time - start)).toEqual([10_000, 10_200, 10_600, 11_200, 12_000]);
    // offline flipped on exactly once and off exactly once
    expect(states.filter((offline, i) => offline !== (states[i - 1] ?? false))).toEqual([true, false]);
    monitor.stop();
  });

  it("never waits more than 2 s between pings while failing", async () => {
    const { ping, calls } = scriptedPing(Array.from({ length: 30 }, () => false));
    const monitor = createConnectivityMonitor({ ping });
    monitor.start();
    await vi.advanceTimersByTimeAsync(10_000 + 60_000);
    const gaps = calls.slice(1).map((time, i) => time - (calls[i] ?? 0));
    expect(gaps.slice(0, 12)).toEqual([200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800, 2000, 2000, 2000]);
    expect(Math.max(...gaps)).toBe(2000);
    monitor.stop();
  });

  it("keeps pinging every 10 s while healthy", async () => {
    const start = Date.now();
    const { ping, calls } = scriptedPing([]);
    const monitor = createConnectivityMonitor({ ping });
    monitor.start();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(calls.map((time) => time - start)).toEqual([10_000, 20_000, 30_000]);
    monitor.stop();
  });

  it("treats a rejected ping as a failure", async () => {
    const ping = vi.fn(() => Promise.reject(new Error("boom")));
    const monitor = createConnectivityMonitor({ ping });
    monitor.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(monitor.getState().consecutiveFailures).toBe(1);
    monitor.stop();
  });

  it("releases whenOnline waiters when a ping succeeds after being offline", async () => {
    const { ping } = scriptedPing([false, false, false, true]);
    const monitor = createConnectivityMonitor({ ping });
    await expect(monitor.whenOnline()).resolves.toBeUndefined();
    monitor.start();
    await vi.advanceTimersByTimeAsync(10_000 + 200 + 400);
    expect(monitor.isOffline()).toBe(true);
    let released = false;
    void monitor.whenOnline().then(() => {
      released = true;
    });
    await vi.advanceTimersByTimeAsync(599);
    expect(released).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(released).toBe(true);
    monitor.stop();
  });

  it("checks at once on a network error or a retry click", async () => {
    const { ping } = scriptedPing([false, true]);
    const monitor = createConnectivityMonitor({ ping });
    monitor.start();
    monitor.reportNetworkError();
    await vi.advanceTimersByTimeAsync(0);
    expect(ping).toHaveBeenCalledTimes(1);
    // while failing, further network errors leave the backoff schedule alone
    monitor.reportNetworkError();
    await vi.advanceTimersByTimeAsync(0);
    expect(ping).toHaveBeenCalledTimes(1);
    monitor.checkNow();
    await vi.advanceTimersByTimeAsync(0);
    expect(ping).toHaveBeenCalledTimes(2);
    expect(monitor.getState().consecutiveFailures).toBe(0);
    monitor.stop();
  });
});

describe("createApiPing", () => {
  it("sends GET {api}/ping without credentials or token", async () => {
    const fetchImpl = vi.fn(async (_input: RequestInfo | URL, _init?: RequestInit) => new Response("OK"));
    const ping = createApiPing("http://localhost:8081", fetchImpl);
    await expect(ping()).resolves.toBe(true);
    const [url, init] = fetchImpl.mock.calls[0] ?? [];
    expect(url).toBe("http://localhost:8081/ping");
    expect(init?.method).toBe("GET");
    expect(init?.credentials).toBe("omit");
    expect(init?.headers).toBeUndefined();
  });

  it("fails on a network error or a 5xx answer", async () => {
    await expect(createApiPing("http://api", () => Promise.reject(new TypeError("Failed to fetch")))()).resolves.toBe(
      false,
    );
    await expect(createApiPing("http://api", async () => new Response("", { status: 502 }))()).resolves.toBe(false);
  });
});
