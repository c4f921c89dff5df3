import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call } from "./support/devices.ts";

/**
 * Device types as balena's model has them (issue compat-3): a `logo` (an SVG data URL) and the
 * contract's assets (`assets.logo`) and aliases, read by balena-sdk's deviceType calls.
 */
let t: TestApp;
let sdk: BalenaSDK;

beforeAll(async () => {
  t = await createTestApp();
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
});
afterAll(() => t.close());

type Contract = { slug: string; aliases: string[]; assets: { logo: { url: string; name: string } } };

describe("device type logos and contract assets", () => {
  it("deviceType.getBySlugOrName answers the logo, and the contract's logo asset is the same image", async () => {
    const type = await sdk.models.deviceType.getBySlugOrName("Raspberry Pi 2", {
      $select: ["slug", "logo", "contract"],
    });
    expect(type.slug).toBe("raspberry-pi2");
    expect(type.logo).toMatch(/^data:image\/svg\+xml;base64,[A-Za-z0-9+/]+=*$/);
    const contract = type.contract as unknown as Contract;
    expect(contract.assets.logo).toEqual({ url: type.logo, name: "logo" });
    expect(contract.aliases).toEqual(expect.arrayContaining(["raspberry-pi2", "raspberrypi2"]));
    const svg = Buffer.from(String(type.logo).split(",")[1] ?? "", "base64").toString("utf8");
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>$/);
    expect(svg).toContain(">Pi</text>");
  });

  it("every device type has one (deviceType.getAll), and the instructions still come from the contract", async () => {
    const types = await sdk.models.deviceType.getAll({ $select: ["slug", "logo", "contract"] });
    expect(types.length).toBeGreaterThan(10);
    for (const type of types) {
      expect(type.logo, type.slug).toMatch(/^data:image\/svg\+xml;base64,/);
      expect((type.contract as unknown as Contract).assets.logo.url, type.slug).toBe(type.logo);
    }
    expect(await sdk.models.deviceType.getInstallMethod("raspberrypi4-64")).toBe("externalBoot");
    const instructions = await sdk.models.deviceType.getInstructions("raspberrypi4-64");
    expect(JSON.stringify(instructions)).toContain("SD");
  });

  it("/device-types/v1 names it as balena's device-type JSON does (logoUrl)", async () => {
    const listed = await call(t, "GET", "/device-types/v1/raspberrypi4-64", undefined);
    expect(listed.json.logoUrl).toMatch(/^data:image\/svg\+xml;base64,/);
  });
});
