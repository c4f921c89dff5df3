import type { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../testing/fake-clock.ts";
import type { Http } from "./http.ts";
import {
  droppedNotice,
  LOG_BUFFER_LINES,
  LogBuffer,
  type LogLine,
  LogStream,
  type LogTransport,
  MAX_LINE_CHARS,
  STREAM_MAX_LINES,
} from "./log-stream.ts";

const line = (i: number) => ({ message: `line ${i}`, timestamp: i });

describe("LogBuffer", () => {
  it("keeps at most 10,000 lines, drops the oldest, counts them and says so after the kept ones", () => {
    const buffer = new LogBuffer();
    for (let i = 0; i < LOG_BUFFER_LINES + 1500; i++) buffer.push(line(i));
    expect(buffer.size).toBe(LOG_BUFFER_LINES);
    expect(buffer.dropped).toBe(1500);
    const first = buffer.take(100, 99);
    expect(first[0]).toEqual(line(1500));
    expect(first).toHaveLength(100);
    // Lines logged after the first take come after the notice.
    buffer.push(line(-1));
    const rest = buffer.take(LOG_BUFFER_LINES + 10, 99);
    expect(rest.at(-3)).toEqual(line(LOG_BUFFER_LINES + 1499));
    expect(rest.at(-2)).toEqual({
      message: "1500 log lines were dropped while offline",
      timestamp: 99,
      isSystem: true,
    });
    expect(rest.at(-1)).toEqual(line(-1));
    expect(buffer.dropped).toBe(0);
    expect(buffer.size).toBe(0);
  });

  it("bounds the characters kept as well as the lines", () => {
    const buffer = new LogBuffer(1000, 100);
    for (let i = 0; i < 30; i++) buffer.push({ message: "x".repeat(10), timestamp: i });
    expect(buffer.size).toBe(10);
    expect(buffer.characters).toBe(100);
    expect(buffer.dropped).toBe(20);
    expect(buffer.take(5)[0]?.timestamp).toBe(20);
  });

  it("hands lines out oldest first, in batches, and empties", () => {
    const buffer = new LogBuffer(10);
    for (let i = 0; i < 7; i++) buffer.push(line(i));
    expect(buffer.take(5).map((l) => l.timestamp)).toEqual([0, 1, 2, 3, 4]);
    expect(buffer.take(5).map((l) => l.timestamp)).toEqual([5, 6]);
    expect(buffer.take(5)).toEqual([]);
    expect(buffer.size).toBe(0);
  });

  it("puts lines back in front, in order, still bounded", () => {
    const buffer = new LogBuffer(5);
    for (let i = 0; i < 3; i++) buffer.push(line(i));
    const taken = buffer.take(3);
    buffer.push(line(3));
    buffer.push(line(4));
    buffer.push(line(5));
    buffer.requeue(taken);
    expect(buffer.dropped).toBe(1);
    expect(buffer.take(10).map((l) => l.message)).toEqual([
      ...[1, 2, 3, 4, 5].map((i) => `line ${i}`),
      "1 log line was dropped while offline",
    ]);
  });

  it("stays bounded in memory under a long overflow", () => {
    const buffer = new LogBuffer(100);
    for (let i = 0; i < 100_000; i++) buffer.push(line(i));
    expect(buffer.size).toBe(100);
    expect((buffer as unknown as { lines: unknown[] }).lines.length).toBeLessThan(1200);
    expect(buffer.take(1000).at(-2)).toEqual(line(99_999));
  });

  it("cuts lines over 10,000 characters", () => {
    const buffer = new LogBuffer();
    buffer.push({ message: "x".repeat(MAX_LINE_CHARS + 50), timestamp: 1 });
    expect(buffer.take(1)[0]?.message).toHaveLength(MAX_LINE_CHARS);
  });

  it("words the notice for one line and many", () => {
    expect(droppedNotice(1)).toBe("1 log line was dropped while offline");
    expect(droppedNotice(7)).toBe("7 log lines were dropped while offline");
  });
});

/** A log-stream endpoint in memory: refuses connections while down, keeps a stream's lines once it ends. */
function fakeServer() {
  const received: LogLine[] = [];
  let up = true;
  let streams = 0;
  const holds: Array<() => void> = [];
  let holdAnswers = false;
  const transport: LogTransport = (body: PassThrough) => {
    streams += 1;
    if (!up) {
      body.resume();
      return Promise.reject(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8081"), { code: "ECONNREFUSED" }));
    }
    return new Promise((resolve) => {
      let text = "";
      body.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      body.on("end", () => {
        const answer = () => {
          for (const row of text.split("\n")) if (row) received.push(JSON.parse(row) as LogLine);
          resolve({ status: 200, text: "OK" });
        };
        if (holdAnswers) holds.push(answer);
        else answer();
      });
    });
  };
  return {
    received,
    transport,
    get streams() {
      return streams;
    },
    set up(value: boolean) {
      up = value;
    },
    set holdAnswers(value: boolean) {
      holdAnswers = value;
    },
    release() {
      for (const answer of holds.splice(0)) answer();
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function stream(server: ReturnType<typeof fakeServer>, clock: FakeClock, extra: { bufferLines?: number } = {}) {
  return new LogStream({
    http: {} as Http,
    apiUrl: "http://api.test",
    uuid: "u",
    deviceKey: "k",
    clock,
    idleMs: 5000,
    transport: server.transport,
    ...extra,
  });
}

/** Lets timers and stream answers run for `ms` of fake time. */
async function run(clock: FakeClock, ms: number) {
  for (let t = 0; t < ms; t += 500) {
    clock.advance(500);
    await settle();
    await settle();
  }
}

describe("LogStream offline buffering", () => {
  it("keeps lines while the server is unreachable and uploads them in order with their times on reconnect", async () => {
    const clock = new FakeClock(1_000_000);
    const server = fakeServer();
    const logs = stream(server, clock);
    logs.push({ message: "before", timestamp: clock.now() });
    await run(clock, 7000);
    expect(server.received.map((l) => l.message)).toEqual(["before"]);

    server.up = false;
    const offlineTimes: number[] = [];
    for (let i = 0; i < 30; i++) {
      offlineTimes.push(clock.now());
      logs.push({ message: `offline ${i}`, timestamp: clock.now(), serviceId: 7 });
      await run(clock, 1000);
    }
    expect(server.received).toHaveLength(1);
    expect(server.streams).toBeGreaterThan(2);

    server.up = true;
    await run(clock, 35_000);
    logs.push({ message: "after", timestamp: clock.now() });
    await run(clock, 7000);
    const messages = server.received.map((l) => l.message);
    expect(messages).toEqual(["before", ...offlineTimes.map((_, i) => `offline ${i}`), "after"]);
    expect(server.received.slice(1, 31).map((l) => l.timestamp)).toEqual(offlineTimes);
    expect(server.received[1]).toEqual({ message: "offline 0", timestamp: offlineTimes[0], serviceId: 7 });
  });

  it("drops the oldest beyond the bound and says how many after the kept lines", async () => {
    const clock = new FakeClock(1_000_000);
    const server = fakeServer();
    server.up = false;
    const logs = stream(server, clock, { bufferLines: 100 });
    for (let i = 0; i < 250; i++) logs.push(line(i));
    await run(clock, 5000);
    server.up = true;
    await run(clock, 35_000);
    logs.push(line(1000));
    await run(clock, 7000);
    const got = server.received;
    expect(got.slice(0, 100).map((l) => l.timestamp)).toEqual(Array.from({ length: 100 }, (_, i) => 150 + i));
    expect(got[100]).toMatchObject({ message: "150 log lines were dropped while offline", isSystem: true });
    expect(got.slice(101)).toEqual([line(1000)]);
  });

  it("ends a stream after STREAM_MAX_LINES and opens the next only once it was answered", async () => {
    const clock = new FakeClock(1_000_000);
    const server = fakeServer();
    server.holdAnswers = true;
    const logs = stream(server, clock);
    for (let i = 0; i < STREAM_MAX_LINES + 50; i++) logs.push(line(i));
    await run(clock, 3000);
    expect(server.streams).toBe(1);
    expect(logs.buffer.size).toBe(50);
    server.holdAnswers = false;
    server.release();
    await run(clock, 8000);
    expect(server.streams).toBe(2);
    expect(server.received.map((l) => l.timestamp)).toEqual(Array.from({ length: STREAM_MAX_LINES + 50 }, (_, i) => i));
  });

  it("sends nothing while set offline and everything when back", async () => {
    const clock = new FakeClock(1_000_000);
    const server = fakeServer();
    const logs = stream(server, clock);
    logs.setOffline(true);
    for (let i = 0; i < 5; i++) logs.push(line(i));
    await run(clock, 10_000);
    expect(server.streams).toBe(0);
    logs.setOffline(false);
    await run(clock, 7000);
    expect(server.received).toEqual([0, 1, 2, 3, 4].map(line));
  });
});
