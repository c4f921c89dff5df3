import { describe, expect, it } from "vitest";
import { hostOsAccessSupported, terminalSize } from "./terminal.ts";

describe("web terminal rules", () => {
  it("offers host OS access from balenaOS 2.7.5 on, never for an unknown version", () => {
    expect(hostOsAccessSupported("balenaOS 6.1.0")).toBe(true);
    expect(hostOsAccessSupported("balenaOS 2.7.5")).toBe(true);
    expect(hostOsAccessSupported("Resin OS 2.7.4")).toBe(false);
    expect(hostOsAccessSupported("Resin OS 1.26.0")).toBe(false);
    expect(hostOsAccessSupported("balenaOS 2.10.0+rev1")).toBe(true);
    expect(hostOsAccessSupported(null)).toBe(false);
    expect(hostOsAccessSupported("unknown")).toBe(false);
  });

  it("keeps terminal sizes whole and within bounds", () => {
    expect(terminalSize(120, 1000, 80)).toBe(120);
    expect(terminalSize(0, 1000, 80)).toBe(80);
    expect(terminalSize(1001, 1000, 80)).toBe(80);
    expect(terminalSize(12.5, 1000, 80)).toBe(80);
    expect(terminalSize("120", 1000, 80)).toBe(80);
  });
});
