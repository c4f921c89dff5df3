import { describe, expect, it } from "vitest";
import type { TargetState } from "../protocol/target-state.ts";
import { seeded } from "../testing/fake-clock.ts";
import { CPU, drift, failsInjectedRelease, SimulatedDevice, simulatedIpAddress, TEMP } from "./model.ts";

const target = (commit: string, services = ["main", "worker"]): TargetState => ({
  name: "dev",
  config: {},
  apps: {
    fleetuuid: {
      id: 1,
      name: "fleet",
      class: "fleet",
      releases: { [commit]: { id: 1, services: Object.fromEntries(services.map((s, i) => [s, { id: i + 1 }])) } },
    },
  },
});

const status = (device: SimulatedDevice) => {
  const r = device.report();
  return [r.provisioning_state, r.provisioning_progress, r.status, r.update_status, r.download_progress];
};

describe("metrics drift", () => {
  it("stays within bounds over a long run and wanders", () => {
    const random = seeded(11);
    let cpu = 50;
    let temp = 50;
    const seen = new Set<number>();
    for (let i = 0; i < 5000; i++) {
      cpu = drift(cpu, CPU, random);
      temp = drift(temp, TEMP, random);
      expect(cpu).toBeGreaterThanOrEqual(CPU.min);
      expect(cpu).toBeLessThanOrEqual(CPU.max);
      expect(temp).toBeGreaterThanOrEqual(TEMP.min);
      expect(temp).toBeLessThanOrEqual(TEMP.max);
      seen.add(Math.round(cpu / 10));
    }
    expect(seen.size).toBeGreaterThan(3);
  });

  it("a simulated device's reported metrics stay plausible", () => {
    const device = new SimulatedDevice({ uuid: "a".repeat(32), random: seeded(5), provisioned: true });
    for (let i = 0; i < 5000; i++) {
      device.tick();
      const r = device.report();
      expect(r.cpu_usage).toBeGreaterThanOrEqual(1);
      expect(r.cpu_usage).toBeLessThanOrEqual(100);
      expect(r.cpu_temp).toBeGreaterThanOrEqual(30);
      expect(r.cpu_temp).toBeLessThanOrEqual(85);
      expect(r.memory_usage).toBeLessThanOrEqual(r.memory_total as number);
      expect(r.memory_usage).toBeGreaterThan(0);
      expect(r.storage_usage).toBeLessThanOrEqual(r.storage_total as number);
    }
  });
});

