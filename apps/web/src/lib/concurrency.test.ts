import { describe, expect, it } from "vitest";
import { createConcurrencyLimiter } from "./concurrency.ts";

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("createConcurrencyLimiter", () => {
  it("never has more than max tasks in flight", async () => {
    const limiter = createConcurrencyLimiter(350);
    let inFlight = 0;
    let peak = 0;
    const gates = Array.from({ length: 1000 }, () => deferred());
    const runs = gates.map((gate) =>
      limiter.run(async () => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await gate.promise;
        inFlight -= 1;
      }),
    );
    await tick();
    expect(inFlight).toBe(350);
    expect(limiter.pending).toBe(650);
    for (let i = 0; i < gates.length; i += 50) {
      for (const gate of gates.slice(i, i + 50)) gate.resolve();
      await tick();
      expect(inFlight).toBeLessThanOrEqual(350);
    }
    await Promise.all(runs);
    expect(peak).toBe(350);
    expect(limiter.active).toBe(0);
    expect(limiter.pending).toBe(0);
  });

  it("starts waiting tasks in arrival order", async () => {
    const limiter = createConcurrencyLimiter(1);
    const order: number[] = [];
    const first = deferred();
    const runs = [
      limiter.run(async () => {
        order.push(1);
        await first.promise;
      }),
      limiter.run(async () => order.push(2)),
      limiter.run(async () => order.push(3)),
    ];
    await tick();
    expect(order).toEqual([1]);
    first.resolve();
    await Promise.all(runs);
    expect(order).toEqual([1, 2, 3]);
  });

  it("frees the slot when a task fails", async () => {
    const limiter = createConcurrencyLimiter(1);
    await expect(limiter.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(limiter.run(async () => "ok")).resolves.toBe("ok");
    expect(limiter.active).toBe(0);
  });

  it("rejects a nonsensical limit", () => {
    expect(() => createConcurrencyLimiter(0)).toThrow(RangeError);
  });
});
