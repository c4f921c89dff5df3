import { describe, expect, it, vi } from "vitest";
import type { Sdk } from "../../lib/sdk.ts";
import en from "../../locales/en.json";
import { type DeviceType, latestHostOsRelease } from "../fleets/data.ts";
import { detectedDeviceType } from "./add-device-common.ts";
import { startOsUpdate } from "./os-updates.tsx";

describe("add-device dialog (spec 2 §7, §8)", () => {
  const types = [{ slug: "raspberrypi4-64" }, { slug: "intel-nuc" }];

  it("starts with the fleet's device type, or says it could not detect one", () => {
    expect(detectedDeviceType(undefined, "intel-nuc")).toBeUndefined();
    expect(detectedDeviceType(types, "intel-nuc")).toEqual({ type: { slug: "intel-nuc" } });
    expect(detectedDeviceType(types, "no-such-board")).toEqual({ error: "errors.could_not_detect_device_type" });
    expect(detectedDeviceType(types, undefined)).toEqual({ error: "errors.could_not_detect_device_type" });
    expect(en.errors.could_not_detect_device_type).toBe("Could not detect the device type.");
  });

  it("names the latest successful release of the default host app, not the ESR one", () => {
    const type: DeviceType = {
      id: 1,
      slug: "raspberrypi4-64",
      name: "Raspberry Pi 4",
      contract: null,
      is_of__cpu_architecture: [{ slug: "aarch64" }],
      is_default_for__application: [
        {
          id: 7,
          application_tag: [{ tag_key: "release-policy", value: "esr" }],
          owns__release: [{ id: 70, raw_version: "2025.4.1" }],
        },
        { id: 8, application_tag: [], owns__release: [{ id: 80, raw_version: "6.2.4" }] },
      ],
    };
    expect(latestHostOsRelease(type)).toEqual({ id: 80, raw_version: "6.2.4", app: 8 });
    expect(latestHostOsRelease({ ...type, is_default_for__application: [] })).toBeUndefined();
  });
});

describe("starting an OS update (spec 2 §7 Devices)", () => {
  it("sends the uuid, the target version string and detached mode (the v2 action), and needs 'triggered'", async () => {
    const send = vi.fn(async (_options: unknown) => ({ body: { status: "triggered" } }));
    const sdk = { request: { send } } as unknown as Sdk;
    await startOsUpdate(sdk, "https://api.example", "abc123", "6.2.4", "Cannot start the update process");
    expect(send).toHaveBeenCalledWith({
      method: "POST",
      url: "/v2/abc123/resinhup",
      baseUrl: "https://api.example",
      body: { parameters: { target_version: "6.2.4" } },
    });
    send.mockResolvedValueOnce({ body: { status: "rejected" } });
    await expect(
      startOsUpdate(sdk, "https://api.example", "abc123", "6.2.4", "Cannot start the update process"),
    ).rejects.toThrow("Cannot start the update process");
  });
});