describe("simulated device states", () => {
  it("provisions: configuring with progress → post-provisioning → operational", () => {
    const device = new SimulatedDevice({ uuid: "b".repeat(32), random: seeded(1) });
    const seen = [status(device)];
    for (let i = 0; i < 6; i++) {
      device.tick();
      seen.push(status(device));
    }
    expect(seen).toEqual([
      ["Configuring", 10, "Idle", "idle", null],
      ["Configuring", 35, "Idle", "idle", null],
      ["Configuring", 60, "Idle", "idle", null],
      ["Configuring", 85, "Idle", "idle", null],
      ["Post-Provisioning", 95, "Idle", "idle", null],
      ["", null, "Idle", "idle", null],
      ["", null, "Idle", "idle", null],
    ]);
    expect(device.phase).toBe("operational");
  });

  it("updates to a new target release with download progress, then runs it", () => {
    const device = new SimulatedDevice({ uuid: "c".repeat(32), random: seeded(2), provisioned: true });
    device.targetChanged(target("1111111aaaa"));
    const progress: (number | null | undefined)[] = [];
    const statuses: string[] = [];
    for (let i = 0; i < 12 && device.currentCommit === null; i++) {
      device.tick();
      const r = device.report();
      progress.push(r.download_progress);
      statuses.push(`${r.status}/${r.update_status}`);
    }
    expect(device.currentCommit).toBe("1111111aaaa");
    expect(statuses[0]).toBe("Downloading/downloading");
    expect(statuses).toContain("Installing/downloaded");
    expect(statuses).toContain("Starting/applying changes");
    expect(statuses.at(-1)).toBe("Idle/done");
    const numbers = progress.filter((p): p is number => typeof p === "number");
    expect(numbers[0]).toBe(0);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(numbers.at(-1)).toBe(100);
    expect(progress.at(-1)).toBeNull();
    const report = device.report();
    expect(report.apps?.fleetuuid?.release_uuid).toBe("1111111aaaa");
    expect(Object.keys(report.apps?.fleetuuid?.releases["1111111aaaa"]?.services ?? {})).toEqual(["main", "worker"]);
    expect(device.supervisorState()).toMatchObject({ commit: "1111111aaaa", update_pending: false });
  });

  it("starts over when the target changes while it downloads", () => {
    const device = new SimulatedDevice({ uuid: "c".repeat(32), random: seeded(2), provisioned: true });
    device.targetChanged(target("1111111aaaa"));
    device.tick();
    device.tick();
    expect(device.report().update_status).toBe("downloading");
    device.targetChanged(target("2222222bbbb"));
    const lines: string[] = [];
    for (let i = 0; i < 12 && device.currentCommit === null; i++) lines.push(...device.tick().map((l) => l.message));
    expect(device.currentCommit).toBe("2222222bbbb");
    expect(lines[0]).toBe("Downloading release 2222222");
    expect(lines).toContain("Release 2222222 is running");
  });

  it("holds a downloaded update while the update lock is held, until forced", () => {
    const device = new SimulatedDevice({
      uuid: "d".repeat(32),
      random: seeded(3),
      provisioned: true,
      updateLock: true,
    });
    device.targetChanged(target("2222222bbbb"));
    for (let i = 0; i < 20; i++) device.tick();
    expect(device.currentCommit).toBeNull();
    expect(device.report().update_status).toBe("downloaded");
    expect(device.supervisorState()).toMatchObject({ update_pending: true, update_downloaded: true });
    expect(device.busy).toBe(false);
    device.forceUpdate = true;
    for (let i = 0; i < 3; i++) device.tick();
    expect(device.currentCommit).toBe("2222222bbbb");
  });

  it("a variable holds or releases the update lock", () => {
    const device = new SimulatedDevice({ uuid: "9".repeat(32), random: seeded(6), provisioned: true });
    device.targetChanged({ config: { FLOTILLA_SIMULATOR_UPDATE_LOCK: "1" }, apps: {} });
    expect(device.updateLock).toBe(true);
    const withService = (value: string): TargetState => ({
      config: {},
      apps: {
        a: {
          releases: { c0ffee1: { services: { main: { environment: { FLOTILLA_SIMULATOR_UPDATE_LOCK: value } } } } },
        },
      },
    });
    device.targetChanged(withService("0"));
    expect(device.updateLock).toBe(false);
    device.targetChanged(withService("true"));
    expect(device.updateLock).toBe(true);
    device.targetChanged({ config: {}, apps: {} });
    expect(device.updateLock).toBe(true);
  });

  it("is silent while rebooting or off", () => {
    const device = new SimulatedDevice({ uuid: "e".repeat(32), random: seeded(4), provisioned: true });
    device.phase = "off";
    const before = device.report();
    expect(device.tick()).toEqual([]);
    expect(device.report()).toEqual(before);
  });

  it("applies variable changes: services log environment changes, boot configuration reboots", () => {
    const device = new SimulatedDevice({ uuid: "a".repeat(32), random: seeded(3), provisioned: true });
    const state = (config: Record<string, string>, environment: Record<string, string>): TargetState => ({
      config,
      apps: { a: { releases: { c0ffee1: { services: { main: { id: 7, environment }, worker: { id: 8 } } } } } },
    });
    // The first target state is what the device boots with.
    expect(device.targetChanged(state({ BALENA_SUPERVISOR_POLL_INTERVAL: "60000" }, { MODE: "eco" }))).toEqual({
      lines: [],
      reboot: false,
    });
    expect(device.targetChanged(state({ BALENA_SUPERVISOR_POLL_INTERVAL: "60000" }, { GREETING: "hi" }))).toEqual({
      lines: [
        { message: "Applied environment variable GREETING to main", service: "main" },
        { message: "Removed environment variable MODE from main", service: "main" },
        { message: "Restarted service main with its new environment", isSystem: true },
      ],
      reboot: false,
    });
    expect(
      device.targetChanged(
        state({ BALENA_SUPERVISOR_POLL_INTERVAL: "30000", BALENA_HOST_CONFIG_gpu_mem: "128" }, { GREETING: "hi" }),
      ),
    ).toEqual({
      lines: [
        { message: "Applied configuration variable BALENA_HOST_CONFIG_gpu_mem", isSystem: true },
        { message: "Applied configuration variable BALENA_SUPERVISOR_POLL_INTERVAL", isSystem: true },
        { message: "Rebooting to apply the boot configuration", isSystem: true },
      ],
      reboot: true,
    });
    // Nothing new: nothing to do.
    expect(
      device.targetChanged(
        state({ BALENA_SUPERVISOR_POLL_INTERVAL: "30000", BALENA_HOST_CONFIG_gpu_mem: "128" }, { GREETING: "hi" }),
      ),
    ).toEqual({ lines: [], reboot: false });
    // Removing a poll interval override needs no reboot.
    expect(device.targetChanged(state({ BALENA_HOST_CONFIG_gpu_mem: "128" }, { GREETING: "hi" })).reboot).toBe(false);
  });

  it("a new release starts its services with their environment without per-variable lines", () => {
    const device = new SimulatedDevice({ uuid: "b".repeat(32), random: seeded(5), provisioned: true });
    const state = (commit: string, value: string): TargetState => ({
      config: {},
      apps: { a: { releases: { [commit]: { services: { main: { environment: { MODE: value } } } } } } },
    });
    device.targetChanged(state("1111111", "a"));
    expect(device.targetChanged(state("2222222", "b")).lines).toEqual([]);
  });
});

