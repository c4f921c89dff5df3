import { describe, expect, it } from "vitest";
import {
  balenaOsOptions,
  configureCommand,
  DEFAULT_BALENAOS_SETTINGS,
  defaultOsVersion,
  imageOf,
  networkProblems,
  sortedOsVersions,
} from "./balenaos.ts";

const catalogue = [
  { raw_version: "6.1.0", osType: "default" },
  { raw_version: "2025.4.1", osType: "esr" },
  { raw_version: "6.2.4", osType: "default" },
  { raw_version: "5.3.1", osType: "default" },
];

describe("the add-device dialog's balenaOS choice", () => {
  it("lists the catalogue's versions newest first", () => {
    expect(sortedOsVersions(catalogue).map((release) => release.raw_version)).toEqual([
      "2025.4.1",
      "6.2.4",
      "6.1.0",
      "5.3.1",
    ]);
  });

  it("offers first the newest version this server has the image of, else the newest of the default line", () => {
    expect(defaultOsVersion(catalogue, [{ version: "6.1.0", size: 1 }])).toBe("6.1.0");
    expect(defaultOsVersion(catalogue, [])).toBe("6.2.4");
    expect(defaultOsVersion([], [])).toBe("");
    // balena's spellings of one version find the image.
    expect(imageOf([{ version: "6.0.13+rev1", size: 5 }], "v6.0.13+rev1.prod")).toEqual({
      version: "6.0.13+rev1",
      size: 5,
    });
  });

  it("checks the Wi-Fi settings only for Wi-Fi, and sends them only then", () => {
    const ethernet = { ...DEFAULT_BALENAOS_SETTINGS, version: "6.2.4", wifiSsid: "ignored" };
    expect(networkProblems(ethernet)).toEqual({});
    expect(balenaOsOptions(ethernet)).toEqual({ version: "6.2.4", developmentMode: false, network: "ethernet" });
    const wifi = { ...ethernet, network: "wifi" as const, wifiSsid: "", wifiKey: "short" };
    expect(networkProblems(wifi)).toEqual({
      wifiSsid: "is required for a Wi-Fi network",
      wifiKey: "must be 8 to 63 characters (WPA)",
    });
    const open = { ...wifi, wifiSsid: "Cafe", wifiKey: "" };
    expect(networkProblems(open)).toEqual({});
    expect(balenaOsOptions(open)).toEqual({
      version: "6.2.4",
      developmentMode: false,
      network: "wifi",
      wifiSsid: "Cafe",
    });
  });

  it("shows the balena-cli line that writes config.json into an image", () => {
    expect(configureCommand("balenaos-raspberrypi4-64-6.2.4.img")).toBe(
      "balena os configure balenaos-raspberrypi4-64-6.2.4.img --config config.json",
    );
  });
});
