import { afterEach, describe, expect, it, vi } from "vitest";
import type { DeviceRuntime } from "../device.ts";
import { RealHost } from "./host.ts";

function fakeRuntime() {
  const calls: string[] = [];
  const runtime = {
    log: (line: { message: string }) => calls.push(`log:${line.message}`),
    reportNow: () => calls.push("report"),
    pollNow: () => calls.push("poll"),
  };
  return { runtime: runtime as unknown as DeviceRuntime, calls };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("real host actions", () => {
  it("reboot and shutdown are refused without --allow-reboot, with the reason", async () => {
    const power = vi.fn();
    const host = new RealHost({ allowReboot: false, powerCommand: power, updateLockFile: "/nonexistent/lock" });
    const { runtime } = fakeRuntime();
    expect(host.handle("reboot", {}, runtime)).toEqual({
      status: 400,
      body: { Data: null, Error: "Reboot is not allowed on this device: start flotilla-agent run with --allow-reboot" },
    });
    expect((await host.handle("shutdown", { force: true }, runtime)).status).toBe(400);
    expect(power).not.toHaveBeenCalled();
  });

  it("with --allow-reboot: answers first, reports Rebooting, then reboots the host", () => {
    vi.useFakeTimers();
    const power = vi.fn();
    const host = new RealHost({ allowReboot: true, powerCommand: power, updateLockFile: "/nonexistent/lock" });
    const { runtime, calls } = fakeRuntime();
    expect(host.handle("reboot", {}, runtime)).toEqual({ status: 200, body: { Data: "OK", Error: null } });
    expect(host.currentState().status).toBe("Rebooting");
    expect(calls).toEqual(["log:Rebooting", "report"]);
    expect(power).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1000);
    expect(power).toHaveBeenCalledWith("reboot");
  });

  it("restart and purge answer OK and say no containers run; the update lock file answers 423", async () => {
    const { runtime } = fakeRuntime();
    const free = new RealHost({ allowReboot: false, updateLockFile: "/nonexistent/lock" });
    expect(free.handle("restart", {}, runtime)).toMatchObject({
      status: 200,
      body: { Data: "OK", Error: null, message: expect.stringContaining("no containers") },
    });
    const held = new RealHost({ allowReboot: true, updateLockFile: import.meta.filename });
    expect((await held.handle("purge", {}, runtime)).status).toBe(423);
    expect((await held.handle("reboot", {}, runtime)).status).toBe(423);
    expect((await held.handle("restart", { force: true }, runtime)).status).toBe(200);
  });

  it("reports real metrics of this host", () => {
    const state = new RealHost({ allowReboot: false }).currentState();
    expect(state.memory_total).toBeGreaterThan(0);
    expect(state.cpu_usage).toBeGreaterThanOrEqual(0);
    expect(state.cpu_usage).toBeLessThanOrEqual(100);
    expect(state.storage_total).toBeGreaterThan(0);
    expect(state.supervisor_version).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