describe("failure injection", () => {
  const run = (device: SimulatedDevice, ticks: number) => {
    for (let i = 0; i < ticks; i++) device.tick();
  };
  const serviceStatuses = (device: SimulatedDevice) =>
    Object.values(device.report().apps?.fleetuuid?.releases ?? {}).flatMap((release) =>
      Object.values(release.services ?? {}).map((service) => service.status),
    );

  it("chooses the same share of devices by uuid", () => {
    const uuids = Array.from({ length: 1000 }, (_, i) => i.toString(16).padStart(32, "0"));
    const failing = uuids.filter((uuid) => failsInjectedRelease(uuid, 0.5));
    expect(failing.length).toBeGreaterThan(420);
    expect(failing.length).toBeLessThan(580);
    expect(uuids.filter((uuid) => failsInjectedRelease(uuid, 0.5))).toEqual(failing);
    expect(uuids.filter((uuid) => failsInjectedRelease(uuid, 0))).toEqual([]);
    expect(uuids.filter((uuid) => failsInjectedRelease(uuid, 1))).toHaveLength(1000);
  });

  it("download: the update of the failing release aborts and stays aborted; another release installs", () => {
    const device = new SimulatedDevice({
      uuid: "c".repeat(32),
      random: seeded(3),
      provisioned: true,
      failRelease: { commit: "BAD0000", mode: "download" },
    });
    device.targetChanged(target("a".repeat(32)));
    run(device, 20);
    expect(device.currentCommit).toBe("a".repeat(32));
    device.targetChanged(target(`bad0000${"0".repeat(25)}`));
    run(device, 20);
    expect(device.currentCommit).toBe("a".repeat(32));
    expect(device.report().update_status).toBe("aborted");
    expect(serviceStatuses(device)).toEqual(["Download failed", "Download failed"]);
    // Rolled back: the previous release is what it runs, and it reports it running.
    device.targetChanged(target("a".repeat(32)));
    run(device, 2);
    expect(serviceStatuses(device)).toEqual(["Running", "Running"]);
  });

  it("crash-loop: the failing release installs and its services restart over and over", () => {
    const device = new SimulatedDevice({
      uuid: "d".repeat(32),
      random: seeded(4),
      provisioned: true,
      failRelease: { commit: "bad0000", mode: "crash-loop" },
    });
    device.targetChanged(target(`bad0000${"0".repeat(25)}`));
    run(device, 20);
    expect(device.currentCommit).toBe(`bad0000${"0".repeat(25)}`);
    expect(serviceStatuses(device)).toEqual(["Restarting", "Restarting"]);
    device.targetChanged(target("a".repeat(32)));
    run(device, 20);
    expect(serviceStatuses(device)).toEqual(["Running", "Running"]);
  });
});

describe("simulated addresses", () => {
  it("come from the uuid, so a second simulator's devices do not repeat the first one's", () => {
    const first = ["0a1b", "0a1c", "0a1d"].map((p) => new SimulatedDevice({ uuid: p.repeat(8), random: seeded(1) }));
    const second = ["7f00", "7f01", "7f02"].map((p) => new SimulatedDevice({ uuid: p.repeat(8), random: seeded(1) }));
    const addresses = [...first, ...second].map((device) => device.report().ip_address);
    expect(new Set(addresses).size).toBe(6);
    for (const address of addresses) expect(address).toMatch(/^10\.\d{1,3}\.\d{1,3}\.([1-9]\d{0,2})$/);
    // The same device keeps its address across restarts.
    expect(simulatedIpAddress("0a1b".repeat(8))).toBe(first[0]?.report().ip_address);
    // 1000 devices of one run are spread without repeats.
    const many = new Set(Array.from({ length: 1000 }, (_, i) => simulatedIpAddress(i.toString(16).padStart(32, "0"))));
    expect(many.size).toBeGreaterThan(990);
  });
});
