import { describe, expect, it } from "vitest";
import type { DeviceRuntime } from "../device.ts";
import type { TargetState } from "../protocol/target-state.ts";
import { FakeClock, seeded } from "../testing/fake-clock.ts";
import { SimulatedHost } from "./host.ts";
import { SimulatedDevice } from "./model.ts";

/** The runtime as the host sees it: what it was asked to do, in order. */
function fakeRuntime() {
  const calls: string[] = [];
  const logs: string[] = [];
  let online = true;
  const runtime = {
    get online() {
      return online;
    },
    log: (line: { message: string }) => logs.push(line.message),
    reportNow: () => calls.push("report"),
    pollNow: () => calls.push("poll"),
    stop: () => {
      online = false;
      calls.push("stop");
    },
    start: () => {
      online = true;
      calls.push("start");
    },
    cloudlink: { connected: true, drop: () => calls.push("drop") },
  };
  return { runtime: runtime as unknown as DeviceRuntime, calls, logs, isOnline: () => online };
}

function setUp(options: { updateLock?: boolean } = {}) {
  const clock = new FakeClock();
  const model = new SimulatedDevice({ uuid: "f".repeat(32), random: seeded(9), provisioned: true, ...options });
  const host = new SimulatedHost({ model, clock, rebootMs: () => 6000 });
  return { clock, model, host, ...fakeRuntime() };
}

describe("simulated device actions", () => {
  it("blink logs Blinking and answers OK", () => {
    const { host, runtime, logs } = setUp();
    expect(host.handle("blink", {}, runtime)).toEqual({ status: 200, body: { Data: "OK", Error: null } });
    expect(logs).toEqual(["Blinking"]);
  });

  it("reboot: answers, reports Rebooting, goes offline for a while, comes back Idle", () => {
    const { host, runtime, calls, clock, model, isOnline } = setUp();
    expect(host.handle("reboot", {}, runtime).status).toBe(200);
    expect(model.report().status).toBe("Rebooting");
    clock.advance(100);
    expect(calls).toEqual(["report"]);
    clock.advance(400);
    expect(calls).toEqual(["report", "stop"]);
    expect(isOnline()).toBe(false);
    expect(model.phase).toBe("rebooting");
    clock.advance(5000);
    expect(isOnline()).toBe(false);
    clock.advance(1500);
    expect(calls).toEqual(["report", "stop", "start"]);
    expect(isOnline()).toBe(true);
    expect(model.phase).toBe("operational");
    expect(model.report().status).toBe("Idle");
  });

  it("shutdown: reports Shutting down and stays offline", () => {
    const { host, runtime, calls, clock, model } = setUp();
    expect(host.handle("shutdown", {}, runtime).status).toBe(200);
    clock.advance(600_000);
    expect(calls).toEqual(["report", "stop"]);
    expect(model.phase).toBe("off");
    expect(model.report().status).toBe("Shutting down");
  });

  it("an update lock answers 423 unless forced", () => {
    const { host, runtime, calls } = setUp({ updateLock: true });
    for (const action of ["reboot", "shutdown", "restart", "purge", "update", "stop-service"]) {
      expect(host.handle(action, {}, runtime)).toEqual({
        status: 423,
        body: { Data: null, Error: "Updates are locked" },
      });
    }
    expect(host.handle("blink", {}, runtime).status).toBe(200);
    expect(host.handle("update", { force: true }, runtime).status).toBe(200);
    expect(calls).toEqual(["poll"]);
  });

  it("answers device with the supervisor state and refuses what it does not know", () => {
    const { host, runtime } = setUp();
    expect(host.handle("device", {}, runtime)).toMatchObject({
      status: 200,
      body: { api_port: 48484, status: "Idle", update_pending: false, supervisor_version: expect.any(String) },
    });
    expect(host.handle("fly", {}, runtime)).toEqual({
      status: 400,
      body: { Data: null, Error: "Unsupported action: fly" },
    });
    expect(host.handle("stop-service", { serviceName: "nope" }, runtime).status).toBe(404);
  });

  it("stop-service marks the service exited until started again", () => {
    const { host, runtime, model } = setUp();
    model.targetChanged({ apps: { app: { releases: { abc1234: { services: { main: {} } } } } } });
    for (let i = 0; i < 20 && model.currentCommit === null; i++) model.tick();
    expect(host.handle("stop-service", { serviceName: "main" }, runtime).status).toBe(200);
    expect(model.report().apps?.app?.releases.abc1234?.services.main?.status).toBe("exited");
    expect(host.handle("start-service", { serviceName: "main" }, runtime).status).toBe(200);
    expect(model.report().apps?.app?.releases.abc1234?.services.main?.status).toBe("Running");
  });

  it("service controls may name the image, as balena-sdk's startService/stopService do", () => {
    const { host, runtime, model } = setUp();
    model.targetChanged({
      apps: { app: { releases: { abc1234: { services: { main: { image_id: 11 }, worker: { image_id: 12 } } } } } },
    });
    for (let i = 0; i < 20 && model.currentCommit === null; i++) model.tick();
    expect(host.handle("stop-service", { imageId: 12 }, runtime).status).toBe(200);
    const services = model.report().apps?.app?.releases.abc1234?.services;
    expect([services?.main?.status, services?.worker?.status]).toEqual(["Running", "exited"]);
    expect(host.handle("restart-service", { imageId: 99 }, runtime).status).toBe(404);
  });

  it("logs applied variables with the service's id and reboots for boot configuration", () => {
    const { host, runtime, logs, calls, clock, model } = setUp();
    const state = (gpu: string, greeting: string): TargetState => ({
      config: { BALENA_HOST_CONFIG_gpu_mem: gpu },
      apps: { app: { releases: { abc1234: { services: { main: { id: 4, environment: { GREETING: greeting } } } } } } },
    });
    host.targetChanged(state("64", "hi"), runtime);
    expect(logs).toEqual([]);
    host.targetChanged(state("64", "hello"), runtime);
    expect(logs).toEqual([
      "Applied environment variable GREETING to main",
      "Restarted service main with its new environment",
    ]);
    expect(calls).toEqual([]);
    host.targetChanged(state("128", "hello"), runtime);
    expect(logs.slice(2)).toEqual([
      "Applied configuration variable BALENA_HOST_CONFIG_gpu_mem",
      "Rebooting to apply the boot configuration",
      "Rebooting",
    ]);
    expect(model.report().status).toBe("Rebooting");
    clock.advance(7000);
    expect(calls).toEqual(["report", "stop", "start"]);
    expect(model.phase).toBe("operational");
  });
});

describe("simulated device pace", () => {
  it("reports every busy interval while provisioning, and at the regular interval once operational", () => {
    const clock = new FakeClock();
    const model = new SimulatedDevice({ uuid: "e".repeat(32), random: seeded(3) });
    expect(new SimulatedHost({ model, clock }).nextReportInMs(10_000)).toBe(3000);
    const host = new SimulatedHost({ model, clock, busyIntervalMs: 1000 });
    expect(host.nextReportInMs(10_000)).toBe(1000);
    while (model.busy) model.tick();
    expect(host.nextReportInMs(10_000)).toBe(10_000);
  });
});
