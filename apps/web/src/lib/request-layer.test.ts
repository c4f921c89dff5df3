import { describe, expect, it, vi } from "vitest";
import { activityCount } from "./activity.ts";
import { createConcurrencyLimiter } from "./concurrency.ts";
import { createRequestLayer, parseRetryAfter, rateLimitRetryDelay } from "./request-layer.ts";

/** Shaped like balena-request's BalenaRequestError. */
const httpError = (statusCode: number, headers: Record<string, string> = {}) =>
  Object.assign(new Error(`Request error: ${statusCode}`), {
    code: "BalenaRequestError",
    statusCode,
    body: "",
    responseHeaders: new Headers(headers),
  });

function fakeConnectivity(offline = false) {
  let release: () => void = () => {};
  const state = { offline };
  return {
    state,
    isOffline: () => state.offline,
    whenOnline: vi.fn(() =>
      state.offline
        ? new Promise<void>((resolve) => {
            release = resolve;
          })
        : Promise.resolve(),
    ),
    reportNetworkError: vi.fn(),
    goOnline() {
      state.offline = false;
      release();
    },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP dates", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter("0")).toBe(0);
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfter("Wed, 01 Jan 2025 00:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("Tue, 31 Dec 2024 23:00:00 GMT", now)).toBe(0);
  });

  it("ignores missing or unreadable values", () => {
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
  });
});

describe("rateLimitRetryDelay", () => {
  it("respects Retry-After, falls back to 1 s, 2 s, 4 s, and gives up after 3 retries", () => {
    expect(rateLimitRetryDelay("2", 1)).toBe(2000);
    expect(rateLimitRetryDelay(null, 1)).toBe(1000);
    expect(rateLimitRetryDelay(null, 2)).toBe(2000);
    expect(rateLimitRetryDelay(null, 3)).toBe(4000);
    expect(rateLimitRetryDelay("1", 4)).toBeUndefined();
  });

  it("does not hold a request for more than 20 s", () => {
    expect(rateLimitRetryDelay("20", 1)).toBe(20_000);
    expect(rateLimitRetryDelay("21", 1)).toBeUndefined();
  });
});

