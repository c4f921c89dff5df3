import os from "node:os";
import type { CheckResult } from "@flotilla/domain";
import { check, type DiagnosticsProbe } from "../diagnostics.ts";
import { readNetwork, readOsVersion, readStorage, readTemperature, readUndervoltage } from "./metrics.ts";

/** Below this share of free disk or memory a check fails. */
const LOW_SHARE = 0.1;
/** Above this CPU temperature (°C) the temperature check fails. */
const HOT_CELSIUS = 80;

const percent = (part: number, whole: number) => `${Math.round((100 * part) / whole)}%`;

/** This machine's health checks: disk, memory, temperature, power, clock, network and services. */
export function realChecks(): CheckResult[] {
  const storage = readStorage();
  const results: CheckResult[] = [];
  if (storage.storage_total && storage.storage_usage !== null) {
    const free = storage.storage_total - storage.storage_usage;
    results.push(
      check(
        "check_disk_space",
        free / storage.storage_total >= LOW_SHARE,
        `${percent(free, storage.storage_total)} free on /`,
      ),
    );
  } else {
    results.push(check("check_disk_space", false, "the free space of / cannot be read"));
  }
  const total = os.totalmem();
  const available = os.freemem();
  results.push(
    check("check_memory", available / total >= LOW_SHARE, `${percent(available, total)} of memory available`),
  );
  const temperature = readTemperature();
  results.push(
    temperature === null
      ? check("check_temperature", true, "no temperature sensor")
      : check("check_temperature", temperature < HOT_CELSIUS, `CPU at ${temperature} °C`),
  );
  const undervolted = readUndervoltage();
  results.push(
    check(
      "check_under_voltage",
      undervolted !== true,
      undervolted === null ? "no power sensor" : undervolted ? "under-voltage detected" : "power supply fine",
    ),
  );
  // A clock before this agent was written is a clock that was never set.
  const year = new Date().getUTCFullYear();
  results.push(check("check_clock", year >= 2025, `system clock says ${new Date().toISOString()}`));
  const { ip_address } = readNetwork();
  results.push(
    check("check_networking", ip_address !== "", ip_address ? `addresses ${ip_address}` : "no network address"),
  );
  results.push(check("check_container_engine", true, "this agent runs no containers: nothing to check"));
  return results;
}

/** What a person would look at first on this machine, as text. */
export function realDiagnose(version: string): string {
  const storage = readStorage();
  const [one, five, fifteen] = os.loadavg().map((load) => load.toFixed(2));
  return [
    `flotilla-agent ${version}`,
    `os: ${readOsVersion() ?? "unknown"} (${os.type()} ${os.release()} ${os.arch()})`,
    `host: ${os.hostname()}, up ${Math.round(os.uptime() / 60)} min`,
    `load: ${one} ${five} ${fifteen} on ${os.cpus().length} CPU(s)`,
    `memory: ${Math.round(os.freemem() / 1048576)} MB free of ${Math.round(os.totalmem() / 1048576)} MB`,
    `disk /: ${storage.storage_usage ?? "?"} MB used of ${storage.storage_total ?? "?"} MB (${storage.storage_block_device ?? "unknown device"})`,
    `network: ${readNetwork().ip_address || "no address"}`,
    `temperature: ${readTemperature() ?? "no sensor"}`,
  ].join("\n");
}

export const realProbe = (version: string): DiagnosticsProbe => ({
  checks: realChecks,
  diagnose: () => realDiagnose(version),
});
