import { describe, expect, it } from "vitest";
import { controlDisabled, serviceErrorText, serviceStatusColour, showsContainerControls } from "./services-card.tsx";

describe("container controls (spec 2 §4)", () => {
  it("disables start while running, stop when exited or stopped, restart when exited", () => {
    expect(["start", "stop", "restart"].map((c) => controlDisabled(c as "start", "Running"))).toEqual([
      true,
      false,
      false,
    ]);
    expect(["start", "stop", "restart"].map((c) => controlDisabled(c as "start", "exited"))).toEqual([
      false,
      true,
      true,
    ]);
    expect(["start", "stop", "restart"].map((c) => controlDisabled(c as "start", "Stopped"))).toEqual([
      false,
      true,
      false,
    ]);
  });

  it("colours running and idle green, stopped red, the rest blue", () => {
    expect(["Running", "Idle", "Stopped", "exited", "Downloading", "Installing"].map(serviceStatusColour)).toEqual([
      "success",
      "success",
      "error",
      "error",
      "info",
      "info",
    ]);
  });

  it("offers the controls from supervisor 7, or for several services", () => {
    expect(showsContainerControls("16.7.0", 1)).toBe(true);
    expect(showsContainerControls("6.6.0", 1)).toBe(false);
    expect(showsContainerControls("6.6.0", 2)).toBe(true);
    expect(showsContainerControls(null, 1)).toBe(false);
  });
});

describe("service control errors (spec 2 §8)", () => {
  it("names the service the device no longer runs, and keeps other errors as they are", () => {
    expect(serviceErrorText(new Error("Service not found: worker"), "worker")).toBe("Service not found: worker");
    expect(serviceErrorText(new Error("Image not found: 42"), "worker")).toContain("Image not found: 42");
  });
});
