import { APP_VERSION, deviceTypeInstructions } from "@flotilla/domain";
import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Device types and configuration as balena-cli and balena-sdk use them (issue #22,
 * docs/balena-cli.md): balena's catalogue slugs and aliases, the contracts' install instructions,
 * `/device-types/v1`, download sizes and `/download` (the agent package), `os.getConfig`, and
 * what may be read without a token.
 */
let t: TestApp;
let sdk: BalenaSDK;
let guestSdk: BalenaSDK;
let token: string;
let fleet: Awaited<ReturnType<TestApp["factories"]["fleet"]>>;

beforeAll(async () => {
  t = await createTestApp();
  const me = await t.factories.user({ email: "types@example.com", password: "types-password" });
  const org = await t.factories.organization({ name: "typeco", admins: [me.user] });
  fleet = await t.factories.fleet(org, { name: "pis", deviceType: "raspberry-pi" });
  await t.factories.device(fleet, { name: "hidden" });
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.login({ email: "types@example.com", password: "types-password" });
  token = (await sdk.auth.getToken()) as string;
  guestSdk = getSdk({ apiUrl: t.url, dataDirectory: false });
});
afterAll(() => t?.close());

describe("device types (balena-sdk)", () => {
  it("resolves balena's slugs and aliases", async () => {
    expect((await sdk.models.deviceType.get("raspberrypi", { $select: "slug" })).slug).toBe("raspberry-pi");
    expect((await sdk.models.deviceType.get("raspberrypi2", { $select: "slug" })).slug).toBe("raspberry-pi2");
    expect((await sdk.models.deviceType.get("radxa-zero", { $select: "name" })).name).toBe("Radxa Zero");
    expect(await sdk.models.deviceType.getName("raspberrypi4-64")).toBe("Raspberry Pi 4 (using 64bit OS)");
    await expect(sdk.models.deviceType.get("no-such-board")).rejects.toThrow("Invalid device type: no-such-board");
  });

  it("computes install instructions and methods from the contracts", async () => {
    expect(await sdk.models.deviceType.getInstallMethod("raspberrypi4-64")).toBe("externalBoot");
    expect(await sdk.models.deviceType.getInstallMethod("intel-nuc")).toBe("externalFlash");
    expect(await sdk.models.deviceType.getInstallMethod("qemux86-64")).toBe("image");
    const steps = (await sdk.models.deviceType.getInstructions("raspberrypi4-64")) as string[];
    expect(steps[0]).toBe("Insert the SD card to the host machine.");
    expect(steps.at(-1)).toBe("Connect power to the Raspberry Pi 4 (using 64bit OS) to boot the device.");
    const nuc = (await sdk.models.deviceType.getInstructions("intel-nuc")) as string[];
    expect(nuc).toContain("Insert the USB key to the host machine.");
  });

  it("computes the same instructions as balena-sdk's Handlebars templates, for every device type (DEV-013)", async () => {
    const types = (await sdk.models.deviceType.getAll({ $select: ["slug", "contract"] })) as Array<{
      slug: string;
      contract: unknown;
    }>;
    expect(types.length).toBeGreaterThan(10);
    const text = (step: string) =>
      step
        .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")
        .replace(/<[^>]*>/g, "")
        .replace(/\s+/g, " ")
        .trim();
    for (const type of types) {
      // balena-sdk throws for a contract without an install method; Flotilla shows no steps then.
      const theirs = (await sdk.models.deviceType.getInstructions(type.contract as never).catch(() => [])) as unknown;
      expect({ slug: type.slug, steps: deviceTypeInstructions(type.contract) }).toEqual({
        slug: type.slug,
        steps: Array.isArray(theirs) ? theirs.map(text).filter(Boolean) : [],
      });
    }
  });

  it("answers /device-types/v1 as balena's device-type JSON, with the agent as the download", async () => {
    const all = await sdk.models.config.getDeviceTypes();
    const pi = all.find((dt) => dt.slug === "raspberry-pi");
    expect(pi).toMatchObject({ name: "Raspberry Pi (v1 / Zero / Zero W)", arch: "rpi", aliases: ["raspberrypi"] });
    expect(pi?.yocto.deployArtifact).toBe(`flotilla-agent-${APP_VERSION}.tgz`);
    expect(all.find((dt) => dt.slug === "artik10")?.state).toBe("DISCONTINUED");
    const one = await fetch(`${t.url}/device-types/v1/raspberrypi2`);
    expect(((await one.json()) as { slug: string }).slug).toBe("raspberry-pi2");
    const images = await fetch(`${t.url}/device-types/v1/raspberrypi4-64/images`);
    expect(await images.json()).toEqual({ versions: [APP_VERSION], latest: APP_VERSION });
  });

  it("gives balena's errors for unknown and malformed device types and versions", async () => {
    const unknown = await fetch(`${t.url}/device-types/v1/no-such-board`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { message: string }).message).toBe("Unknown device type no-such-board");
    const malformed = await fetch(`${t.url}/device-types/v1/a%27b`);
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { message: string }).message).toBe("Invalid device type");
    const version = await fetch(`${t.url}/device-types/v1/raspberrypi4-64/images/nonsense/download-size`);
    expect(version.status).toBe(404);
    expect(((await version.json()) as { message: string }).message).toBe(
      "Device raspberrypi4-64 not found for nonsense version",
    );
    expect((await fetch(`${t.url}/download`)).status).toBe(400);
  });
});

