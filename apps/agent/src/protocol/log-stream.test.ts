import { describe, expect, it } from "vitest";
import { LOG_BUFFER_LINES, LogBuffer, MAX_LINE_CHARS } from "./log-stream.ts";

const line = (i: number) => ({ message: `line ${i}`, timestamp: i });

describe("LogBuffer", () => {
  it("keeps at most 1,000 lines, drops the oldest and counts them", () => {
    const buffer = new LogBuffer();
    for (let i = 0; i < 2500; i++) buffer.push(line(i));
    expect(buffer.size).toBe(LOG_BUFFER_LINES);
    expect(buffer.dropped).toBe(1500);
    const batch = buffer.take(100, 99);
    expect(batch[0]).toEqual({ message: "Dropped 1500 log lines", timestamp: 99, isSystem: true });
    expect(batch[1]).toEqual(line(1500));
    expect(batch).toHaveLength(100);
    expect(buffer.dropped).toBe(0);
    expect(buffer.size).toBe(1000 - 99);
  });

  it("hands lines out oldest first, in batches, and empties", () => {
    const buffer = new LogBuffer(10);
    for (let i = 0; i < 7; i++) buffer.push(line(i));
    expect(buffer.take(5).map((l) => l.timestamp)).toEqual([0, 1, 2, 3, 4]);
    expect(buffer.take(5).map((l) => l.timestamp)).toEqual([5, 6]);
    expect(buffer.take(5)).toEqual([]);
    expect(buffer.size).toBe(0);
  });

  it("stays bounded in memory under a long overflow", () => {
    const buffer = new LogBuffer(100);
    for (let i = 0; i < 100_000; i++) buffer.push(line(i));
    expect(buffer.size).toBe(100);
    expect((buffer as unknown as { lines: unknown[] }).lines.length).toBeLessThan(1200);
    expect(buffer.take(1000).at(-1)).toEqual(line(99_999));
  });

  it("cuts lines over 10,000 characters", () => {
    const buffer = new LogBuffer();
    buffer.push({ message: "x".repeat(MAX_LINE_CHARS + 50), timestamp: 1 });
    expect(buffer.take(1)[0]?.message).toHaveLength(MAX_LINE_CHARS);
  });
});
