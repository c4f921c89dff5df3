import { afterAll, describe, expect, it } from "vitest";
import { type DeviceHost, DeviceRuntime, newStats } from "./device.ts";
import { ok } from "./protocol/cloudlink.ts";
import { createHttp } from "./protocol/http.ts";
import { FakeClock, seeded } from "./testing/fake-clock.ts";

// Nothing listens on port 9: every call fails at once, which is all the scheduling needs.
const http = createHttp({ connections: 2 });
afterAll(() => http.close());

const identity = {
  uuid: "a".repeat(32),
  deviceKey: "k".repeat(64),
  deviceId: 1,
  apiUrl: "http://127.0.0.1:9",
  fleetId: 1,
  deviceType: "raspberrypi4-64",
};

function setUp(host: Partial<DeviceHost> = {}) {
  const clock = new FakeClock();
  const ticks: number[] = [];
  const fullHost: DeviceHost = {
    currentState: () => ({ status: "Idle" }),
    handle: () => ok(),
    beforeReport: () => ticks.push(clock.now()),
    ...host,
  };
  const stats = newStats();
  const device = new DeviceRuntime({
    http,
    identity,
    host: fullHost,
    reportIntervalMs: 10_000,
    clock,
    random: seeded(1),
    stats,
  });
  return { clock, device, ticks, stats };
}

describe("device runtime scheduling (fake clock)", () => {
  it("reports every interval ± 10 % and stops cleanly", () => {
    const { clock, device, ticks } = setUp();
    device.start({ firstReportInMs: 500 });
    device.cloudlink.stop(); // no socket in this test
    clock.advance(60_000);
    expect(ticks[0]).toBe(clock.now() - 60_000 + 500);
    const gaps = ticks.slice(1).map((t, i) => t - (ticks[i] as number));
    expect(gaps.length).toBeGreaterThanOrEqual(5);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(9000);
      expect(gap).toBeLessThanOrEqual(11_000);
    }
    device.stop();
    const count = ticks.length;
    clock.advance(60_000);
    expect(ticks.length).toBe(count);
    expect(clock.pending).toBe(0);
  });

  it("a host that is busy reports sooner (provisioning, updating)", () => {
    const { clock, device, ticks } = setUp({ nextReportInMs: () => 3000 });
    device.start({ firstReportInMs: 0 });
    device.cloudlink.stop();
    clock.advance(30_000);
    expect(ticks.length).toBe(11);
    device.stop();
  });

  it("counts a report that starts more than 1 s after it was due as late", () => {
    const { clock, device, stats } = setUp();
    device.start({ firstReportInMs: 1000 });
    device.cloudlink.stop();
    // The timer fires on time with the fake clock; a stalled event loop is what makes it late.
    const original = clock.now.bind(clock);
    let stall = 0;
    clock.now = () => original() + stall;
    stall = 5000;
    clock.advance(1000);
    expect(stats.lateReports).toBe(1);
    stall = 0;
    clock.advance(11_000);
    expect(stats.lateReports).toBe(1);
    device.stop();
  });
});

describe("cutting a device's connection (simulator --offline-for)", () => {
  it("keeps ticking and logging while cut, sends nothing, and comes back after the given time", () => {
    const { clock, device, ticks, stats } = setUp({
      beforeReport: (runtime) => {
        ticks.push(clock.now());
        runtime.log({ message: `tick ${ticks.length}` });
      },
    });
    device.start({ firstReportInMs: 0 });
    device.cloudlink.stop();
    clock.advance(1);
    const reportsBefore = stats.reports + stats.reportErrors;
    device.cutConnection(30_000);
    expect(device.offline).toBe(true);
    const ticksBefore = ticks.length;
    clock.advance(29_000);
    expect(ticks.length).toBeGreaterThan(ticksBefore + 1);
    expect(stats.reports + stats.reportErrors).toBe(reportsBefore);
    // The lines logged meanwhile wait in the offline buffer, oldest first.
    expect(device.logs.buffer.size).toBeGreaterThanOrEqual(ticks.length - ticksBefore);
    clock.advance(2000);
    expect(device.offline).toBe(false);
    device.stop();
  });
});
