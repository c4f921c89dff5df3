import { describe, expect, it } from "vitest";
import { batchedLookup, batchedWrite } from "./batched.ts";
import { inDeviceWriteLane, retryOnDeadlock } from "./batches.ts";

describe("batchedLookup", () => {
  it("answers each key from one look-up per turn of the event loop", async () => {
    const calls: number[][] = [];
    const lookup = batchedLookup(async (keys: readonly number[]) => {
      calls.push([...keys]);
      return new Map(keys.filter((key) => key !== 2).map((key) => [key, `device ${key}`]));
    });
    // As requests arriving on different sockets in one turn call it.
    const answers = await Promise.all([1, 2, 3].map((key) => new Promise((r) => setImmediate(() => r(lookup(key))))));
    expect(answers).toEqual(["device 1", undefined, "device 3"]);
    expect(calls).toEqual([[1, 2, 3]]);
    expect(await lookup(4)).toBe("device 4");
    expect(calls).toHaveLength(2);
  });
});

describe("batchedWrite", () => {
  it("writes what came within the delay at once, and a batch only after the previous one", async () => {
    const written: string[][] = [];
    let release: () => void = () => undefined;
    const firstHeld = new Promise<void>((resolve) => {
      release = resolve;
    });
    const write = batchedWrite(async (items: readonly string[]) => {
      if (written.length === 0) {
        written.push([...items]);
        await firstHeld;
      } else written.push([...items]);
    }, 10);
    const first = [write("a"), write("b")];
    await new Promise((resolve) => setTimeout(resolve, 30));
    const second = write("c");
    await new Promise((resolve) => setTimeout(resolve, 30));
    // The second batch waits while the first is still being written.
    expect(written).toEqual([["a", "b"]]);
    release();
    await Promise.all([...first, second]);
    expect(written).toEqual([["a", "b"], ["c"]]);
  });

  it("fails the writes of a failed batch and goes on with the next", async () => {
    let fail = true;
    const write = batchedWrite(async () => {
      if (fail) throw new Error("database down");
    }, 1);
    await expect(write(1)).rejects.toThrow("database down");
    fail = false;
    await expect(write(2)).resolves.toBeUndefined();
  });
});

describe("retryOnDeadlock", () => {
  const deadlock = Object.assign(new Error("deadlock detected"), { code: "40P01" });

  it("runs a deadlock's victim again, up to three times", async () => {
    let calls = 0;
    const write = async () => {
      calls += 1;
      if (calls < 3) throw deadlock;
      return "written";
    };
    expect(await retryOnDeadlock(write)).toBe("written");
    expect(calls).toBe(3);
    calls = -10;
    await expect(retryOnDeadlock(write)).rejects.toThrow("deadlock detected");
    expect(calls).toBe(-7);
  });

  it("does not rerun other failures", async () => {
    let calls = 0;
    await expect(
      retryOnDeadlock(async () => {
        calls += 1;
        throw new Error("value too long");
      }),
    ).rejects.toThrow("value too long");
    expect(calls).toBe(1);
  });
});

describe("inDeviceWriteLane", () => {
  it("runs one write at a time, in the order they come, and goes on after a failure", async () => {
    const events: string[] = [];
    const write = (name: string, fail = false) =>
      inDeviceWriteLane(async () => {
        events.push(`${name} starts`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push(`${name} ends`);
        if (fail) throw new Error(`${name} failed`);
      });
    const done = Promise.allSettled([write("reports", true), write("heartbeat"), write("last seen")]);
    expect((await done).map((result) => result.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
    expect(events).toEqual([
      "reports starts",
      "reports ends",
      "heartbeat starts",
      "heartbeat ends",
      "last seen starts",
      "last seen ends",
    ]);
  });
});