describe("createRequestLayer", () => {
  it("counts writes in progress as activities (the token refresh waits for them), reads not", async () => {
    let finish: (value: string) => void = () => {};
    const send = vi.fn(() => new Promise<string>((resolve) => (finish = resolve)));
    const layered = createRequestLayer(send, { connectivity: fakeConnectivity() });
    const write = layered({ method: "PATCH" });
    await vi.waitFor(() => expect(send).toHaveBeenCalledTimes(1));
    expect(activityCount()).toBe(1);
    finish("done");
    await write;
    expect(activityCount()).toBe(0);
    const read = layered({ method: "GET" });
    await vi.waitFor(() => expect(send).toHaveBeenCalledTimes(2));
    expect(activityCount()).toBe(0);
    finish("done");
    await read;
    const failing = createRequestLayer(() => Promise.reject(new Error("refused")), {
      connectivity: fakeConnectivity(),
    });
    await expect(failing({ method: "POST" })).rejects.toThrow("refused");
    expect(activityCount()).toBe(0);
  });

  it("retries a 429 after its Retry-After and returns the later answer", async () => {
    const send = vi
      .fn()
      .mockRejectedValueOnce(httpError(429, { "Retry-After": "2" }))
      .mockResolvedValueOnce("body");
    const sleep = vi.fn(async () => {});
    const layered = createRequestLayer(send, { connectivity: fakeConnectivity(), sleep });
    await expect(layered({ method: "GET" })).resolves.toBe("body");
    expect(send).toHaveBeenCalledTimes(2);
    expect(sleep).toHaveBeenCalledWith(2000);
  });

  it("retries 429s of any method, at most 3 times", async () => {
    const send = vi.fn().mockRejectedValue(httpError(429));
    const sleep = vi.fn(async () => {});
    const layered = createRequestLayer(send, { connectivity: fakeConnectivity(), sleep });
    await expect(layered({ method: "POST" })).rejects.toMatchObject({ statusCode: 429 });
    expect(send).toHaveBeenCalledTimes(4);
    expect(sleep.mock.calls).toEqual([[1000], [2000], [4000]]);
  });

  it("gives up at once when the server asks for a long wait or the caller opted out", async () => {
    const sleep = vi.fn(async () => {});
    const long = vi.fn().mockRejectedValue(httpError(429, { "Retry-After": "120" }));
    await expect(createRequestLayer(long, { connectivity: fakeConnectivity(), sleep })({})).rejects.toMatchObject({
      statusCode: 429,
    });
    expect(long).toHaveBeenCalledTimes(1);
    const optOut = vi.fn().mockRejectedValue(httpError(429, { "Retry-After": "1" }));
    await expect(
      createRequestLayer(optOut, { connectivity: fakeConnectivity(), sleep })({ doNotRetry: true }),
    ).rejects.toMatchObject({ statusCode: 429 });
    expect(optOut).toHaveBeenCalledTimes(1);
    expect(sleep).not.toHaveBeenCalled();
  });

  it("does not retry other errors", async () => {
    const send = vi.fn().mockRejectedValue(httpError(500));
    const layered = createRequestLayer(send, { connectivity: fakeConnectivity(), sleep: async () => {} });
    await expect(layered({})).rejects.toMatchObject({ statusCode: 500 });
    expect(send).toHaveBeenCalledTimes(1);
  });

  it("keeps at most 350 requests in flight and frees the slot while a 429 waits", async () => {
    let inFlight = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const send = vi.fn(async (_options: { method?: string }) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise<void>((resolve) => gates.push(resolve));
      inFlight -= 1;
      return "ok";
    });
    const limiter = createConcurrencyLimiter(350);
    const layered = createRequestLayer(send, { connectivity: fakeConnectivity(), limiter });
    const all = Array.from({ length: 500 }, () => layered({ method: "GET" }));
    await tick();
    expect(inFlight).toBe(350);
    expect(limiter.pending).toBe(150);
    while (gates.length > 0) {
      for (const open of gates.splice(0)) open();
      await tick();
    }
    await Promise.all(all);
    expect(peak).toBe(350);
    expect(send).toHaveBeenCalledTimes(500);

    const waitingLimiter = createConcurrencyLimiter(1);
    let releaseSleep: () => void = () => {};
    const rateLimited = vi
      .fn()
      .mockRejectedValueOnce(httpError(429, { "Retry-After": "1" }))
      .mockResolvedValue("late");
    const other = vi.fn().mockResolvedValue("other");
    const sleep = () => new Promise<void>((resolve) => (releaseSleep = resolve));
    const first = createRequestLayer(rateLimited, { connectivity: fakeConnectivity(), limiter: waitingLimiter, sleep })(
      {},
    );
    await tick();
    // the retry is sleeping: the only slot must be free for another request
    await expect(
      createRequestLayer(other, { connectivity: fakeConnectivity(), limiter: waitingLimiter, sleep })({}),
    ).resolves.toBe("other");
    releaseSleep();
    await expect(first).resolves.toBe("late");
  });

  it("holds GET requests while offline and replays them when back online", async () => {
    const connectivity = fakeConnectivity(true);
    const send = vi.fn().mockResolvedValue("fresh");
    const layered = createRequestLayer(send, { connectivity });
    const pending = layered({ method: "GET" });
    await tick();
    expect(send).not.toHaveBeenCalled();
    connectivity.goOnline();
    await expect(pending).resolves.toBe("fresh");
    expect(send).toHaveBeenCalledTimes(1);
  });

  it("sends non-GET requests even while offline", async () => {
    const send = vi.fn().mockResolvedValue("done");
    const layered = createRequestLayer(send, { connectivity: fakeConnectivity(true) });
    await expect(layered({ method: "PATCH" })).resolves.toBe("done");
  });

  it("queues a GET that failed for lack of network once the app is offline", async () => {
    const connectivity = fakeConnectivity(false);
    const send = vi
      .fn()
      .mockImplementationOnce(async () => {
        connectivity.state.offline = true; // the pings have meanwhile flagged the app offline
        throw new TypeError("Failed to fetch");
      })
      .mockResolvedValueOnce("replayed");
    const layered = createRequestLayer(send, { connectivity });
    const pending = layered({ method: "GET" });
    await tick();
    expect(connectivity.reportNetworkError).toHaveBeenCalledTimes(1);
    expect(send).toHaveBeenCalledTimes(1);
    connectivity.goOnline();
    await expect(pending).resolves.toBe("replayed");
  });

  it("reports a network failure and rethrows it while still online", async () => {
    const connectivity = fakeConnectivity(false);
    const send = vi.fn().mockRejectedValue(new TypeError("Failed to fetch"));
    await expect(createRequestLayer(send, { connectivity })({ method: "GET" })).rejects.toThrow("Failed to fetch");
    expect(connectivity.reportNetworkError).toHaveBeenCalledTimes(1);
    expect(send).toHaveBeenCalledTimes(1);
  });
});
