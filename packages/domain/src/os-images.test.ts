import { describe, expect, it } from "vitest";
import { osImageFileName, wifiPassphraseProblem, wifiSsidProblem } from "./os-images.ts";

describe("Wi-Fi settings of a balenaOS device", () => {
  it("takes network names of 1 to 32 bytes without control characters", () => {
    expect(wifiSsidProblem("Workshop 5G")).toBeUndefined();
    expect(wifiSsidProblem("é".repeat(16))).toBeUndefined();
    expect(wifiSsidProblem("é".repeat(17))).toBe("must be at most 32 bytes long");
    expect(wifiSsidProblem("")).toBe("is required for a Wi-Fi network");
    expect(wifiSsidProblem("a\nb")).toBe("must not contain line breaks or control characters");
  });

  it("takes no passphrase (open), 8 to 63 printable characters, or a 64-digit hex key", () => {
    expect(wifiPassphraseProblem("")).toBeUndefined();
    expect(wifiPassphraseProblem("correct horse")).toBeUndefined();
    expect(wifiPassphraseProblem("a".repeat(64).replace(/a/g, "f"))).toBeUndefined();
    expect(wifiPassphraseProblem("short")).toBe("must be 8 to 63 characters (WPA)");
    expect(wifiPassphraseProblem("x".repeat(64))).toBe("must be 8 to 63 characters (WPA)");
    expect(wifiPassphraseProblem("pass\nword1")).toBe("must be printable ASCII characters");
  });
});

describe("balenaOS image file names", () => {
  it("names the device type and version, and the fleet and edition of a configured image", () => {
    expect(osImageFileName("raspberrypi4-64", "6.2.4")).toBe("balenaos-raspberrypi4-64-6.2.4.img");
    expect(osImageFileName("intel-nuc", "6.0.13+rev1", { fleet: "Kiosks / Lobby", developmentMode: true })).toBe(
      "balenaos-Kiosks_Lobby-intel-nuc-6.0.13+rev1-dev.img",
    );
  });
});
