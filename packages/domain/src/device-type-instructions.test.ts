import { describe, expect, it } from "vitest";
import { deviceTypeInstructions, fillTemplate, installMethod } from "./device-type-instructions.ts";

/** A contract as migration 0019 makes them (spec 2 §7 "Device type instructions load per contract"). */
const contract = (name: string, media: Record<string, unknown>, partials: Record<string, string[]>) => ({
  slug: "board",
  name,
  data: { media },
  partials,
});

describe("device type instructions from the contract", () => {
  it("finds balena's install method", () => {
    expect(installMethod({ data: { media: { defaultBoot: "sdcard" } } })).toBe("externalBoot");
    expect(installMethod({ data: { media: { defaultBoot: "internal" } } })).toBe("externalFlash");
    expect(installMethod({ data: { media: { defaultBoot: "image" } } })).toBe("image");
    expect(installMethod({ data: { flashProtocol: "RPIBOOT" } })).toBe("internalFlash");
    expect(installMethod({ data: {} })).toBeUndefined();
    expect(installMethod(null)).toBeUndefined();
  });

  it("fills the host OS steps with the device type's own partials, as text", () => {
    const pi = contract("Raspberry Pi 4", { defaultBoot: "sdcard" }, { bootDevice: ["Connect power to the {{name}}"] });
    expect(deviceTypeInstructions(pi)).toEqual([
      "Insert the SD card to the host machine.",
      "Write the balenaOS file you downloaded to the SD card. We recommend using Etcher.",
      "Wait for writing of balenaOS to complete.",
      "Remove the SD card from the host machine.",
      "Insert the freshly flashed SD card into the Raspberry Pi 4.",
      "Connect power to the Raspberry Pi 4 to boot the device.",
    ]);
    const nuc = contract(
      "Intel NUC",
      { defaultBoot: "internal", altBoot: ["usb_mass_storage"] },
      {
        instructions: ["Flash the downloaded image to a USB key."],
        bootDeviceExternal: ["Boot the {{name}} from the USB key."],
        flashIndicator: ["the device has powered off"],
        bootDevice: ["Connect power to the {{name}}"],
      },
    );
    const steps = deviceTypeInstructions(nuc);
    expect(steps[0]).toBe("Flash the downloaded image to a USB key.");
    expect(steps).toContain("Insert the USB key to the host machine.");
    expect(steps).toContain("Boot the Intel NUC from the USB key.");
    expect(steps).toContain(
      "Wait for the Intel NUC to finish flashing and shutdown. Please wait until the device has powered off.",
    );
    expect(deviceTypeInstructions(contract("x", {}, {}))).toEqual([]);
  });

  it("never evaluates what a template says", () => {
    expect(fillTemplate("{{constructor.constructor}}", {})).toBe("");
    expect(fillTemplate("{{constructor}}{{__proto__}}", {})).toBe("");
    expect(fillTemplate("{{#each list}}<{{{this}}}>{{/each}}", { list: ["a", "b"] })).toBe("<a><b>");
    expect(fillTemplate("{{#if no}}x{{/if}}y", {})).toBe("y");
  });
});
