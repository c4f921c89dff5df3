import { getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call } from "./support/devices.ts";

/**
 * balena's public configuration (issue compat-3): `GET /config` carries balena's keys, and a
 * device type's configuration variable schema lists its `BALENA_HOST_CONFIG_*` variables.
 */
let t: TestApp;
const anonymous = () => getSdk({ apiUrl: t.url, dataDirectory: false });

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("GET /config", () => {
  it("config.getAll answers balena's keys (the SDK drops deviceTypes)", async () => {
    const config = (await anonymous().models.config.getAll()) as unknown as Record<string, unknown>;
    expect(config).toMatchObject({
      deployment: null,
      deviceUrlsBase: t.config.deviceUrlsBaseDomain,
      adminUrl: t.config.publicUrl,
      gitServerUrl: "",
      mixpanelToken: "",
      intercomAppId: "",
      recurlyPublicKey: "",
      stripePublicKey: "",
      freezeBillingVersions: [],
      signupCodeRequired: false,
      supportedSocialProviders: [],
    });
    expect(config.DEVICE_ONLINE_ICON).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(config.DEVICE_OFFLINE_ICON).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(config).not.toHaveProperty("deviceTypes");
  });

  it("carries the device types for clients that read them from /config, as balena-cli's raw request would", async () => {
    const raw = await call(t, "GET", "/config", undefined);
    expect(raw.status).toBe(200);
    const types = raw.json.deviceTypes as { slug: string; arch: string }[];
    expect(types.find((type) => type.slug === "raspberrypi4-64")).toMatchObject({ arch: "aarch64" });
    const listed = await call(t, "GET", "/device-types/v1", undefined);
    expect(types).toEqual(listed.json);
  });
});

describe("config.getConfigVarSchema(deviceType)", () => {
  it("lists a Raspberry Pi's BALENA_HOST_CONFIG_* variables, hdmi_mode among them", async () => {
    const schema = await anonymous().models.config.getConfigVarSchema("raspberry-pi");
    const properties = schema.configVarSchema.properties as Record<string, Record<string, unknown>>;
    expect(properties.BALENA_SUPERVISOR_HARDWARE_METRICS).toBeDefined();
    for (const name of ["hdmi_mode", "hdmi_group", "hdmi_cvt", "hdmi_force_hotplug", "display_rotate", "gpio"]) {
      expect(properties[`BALENA_HOST_CONFIG_${name}`], name).toMatchObject({ will_reboot: true });
    }
    expect(properties.BALENA_HOST_CONFIG_hdmi_mode).toMatchObject({ type: "integer" });
    // One HDMI port on the first Raspberry Pi; a second port's variables on a Raspberry Pi 4.
    expect(properties["BALENA_HOST_CONFIG_hdmi_mode:1"]).toBeUndefined();
    const pi4 = await anonymous().models.config.getConfigVarSchema("raspberrypi4-64");
    expect(pi4.configVarSchema.properties).toHaveProperty(["BALENA_HOST_CONFIG_hdmi_mode:1"]);
  });

  it("leaves them out without a device type, and for one without them", async () => {
    const common = await anonymous().models.config.getConfigVarSchema();
    expect(common.configVarSchema.properties).not.toHaveProperty("BALENA_HOST_CONFIG_hdmi_mode");
    const nuc = await anonymous().models.config.getConfigVarSchema("intel-nuc");
    expect(nuc.configVarSchema.properties).not.toHaveProperty("BALENA_HOST_CONFIG_hdmi_mode");
  });

  it("checks a written hdmi_mode against the schema (an integer of 1 or more)", async () => {
    const owner = await t.factories.user();
    const org = await t.factories.organization({ admins: [owner.user] });
    const fleet = await t.factories.fleet(org, { name: "hdmi-fleet" });
    const sdk = anonymous();
    await sdk.auth.loginWithToken(owner.token);
    await sdk.models.application.configVar.set(fleet.id, "BALENA_HOST_CONFIG_hdmi_mode", "82");
    expect(await sdk.models.application.configVar.get(fleet.id, "BALENA_HOST_CONFIG_hdmi_mode")).toBe("82");
    await expect(sdk.models.application.configVar.set(fleet.id, "BALENA_HOST_CONFIG_hdmi_group", "7")).rejects.toThrow(
      "The value must be at most 2",
    );
  });
});
