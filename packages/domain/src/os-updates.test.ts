import { describe, expect, it } from "vitest";
import {
  compareOsVersions,
  isEsrVersion,
  isSelectableSupervisorRelease,
  newerVersionsRefusal,
  type OsRelease,
  osUpdateCategory,
  osUpdateSummary,
  osUpdateTargets,
  parseOsVersion,
  supervisorUpdateBlocked,
} from "./os-updates.ts";

const catalogue: OsRelease[] = [
  { raw_version: "2.115.18", osType: "default" },
  { raw_version: "5.3.1", osType: "default" },
  { raw_version: "6.0.13", osType: "default" },
  { raw_version: "6.1.0", osType: "default" },
  { raw_version: "6.2.4", osType: "default" },
  { raw_version: "2024.10.2", osType: "esr", basedOnVersion: "5.3.1" },
  { raw_version: "2025.4.1", osType: "esr", basedOnVersion: "6.2.4" },
];
const device = (osVersion: string | null, extra: Partial<{ isOnline: boolean; deviceType: string }> = {}) => ({
  deviceType: "raspberrypi4-64",
  isOnline: true,
  osVersion,
  ...extra,
});
const category = (osVersion: string | null, target: string, extra = {}) =>
  osUpdateCategory(device(osVersion, extra), catalogue, target).category;

describe("parseOsVersion", () => {
  it("reads the version out of a device's os_version and a release's raw_version", () => {
    expect(parseOsVersion("balenaOS 6.1.0")?.version).toBe("6.1.0");
    expect(parseOsVersion("Resin OS 2.3.0+rev1")).toMatchObject({ major: 2, minor: 3, patch: 0, revision: 1 });
    expect(parseOsVersion("2.88.4+rev1.prod")).toMatchObject({ version: "2.88.4+rev1", variant: "prod" });
    expect(parseOsVersion("2024.10.2")?.major).toBe(2024);
    expect(parseOsVersion("balenaOS")).toBeUndefined();
    expect(parseOsVersion(null)).toBeUndefined();
  });

  it("orders versions with pre-releases before and revisions after", () => {
    const v = (text: string) => parseOsVersion(text) ?? raise(text);
    expect(compareOsVersions(v("6.2.4"), v("6.10.0"))).toBeLessThan(0);
    expect(compareOsVersions(v("6.2.4-beta.1"), v("6.2.4"))).toBeLessThan(0);
    expect(compareOsVersions(v("6.2.4+rev2"), v("6.2.4+rev1"))).toBeGreaterThan(0);
    expect(compareOsVersions(v("6.2.4"), v("balenaOS 6.2.4"))).toBe(0);
  });
});

describe("ESR", () => {
  it("counts a major above 2000 as ESR", () => {
    expect(isEsrVersion("balenaOS 2024.10.2")).toBe(true);
    expect(isEsrVersion("2000.1.0")).toBe(false);
    expect(isEsrVersion("6.1.0")).toBe(false);
    expect(isEsrVersion("nonsense")).toBe(false);
    expect(supervisorUpdateBlocked("balenaOS 2025.4.1")).toBe(true);
    expect(supervisorUpdateBlocked("balenaOS 6.1.0")).toBe(false);
  });
});

