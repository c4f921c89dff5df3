import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { CurrentState } from "../protocol/state-report.ts";

type CpuTimes = { idle: number; total: number };

function cpuTimes(): CpuTimes {
  let idle = 0;
  let total = 0;
  for (const cpu of os.cpus()) {
    const t = cpu.times;
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
  }
  return { idle, total };
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/** The hottest thermal zone (°C), or null when the host has none (containers, VMs). */
export function readTemperature(root = "/sys/class/thermal"): number | null {
  let zones: string[];
  try {
    zones = fs.readdirSync(root).filter((name) => name.startsWith("thermal_zone"));
  } catch {
    return null;
  }
  let hottest: number | null = null;
  for (const zone of zones) {
    const milli = Number(readText(path.join(root, zone, "temp"))?.trim());
    if (Number.isFinite(milli) && milli > 0) hottest = Math.max(hottest ?? 0, Math.round(milli / 1000));
  }
  return hottest;
}

/**
 * Under-voltage where the host tells: the Raspberry Pi firmware's `get_throttled` (bit 0 = now,
 * bit 16 = since boot) or the `rpi_volt` hwmon alarm. Null when neither exists.
 */
export function readUndervoltage(): boolean | null {
  const throttled = readText("/sys/devices/platform/soc/soc:firmware/get_throttled");
  if (throttled !== null) return (Number.parseInt(throttled.trim(), 16) & 0x1) !== 0;
  try {
    for (const hwmon of fs.readdirSync("/sys/class/hwmon")) {
      if (readText(path.join("/sys/class/hwmon", hwmon, "name"))?.trim() !== "rpi_volt") continue;
      return readText(path.join("/sys/class/hwmon", hwmon, "in0_lcrit_alarm"))?.trim() === "1";
    }
  } catch {
    // no hwmon
  }
  return null;
}

/** `PRETTY_NAME` of /etc/os-release. */
export function readOsVersion(file = "/etc/os-release"): string | null {
  const text = readText(file);
  const match = text?.match(/^PRETTY_NAME="?([^"\n]*)"?$/m);
  return match?.[1] ?? null;
}

/** Non-internal addresses and their interfaces' MACs, space-separated as the protocol wants. */
export function readNetwork(): { ip_address: string; mac_address: string } {
  const ips: string[] = [];
  const macs = new Set<string>();
  for (const addresses of Object.values(os.networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.internal) continue;
      if (address.family === "IPv4" || !address.address.startsWith("fe80")) ips.push(address.address);
      if (address.mac && address.mac !== "00:00:00:00:00:00") macs.add(address.mac.toUpperCase());
    }
  }
  return { ip_address: ips.join(" "), mac_address: [...macs].join(" ") };
}

const MB = 1024 * 1024;

/** Storage of `/` in MB and the block device it is mounted from. */
export function readStorage(mount = "/"): {
  storage_usage: number | null;
  storage_total: number | null;
  storage_block_device: string | null;
} {
  let usage: number | null = null;
  let total: number | null = null;
  try {
    const stats = fs.statfsSync(mount);
    total = Math.round((stats.blocks * stats.bsize) / MB);
    usage = Math.round(((stats.blocks - stats.bfree) * stats.bsize) / MB);
  } catch {
    // statfs unsupported
  }
  const mounts = readText("/proc/mounts") ?? "";
  const device = mounts
    .split("\n")
    .map((line) => line.split(" "))
    .find((fields) => fields[1] === mount)?.[0];
  return {
    storage_usage: usage,
    storage_total: total,
    storage_block_device: device?.startsWith("/dev/") ? device : null,
  };
}

/** Real metrics of this host; CPU usage is measured between two calls (the first since start-up). */
export class HostMetrics {
  private last = cpuTimes();
  readonly osVersion = readOsVersion();

  cpuUsage(): number {
    const now = cpuTimes();
    const total = now.total - this.last.total;
    const idle = now.idle - this.last.idle;
    this.last = now;
    return total > 0 ? Math.max(0, Math.min(100, Math.round((100 * (total - idle)) / total))) : 0;
  }

  read(): CurrentState {
    const undervolted = readUndervoltage();
    const state: CurrentState = {
      cpu_usage: this.cpuUsage(),
      cpu_temp: readTemperature(),
      memory_usage: Math.round((os.totalmem() - os.freemem()) / MB),
      memory_total: Math.round(os.totalmem() / MB),
      ...readStorage(),
      ...readNetwork(),
      os_version: this.osVersion,
    };
    if (undervolted !== null) state.is_undervolted = undervolted;
    return state;
  }
}
