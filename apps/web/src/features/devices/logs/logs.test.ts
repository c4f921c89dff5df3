import { afterEach, describe, expect, it, vi } from "vitest";
import {
  canSaveFiles,
  createNdjsonSplitter,
  filterLines,
  formatLogLine,
  formatLogTime,
  LOG_BUFFER_SIZE,
  logRetryDelay,
  RingBuffer,
  type ShownLine,
  toLogLine,
} from "./model.ts";
import { keepLogStream, LogRequestError, readLogStream } from "./stream.ts";

const line = (message: string, extra: Partial<ShownLine> = {}): ShownLine => ({
  key: 0,
  message,
  timestamp: Date.UTC(2024, 4, 1, 12, 3, 7),
  createdAt: Date.UTC(2024, 4, 1, 12, 3, 8),
  isSystem: false,
  isStdErr: false,
  serviceId: 1,
  service: "main",
  ...extra,
});

describe("log ring buffer (spec 2 §9: 5000 lines)", () => {
  it("keeps the newest lines, oldest dropped first", () => {
    const ring = new RingBuffer<number>(3);
    ring.push(1, 2);
    expect(ring.toArray()).toEqual([1, 2]);
    ring.push(3, 4, 5);
    expect(ring.toArray()).toEqual([3, 4, 5]);
    expect(ring.at(0)).toBe(3);
    expect(ring.at(3)).toBeUndefined();
    ring.push(...[6, 7, 8, 9, 10]);
    expect(ring.toArray()).toEqual([8, 9, 10]);
    ring.clear();
    expect(ring.length).toBe(0);
  });

  it("holds at most 5000 lines and keeps up with 200 lines/s for a minute", () => {
    expect(LOG_BUFFER_SIZE).toBe(5000);
    const ring = new RingBuffer<ShownLine>(LOG_BUFFER_SIZE);
    const started = performance.now();
    // 60 s at 200 lines/s, added in 100 ms batches of 20 (as the panel does), each batch
    // followed by the work a render does: the whole buffer copied and filtered.
    for (let batch = 0; batch < 600; batch++) {
      ring.push(...Array.from({ length: 20 }, (_, i) => line(`line ${batch * 20 + i}`, { key: batch * 20 + i })));
      if (batch % 10 === 0) filterLines(ring.toArray(), "line 1");
    }
    const elapsed = performance.now() - started;
    expect(ring.length).toBe(5000);
    expect(ring.at(0)?.message).toBe("line 7000");
    expect(ring.at(4999)?.message).toBe("line 11999");
    // Far under the minute the lines took to arrive (a generous bound for a busy CI machine).
    expect(elapsed).toBeLessThan(2000);
  });
});

describe("log filter", () => {
  const lines = [
    line("Listening on port 80"),
    line("connected to db", { service: "worker", serviceId: 2 }),
    line("Supervisor starting", { isSystem: true, serviceId: null, service: "" }),
  ];
  it("matches the message or the service name, case-insensitive", () => {
    expect(filterLines(lines, "PORT").map((l) => l.message)).toEqual(["Listening on port 80"]);
    expect(filterLines(lines, "worker").map((l) => l.message)).toEqual(["connected to db"]);
    expect(filterLines(lines, "  ")).toHaveLength(3);
    expect(filterLines(lines, "nothing")).toEqual([]);
  });
});

describe("log line formatting", () => {
  it("shows UTC with its zone, or the browser's local time", () => {
    const ts = Date.UTC(2024, 4, 1, 12, 3, 7);
    expect(formatLogTime(ts, true)).toBe("2024-05-01 12:03:07 UTC");
    const local = new Date(ts);
    const pad = (n: number) => String(n).padStart(2, "0");
    expect(formatLogTime(ts, false)).toBe(
      `${local.getFullYear()}-${pad(local.getMonth() + 1)}-${pad(local.getDate())} ${pad(local.getHours())}:${pad(local.getMinutes())}:${pad(local.getSeconds())}`,
    );
  });

  it("puts the time first only when timestamps are on, then the service, stderr and the message", () => {
    expect(formatLogLine(line("hello\n"), { utc: true, timestamps: true })).toBe(
      "[2024-05-01 12:03:07 UTC] [main] hello",
    );
    expect(formatLogLine(line("hello"), { utc: true, timestamps: false })).toBe("[main] hello");
    expect(formatLogLine(line("boom", { isStdErr: true }), { utc: true, timestamps: false })).toBe(
      "[main] [stderr] boom",
    );
    expect(formatLogLine(line("Rebooting", { isSystem: true, service: "" }), { utc: false, timestamps: false })).toBe(
      "[system] Rebooting",
    );
  });

  it("reads a line's fields (message, service id, timestamp, isSystem, isStdErr)", () => {
    expect(toLogLine({ message: "x", timestamp: 5, createdAt: 6, isSystem: true, serviceId: 3 })).toEqual({
      message: "x",
      timestamp: 5,
      createdAt: 6,
      isSystem: true,
      isStdErr: false,
      serviceId: 3,
    });
    expect(toLogLine({ nope: 1 })).toBeUndefined();
    expect(toLogLine({ message: "y", createdAt: "2024-05-01T00:00:00Z" })?.timestamp).toBe(Date.UTC(2024, 4, 1));
  });
});