describe("osUpdateCategory (spec 2 §4)", () => {
  it("assigns each of the eight categories", () => {
    expect(category("balenaOS 6.1.0", "6.2.4", { isOnline: false })).toBe("offline");
    expect(category("balenaOS", "6.2.4")).toBe("not_supported");
    expect(category("balenaOS 6.1.0", "6.1.0")).toBe("up_to_date");
    expect(category("balenaOS 6.1.0", "9.9.9")).toBe("version_not_available");
    expect(category("balenaOS 6.1.0", "6.2.4")).toBe("updatable");
    expect(category("balenaOS 6.1.0", "2025.4.1")).toBe("updatable_with_switch_to_esr");
    expect(category("balenaOS 6.1.0", "2024.10.2")).toBe("downgrade_cannot_switch_to_esr");
    expect(category("balenaOS 2024.10.2", "6.2.4")).toBe("forbidden_switch_to_non_esr");
  });

  it("refuses downgrades, too old sources and variant switches with the rule's reason", () => {
    expect(osUpdateCategory(device("balenaOS 6.1.0"), catalogue, "5.3.1")).toMatchObject({
      category: "not_supported",
      reason: "OS downgrades are not allowed",
    });
    expect(osUpdateCategory(device("balenaOS 2.13.0"), catalogue, "6.2.4")).toMatchObject({
      category: "not_supported",
      reason: "Current OS version must be >= 2.14.0+rev1",
    });
    expect(
      osUpdateCategory(
        device("balenaOS 6.1.0+rev1.dev"),
        [{ raw_version: "6.2.4+rev1.prod", osType: "default" }],
        "6.2.4+rev1",
      ).reason,
    ).toBe("Updates cannot be performed between development and production balenaOS variants");
    // An ESR device moves on within ESR; backwards is a downgrade.
    expect(category("balenaOS 2024.10.2", "2025.4.1")).toBe("updatable");
    expect(category("balenaOS 2025.4.1", "2024.10.2")).toBe("not_supported");
    // Switching to an ESR built on the version the device runs is no update (balena-sdk agrees).
    expect(category("balenaOS 6.2.4", "2025.4.1")).toBe("not_supported");
  });

  it("is not supported for a device type without OS releases", () => {
    expect(osUpdateCategory(device("balenaOS 6.1.0"), [], "6.2.4")).toMatchObject({ category: "not_supported" });
  });

  it("marks the updates that need a takeover", () => {
    const orin = { deviceType: "jetson-orin-nano-devkit-nvme" };
    expect(osUpdateCategory(device("balenaOS 5.3.1", orin), catalogue, "6.2.4").takeover).toBe(true);
    expect(osUpdateCategory(device("balenaOS 6.0.13", orin), catalogue, "6.2.4").takeover).toBe(false);
    expect(osUpdateCategory(device("balenaOS 5.3.1"), catalogue, "6.2.4").takeover).toBe(false);
  });

  it("lists the targets newest first and sums the device up", () => {
    const targets = osUpdateTargets(device("balenaOS 6.1.0"), catalogue);
    expect(targets.map((t) => [t.target.raw_version, t.category])).toEqual([
      ["2025.4.1", "updatable_with_switch_to_esr"],
      ["2024.10.2", "downgrade_cannot_switch_to_esr"],
      ["6.2.4", "updatable"],
      ["6.1.0", "up_to_date"],
      ["6.0.13", "not_supported"],
      ["5.3.1", "not_supported"],
      ["2.115.18", "not_supported"],
    ]);
    expect(osUpdateSummary(device("balenaOS 6.1.0"), catalogue)).toBe("updatable");
    expect(osUpdateSummary(device("balenaOS 6.2.4"), catalogue.slice(0, 5))).toBe("up_to_date");
    expect(osUpdateSummary(device("balenaOS 6.2.4", { isOnline: false }), catalogue)).toBe("offline");
    // Below the minimum source version every newer version is refused: not supported, with the rule.
    expect(osUpdateSummary(device("balenaOS 2.12.0"), catalogue)).toBe("not_supported");
    expect(newerVersionsRefusal(device("balenaOS 2.12.0"), catalogue)).toBe(
      "Current OS version must be >= 2.14.0+rev1",
    );
    expect(newerVersionsRefusal(device("balenaOS 6.1.0"), catalogue)).toBeUndefined();
    // On the newest version, an ESR built on it is no reason: up to date.
    expect(newerVersionsRefusal(device("balenaOS 6.2.4"), catalogue)).toBeUndefined();
    expect(osUpdateSummary(device("balenaOS 6.2.4"), catalogue)).toBe("up_to_date");
  });
});

describe("supervisor releases (spec 2 §7)", () => {
  const release = { status: "success", is_final: true, is_invalidated: false, raw_version: "16.8.2" };
  it("keeps only successful, final, valid releases that are not 0.0.0", () => {
    expect(isSelectableSupervisorRelease(release)).toBe(true);
    expect(isSelectableSupervisorRelease({ ...release, raw_version: "0.0.0" })).toBe(false);
    expect(isSelectableSupervisorRelease({ ...release, status: "failed" })).toBe(false);
    expect(isSelectableSupervisorRelease({ ...release, is_final: false })).toBe(false);
    expect(isSelectableSupervisorRelease({ ...release, is_invalidated: true })).toBe(false);
  });
});

function raise(text: string): never {
  throw new Error(`unparseable ${text}`);
}