describe("OS download and configuration (balena-sdk)", () => {
  it("answers the download size and the download: the agent package", async () => {
    const size = await sdk.models.os.getDownloadSize("raspberrypi", "6.0.13");
    const download = await fetch(`${t.url}/download?deviceType=raspberrypi4-64&version=6.0.13`);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toBe(
      `attachment; filename="flotilla-agent-${APP_VERSION}.tgz"`,
    );
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBe(size);
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
  }, 60_000);

  it("builds config.json for a fleet and a device type named by alias", async () => {
    const config = await sdk.models.os.getConfig(
      fleet.slug as string,
      {
        version: "6.0.13",
        deviceType: "raspberrypi",
        appUpdatePollInterval: 5,
      } as Parameters<BalenaSDK["models"]["os"]["getConfig"]>[1],
    );
    expect(config).toMatchObject({
      applicationId: fleet.id,
      deviceType: "raspberry-pi",
      appUpdatePollInterval: 300_000,
    });
    await expect(
      sdk.models.os.getConfig(fleet.id, { version: "6.0.13", deviceType: "raspberrypi4-64" } as never),
    ).rejects.toThrow(/another CPU architecture/);
  });
});

describe("reads without login", () => {
  it("reads device types and the public OS catalogue without a token, as on balena", async () => {
    expect(await guestSdk.auth.isLoggedIn()).toBe(false);
    const types = await guestSdk.models.deviceType.getAll({ $select: "slug" });
    expect(types.map((dt) => dt.slug)).toContain("raspberry-pi2");
    expect((await guestSdk.models.deviceType.get("raspberrypi", { $select: "slug" })).slug).toBe("raspberry-pi");
    const versions = await guestSdk.models.os.getAvailableOsVersions("raspberrypi4-64");
    expect(versions.length).toBeGreaterThan(0);
    expect((await fetch(`${t.url}/device-types/v1`)).status).toBe(200);
  });

  it("reads nothing else: fleets that are not public, devices, users; and writes nothing", async () => {
    const get = async (path: string) => {
      const response = await fetch(`${t.url}${path}`);
      const text = await response.text();
      return { status: response.status, body: (response.ok ? JSON.parse(text) : text) as { d?: { slug?: string }[] } };
    };
    const fleets = await get("/v7/application?$select=slug");
    expect(fleets.status).toBe(200);
    expect(fleets.body.d?.length).toBeGreaterThan(0);
    expect(fleets.body.d?.every((row) => row.slug?.startsWith("balena_os/"))).toBe(true);
    expect((await get(`/v7/application(${fleet.id})`)).body.d).toEqual([]);
    // Resources a guest holds no read rule on at all are refused, as before.
    for (const path of ["/v7/device", "/v7/user", "/v7/organization", "/v7/api_key"]) {
      expect({ path, ...(await get(path)) }).toEqual({ path, status: 401, body: "Unauthorized." });
    }
    // The signed-in owner still sees them, and a bad token is refused, not read as a guest.
    expect((await fetch(`${t.url}/v7/device`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`${t.url}/v7/device`, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    const write = await fetch(`${t.url}/v7/application(${fleet.id})`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ app_name: "stolen" }),
    });
    expect(write.status).toBe(401);
    expect((await fetch(`${t.url}/download-config`, { method: "POST" })).status).toBe(401);
  });
});