describe("log stream errors (spec 2 §8)", () => {
  it("retry after 1 s, or 10 s when network-like or 503", () => {
    expect(logRetryDelay(new LogRequestError(500, "boom"))).toBe(1000);
    expect(logRetryDelay(new LogRequestError(401, "no"))).toBe(1000);
    expect(logRetryDelay(undefined)).toBe(1000);
    expect(logRetryDelay(new LogRequestError(503, "busy"))).toBe(10_000);
    expect(logRetryDelay(new TypeError("Failed to fetch"))).toBe(10_000);
    expect(logRetryDelay(new Error("network timeout at: x"))).toBe(10_000);
  });

  it("asks for 100 lines first, 0 on every reconnect, and waits the retry delay between", async () => {
    const counts: number[] = [];
    const delays: number[] = [];
    const timers: Array<() => void> = [];
    const timerDelays: number[] = [];
    const outcomes: Array<(onOpen: () => void) => Promise<void>> = [
      async () => Promise.reject(new LogRequestError(503, "busy")), // never opened: 100 again
      async (onOpen) => {
        onOpen();
        throw new LogRequestError(500, "broke");
      },
      async (onOpen) => onOpen(), // ended by the server
      async () => new Promise<void>(() => undefined),
    ];
    const firstFailure = vi.fn();
    const stop = keepLogStream({
      open: (count, _signal, onOpen) => {
        counts.push(count);
        return (outcomes.shift() ?? (async () => undefined))(onOpen);
      },
      onState: (state) => {
        if (state.state === "retrying") delays.push(state.delayMs);
      },
      onFirstFailure: firstFailure,
      setTimer: (run, ms) => {
        timers.push(run);
        timerDelays.push(ms);
        return ms;
      },
      clearTimer: () => undefined,
    });
    const step = async () => {
      await new Promise((resolve) => setTimeout(resolve, 0));
      timers.shift()?.();
    };
    await step();
    await step();
    await step();
    await step();
    expect(counts).toEqual([100, 100, 0, 0]);
    // The third stream ended without an error: reopened after 1 s, quietly.
    expect(delays).toEqual([10_000, 1000]);
    expect(timerDelays).toEqual([10_000, 1000, 1000]);
    expect(firstFailure).toHaveBeenCalledTimes(1);
    stop();
  });
});

describe("log stream reader", () => {
  afterEach(() => vi.restoreAllMocks());

  it("reads NDJSON chunks, skipping heartbeats and broken lines", () => {
    const values: unknown[] = [];
    const splitter = createNdjsonSplitter((value) => values.push(value));
    splitter.push('{"message":"a"}\n\n{"mess');
    splitter.push('age":"b"}\nnot json\n');
    splitter.push('[{"message":"c"}]');
    splitter.end();
    expect(values).toEqual([{ message: "a" }, { message: "b" }, { message: "c" }]);
  });

  it("sends the token and count, and turns an HTTP error into a status-coded error", async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"message":"hi","timestamp":1,"createdAt":2}\n\n'));
        controller.close();
      },
    });
    const fetchImpl = vi.fn(async () => new Response(body, { status: 200 }));
    const lines: string[] = [];
    const onOpen = vi.fn();
    await readLogStream({
      apiUrl: "http://api",
      uuid: "abc",
      token: "T",
      count: 100,
      signal: new AbortController().signal,
      onOpen,
      onLine: (l) => lines.push(l.message),
      fetchImpl,
    });
    expect(lines).toEqual(["hi"]);
    expect(onOpen).toHaveBeenCalled();
    const [url, init] = fetchImpl.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("http://api/device/v2/abc/logs?stream=1&count=100");
    expect((init.headers as Record<string, string>).Authorization).toBe("Bearer T");

    const failing = vi.fn(async () => new Response("Service Unavailable", { status: 503 }));
    const error = await readLogStream({
      apiUrl: "http://api",
      uuid: "abc",
      token: "T",
      count: 0,
      signal: new AbortController().signal,
      onOpen,
      onLine: () => undefined,
      fetchImpl: failing,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LogRequestError);
    expect(logRetryDelay(error)).toBe(10_000);
  });
});

describe("file-save support (spec 2 §5)", () => {
  it("needs Blob, object URLs and the anchor download attribute", () => {
    class Anchor {}
    Object.defineProperty(Anchor.prototype, "download", { value: "" });
    const env = {
      Blob,
      URL: { createObjectURL: () => "blob:x" },
      document: { createElement: () => ({}) },
      HTMLAnchorElement: Anchor,
    } as unknown as typeof globalThis;
    expect(canSaveFiles(env)).toBe(true);
    expect(canSaveFiles({ ...env, HTMLAnchorElement: class {} } as unknown as typeof globalThis)).toBe(false);
    expect(canSaveFiles({ ...env, URL: {} } as unknown as typeof globalThis)).toBe(false);
  });
});

describe("clearing logs (resin.device_log.delete)", () => {
  it("is for safe-developers and up", async () => {
    const { deviceAbilities } = await import("../data.ts");
    const can = (role: string) => deviceAbilities([{ role }]).clearLogs;
    expect(["observer", "safe-operator", "operator"].map(can)).toEqual([false, false, false]);
    expect(["safe-developer", "developer", "administrator"].map(can)).toEqual([true, true, true]);
  });
});

describe("log search query", () => {
  it("sends only what the form holds, times in ms, and the cursor", async () => {
    const { logSearchQuery, localTimeToMs } = await import("./search.ts");
    const from = "2026-11-20T10:00";
    const query = logSearchQuery({ fleet: 7 }, { q: "  timeout ", service: "web", from, to: "" }, "123_45");
    expect(Object.fromEntries(query)).toEqual({
      fleet: "7",
      q: "timeout",
      service: "web",
      from: String(localTimeToMs(from)),
      limit: "100",
      before: "123_45",
    });
    expect(Object.fromEntries(logSearchQuery({ device: "abc" }, { q: "", service: "", from: "", to: "" }))).toEqual({
      device: "abc",
      limit: "100",
    });
    expect(localTimeToMs("not a time")).toBeUndefined();
  });
});
