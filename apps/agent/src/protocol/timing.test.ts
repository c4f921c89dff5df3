import { describe, expect, it } from "vitest";
import { seeded } from "../testing/fake-clock.ts";
import { Backoff, CONNECT_TIMEOUT_MS, jittered, RECONNECT_CAP_MS } from "./timing.ts";

describe("Backoff (exponential, full jitter)", () => {
  it("waits random(0, min(30 s, 1 s × 2^attempt)) and counts attempts", () => {
    const ceilings: number[] = [];
    const backoff = new Backoff({ random: () => 0.999999 });
    for (let i = 0; i < 9; i++) {
      ceilings.push(backoff.ceiling());
      const delay = backoff.next();
      expect(delay).toBeLessThan(ceilings[i] as number);
      expect(delay).toBeGreaterThanOrEqual(0);
    }
    expect(ceilings).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000]);
  });

  it("spreads delays over the whole range (full jitter), not around the ceiling", () => {
    const random = seeded(7);
    const delays = Array.from({ length: 2000 }, () => {
      const backoff = new Backoff({ random });
      backoff.attempt = 6;
      return backoff.next();
    });
    expect(Math.min(...delays)).toBeLessThan(1500);
    expect(Math.max(...delays)).toBeGreaterThan(28_500);
    const mean = delays.reduce((a, b) => a + b, 0) / delays.length;
    expect(mean).toBeGreaterThan(13_500);
    expect(mean).toBeLessThan(16_500);
  });

  it("resets the attempt count after a connection that lasted 30 s, not after a short one", () => {
    const backoff = new Backoff({ random: () => 0.5 });
    backoff.next();
    backoff.next();
    backoff.next();
    backoff.connectionEnded(29_999);
    expect(backoff.attempt).toBe(3);
    backoff.connectionEnded(30_000);
    expect(backoff.attempt).toBe(0);
    expect(backoff.ceiling()).toBe(1000);
  });

  it("never overflows on a very long outage, and waits at most 30 s whatever its length", () => {
    const backoff = new Backoff({ random: () => 0.999999 });
    backoff.attempt = 5000;
    expect(backoff.next()).toBeLessThan(30_000);
    // A wait and one handshake: an agent is back within 60 s of the API's return.
    expect(RECONNECT_CAP_MS + CONNECT_TIMEOUT_MS).toBeLessThan(60_000);
  });
});

describe("jittered poll interval", () => {
  it("stays within ± 10 % and covers the range", () => {
    const random = seeded(3);
    const values = Array.from({ length: 5000 }, () => jittered(60_000, random));
    expect(Math.min(...values)).toBeGreaterThanOrEqual(54_000);
    expect(Math.max(...values)).toBeLessThanOrEqual(66_000);
    expect(Math.min(...values)).toBeLessThan(54_200);
    expect(Math.max(...values)).toBeGreaterThan(65_800);
  });
});
