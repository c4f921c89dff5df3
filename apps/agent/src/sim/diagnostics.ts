import { check, type DiagnosticsProbe } from "../diagnostics.ts";
import type { SimulatedDevice } from "./model.ts";

const percent = (part: number, whole: number) => `${Math.round((100 * part) / whole)}%`;

/**
 * A simulated device's checks and diagnostics, read off its model: the metrics it reports, and
 * the services it was told to stop (a stopped service fails the container check).
 */
export function simulatedProbe(model: SimulatedDevice, version: string): DiagnosticsProbe {
  return {
    checks: () => {
      const freeDisk = model.storageTotal - model.storageUsed;
      const freeMemory = model.memoryTotal - model.memoryUsed;
      const stopped = model.services.filter((service) => model.stoppedServices.has(service));
      return [
        check(
          "check_disk_space",
          freeDisk / model.storageTotal >= 0.1,
          `${percent(freeDisk, model.storageTotal)} free on /`,
        ),
        check(
          "check_memory",
          freeMemory / model.memoryTotal >= 0.1,
          `${percent(freeMemory, model.memoryTotal)} of memory available`,
        ),
        check("check_temperature", model.temp < 80, `CPU at ${Math.round(model.temp)} °C`),
        check("check_under_voltage", true, "power supply fine"),
        check("check_clock", true, `system clock says ${new Date().toISOString()}`),
        check("check_networking", true, `addresses ${model.ipAddress}`),
        check(
          "check_container_engine",
          stopped.length === 0,
          stopped.length === 0 ? `${model.services.length} service(s) running` : `stopped: ${stopped.join(", ")}`,
        ),
      ];
    },
    diagnose: () =>
      [
        `flotilla-agent ${version} (simulated device)`,
        `os: ${model.osVersion}`,
        `status: ${model.status}, release ${model.currentCommit?.slice(0, 7) ?? "none"}`,
        `cpu: ${Math.round(model.cpu)}% at ${Math.round(model.temp)} °C`,
        `memory: ${Math.round(model.memoryUsed)} MB used of ${model.memoryTotal} MB`,
        `disk /: ${Math.round(model.storageUsed)} MB used of ${model.storageTotal} MB`,
        `services: ${model.services.map((s) => `${s} (${model.stoppedServices.has(s) ? "stopped" : "running"})`).join(", ")}`,
      ].join("\n"),
  };
}
