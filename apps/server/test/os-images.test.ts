import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { type BalenaSDK, getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { buildDiskImage, outsideBootSha256, readBootFile, type TestDiskImage } from "./support/disk-image.ts";

/**
 * Adding a balenaOS device with a configured image (issue 35): balenaOS images in
 * FLOTILLA_OS_IMAGES_DIR (`<device-type>/<version>.img`), served by `GET /download` (balena-sdk
 * `os.download`) and `POST /download` (the dashboard's form) with config.json and the Wi-Fi
 * settings written into the boot partition by mtools. The test image is a real MBR disk image
 * with a FAT partition made by mkfs.fat; what the server wrote is read back with `mtype`.
 */
let t: TestApp;
let sdk: BalenaSDK;
let token: string;
let fleet: { id: number; slug: string };
let otherFleet: { id: number; slug: string };
let observerToken: string;
let image: TestDiskImage;
const root = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-os-images-"));
const imagesDir = path.join(root, "images");
const downloads = path.join(root, "downloads");

const partitionCopies = () => {
  const dir = path.join(t.config.dataDir, "tmp");
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => name.startsWith("os-image-")) : [];
};

/** Waits for the server to remove its partition copy (it does so as the stream ends). */
async function expectNoPartitionCopy() {
  await expect.poll(() => partitionCopies().length, { timeout: 5000 }).toBe(0);
}

async function saveDownload(response: Response, name: string): Promise<string> {
  const file = path.join(downloads, name);
  await pipeline(response.body as unknown as NodeJS.ReadableStream, fs.createWriteStream(file));
  return file;
}

/**
 * A download read up to its first bytes and held open, until `leave` destroys its socket as a
 * client going away does (node's http client: fetch's abort keeps the socket open a while).
 */
function startDownload(query: string): Promise<{ status: number; leave: () => void }> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${t.url}/download?${query}`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.once("data", () => resolve({ status: res.statusCode ?? 0, leave: () => request.destroy() }));
      res.once("end", () => resolve({ status: res.statusCode ?? 0, leave: () => request.destroy() }));
    });
    request.once("error", reject);
  });
}

const provisioningKeyCount = async () => (await sdk.models.apiKey.getProvisioningApiKeysByApplication(fleet.id)).length;

beforeAll(async () => {
  fs.mkdirSync(path.join(imagesDir, "raspberrypi4-64"), { recursive: true });
  fs.mkdirSync(downloads);
  image = await buildDiskImage(path.join(imagesDir, "raspberrypi4-64", "6.2.4.img"));
  await buildDiskImage(path.join(imagesDir, "raspberrypi4-64", "6.1.0.img"), { bootKiB: 4096 });
  // Larger than what sockets buffer: a download of it is still streaming when the client leaves.
  await buildDiskImage(path.join(imagesDir, "raspberrypi4-64", "6.0.13.img"), { rootKiB: 48 * 1024 });
  // An image without a resin-boot partition (another label): the operator's mistake.
  fs.mkdirSync(path.join(imagesDir, "raspberrypi3"));
  await buildDiskImage(path.join(imagesDir, "raspberrypi3", "6.2.4.img"), { label: "not-boot" });
  // Not images: ignored.
  fs.writeFileSync(path.join(imagesDir, "raspberrypi4-64", "README.txt"), "notes");
  fs.writeFileSync(path.join(imagesDir, "raspberrypi4-64", "latest.img"), "not a version");

  t = await createTestApp({ FLOTILLA_OS_IMAGES_DIR: imagesDir });
  const me = await t.factories.user({ email: "imager@example.com", password: "imager-password" });
  const stranger = await t.factories.user();
  const org = await t.factories.organization({ name: "Acme", admins: [me.user] });
  fleet = await t.factories.fleet(org, { name: "kiosks", deviceType: "raspberrypi4-64" });
  const otherOrg = await t.factories.organization({ name: "Globex", admins: [stranger.user] });
  otherFleet = await t.factories.fleet(otherOrg, { name: "secret", deviceType: "raspberrypi4-64" });
  const observer = await t.factories.user();
  await t.factories.fleetMember(observer.user, fleet, "observer");
  observerToken = observer.token;
  sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.login({ email: "imager@example.com", password: "imager-password" });
  token = (await sdk.auth.getToken()) as string;
}, 60_000);

afterAll(async () => {
  await t?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe("the configured image download", () => {
  it("writes config.json and the Wi-Fi settings into the boot partition and streams the image at its size", async () => {
    const keysBefore = await provisioningKeyCount();
    const query = new URLSearchParams({
      deviceType: "raspberrypi4-64",
      version: "6.2.4",
      appId: String(fleet.id),
      developmentMode: "true",
      network: "wifi",
      wifiSsid: "Workshop 5G",
      wifiKey: "correct horse battery",
      appUpdatePollInterval: "5",
    });
    const answer = await fetch(`${t.url}/download?${query}`, { headers: { authorization: `Bearer ${token}` } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/octet-stream");
    expect(answer.headers.get("content-length")).toBe(String(image.size));
    expect(answer.headers.get("content-disposition")).toBe(
      'attachment; filename="balenaos-kiosks-raspberrypi4-64-6.2.4-dev.img"',
    );
    const file = await saveDownload(answer, "configured.img");
    expect(fs.statSync(file).size).toBe(image.size);
    // Only the boot partition changed.
    expect(outsideBootSha256(file, image)).toBe(image.outsideBootSha256);

    const config = JSON.parse(await readBootFile(file, image.bootOffset, "config.json"));
    expect(config).toMatchObject({
      applicationId: fleet.id,
      deviceType: "raspberrypi4-64",
      apiEndpoint: t.config.apiUrl,
      version: "6.2.4",
      developmentMode: true,
      appUpdatePollInterval: 300_000,
      network: "wifi",
      wifiSsid: "Workshop 5G",
      wifiKey: "correct horse battery",
      listenPort: 48484,
    });
    // The placeholder config.json of the image is replaced, not merged.
    expect(config).not.toHaveProperty("persistentLogging");
    expect(config.apiKey).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(await provisioningKeyCount()).toBe(keysBefore + 1);
    const wifi = await readBootFile(file, image.bootOffset, "system-connections/resin-wifi");
    expect(wifi).toContain("ssid=Workshop 5G\n");
    expect(wifi).toContain("psk=correct horse battery\n");
    expect(wifi).toContain("key-mgmt=wpa-psk\n");
    // The image's own files stay.
    expect(await readBootFile(file, image.bootOffset, "system-connections/resin-sample.ignore")).toContain(
      "resin-sample",
    );

    // The key in the image registers a device of the fleet.
    const registered = await fetch(`${t.url}/device/register`, {
      method: "POST",
      headers: { authorization: `Bearer ${config.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        user: config.userId,
        application: config.applicationId,
        device_type: config.deviceType,
        uuid: "f".repeat(32),
        api_key: "device-key-of-at-least-16-chars",
      }),
    });
    expect(registered.status).toBe(201);
    await expectNoPartitionCopy();
  });

  it("answers balena-sdk os.download: Ethernet, production, newest image for 'latest'", async () => {
    const stream = await sdk.models.os.download({ deviceType: "raspberrypi4-64", version: "6.2.4", appId: fleet.id });
    const file = path.join(downloads, "sdk.img");
    await pipeline(stream as unknown as NodeJS.ReadableStream, fs.createWriteStream(file));
    expect(fs.statSync(file).size).toBe(image.size);
    const config = JSON.parse(await readBootFile(file, image.bootOffset, "config.json"));
    expect(config).toMatchObject({ applicationId: fleet.id, network: "ethernet", developmentMode: false });
    expect(config).not.toHaveProperty("wifiSsid");
    // Ethernet only: no Wi-Fi connection is written.
    await expect(readBootFile(file, image.bootOffset, "system-connections/resin-wifi")).rejects.toThrow();
    await expectNoPartitionCopy();

    const latest = await fetch(`${t.url}/download?deviceType=raspberrypi4-64&version=latest&appId=${fleet.id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(latest.headers.get("content-disposition")).toContain("raspberrypi4-64-6.2.4-prod.img");
    await latest.body?.cancel();
    await expectNoPartitionCopy();
  });

  it("answers the dashboard's form POST with the session as _token", async () => {
    const form = new URLSearchParams({
      _token: token,
      deviceType: "raspberrypi4-64",
      version: "6.1.0",
      appId: String(fleet.id),
      developmentMode: "false",
      network: "ethernet",
      wifiSsid: "",
      wifiKey: "",
      provisioningKeyName: "kiosk image",
    });
    const answer = await fetch(`${t.url}/download`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-disposition")).toBe(
      'attachment; filename="balenaos-kiosks-raspberrypi4-64-6.1.0-prod.img"',
    );
    const file = await saveDownload(answer, "form.img");
    const config = JSON.parse(await readBootFile(file, image.bootOffset, "config.json"));
    expect(config).toMatchObject({ version: "6.1.0", provisioningKeyName: "kiosk image", network: "ethernet" });
    const keys = await sdk.models.apiKey.getProvisioningApiKeysByApplication(fleet.id);
    expect(keys.map((key) => key.name)).toContain("kiosk image");
    await expectNoPartitionCopy();

    const noToken = await fetch(`${t.url}/download`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ deviceType: "raspberrypi4-64", version: "6.1.0", appId: String(fleet.id) }),
    });
    expect(noToken.status).toBe(401);
    expect(((await noToken.json()) as { message: string }).message).toBe(
      "Sign in to download balenaOS images from this server.",
    );
    const badToken = await fetch(`${t.url}/download`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _token: "not-a-key", deviceType: "raspberrypi4-64", appId: String(fleet.id) }),
    });
    expect(badToken.status).toBe(401);
  });

  it("removes the partition copy when the client goes away mid-download", async () => {
    const download = await startDownload(`deviceType=raspberrypi4-64&version=6.0.13&appId=${fleet.id}`);
    expect(download.status).toBe(200);
    // Mid-download the copy of the boot partition is there (and only it: the image is never copied).
    expect(partitionCopies()).toHaveLength(1);
    const copy = path.join(t.config.dataDir, "tmp", partitionCopies()[0] ?? "");
    expect(fs.statSync(copy).size).toBe(8192 * 1024);
    download.leave();
    await expectNoPartitionCopy();
  });

  it("prepares at most 4 configured images at once, and answers a fifth 503 with Retry-After", async () => {
    const held: Array<{ leave: () => void }> = [];
    try {
      for (let i = 0; i < 4; i++) {
        const download = await startDownload(`deviceType=raspberrypi4-64&version=6.0.13&appId=${fleet.id}`);
        held.push(download);
        expect(download.status).toBe(200);
      }
      const fifth = await fetch(`${t.url}/download?deviceType=raspberrypi4-64&version=6.2.4&appId=${fleet.id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(fifth.status).toBe(503);
      expect(fifth.headers.get("retry-after")).toBe("60");
      expect(((await fifth.json()) as { message: string }).message).toBe(
        "This server is preparing as many configured images as it can at once. Try again in a minute.",
      );
      // The image as it is needs no copy: it is served meanwhile.
      const plain = await startDownload("deviceType=raspberrypi4-64&version=6.0.13");
      held.push(plain);
      expect(plain.status).toBe(200);
    } finally {
      for (const download of held) download.leave();
    }
    await expectNoPartitionCopy();
    // A HEAD would prepare an image for nothing: there is none.
    expect((await fetch(`${t.url}/download?deviceType=raspberrypi4-64`, { method: "HEAD" })).status).toBe(404);
  });

  it("refuses a fleet the caller may not configure, leaving no key, and another organization's fleet as not found", async () => {
    const keysBefore = await provisioningKeyCount();
    const observer = await fetch(`${t.url}/download?deviceType=raspberrypi4-64&version=6.2.4&appId=${fleet.id}`, {
      headers: { authorization: `Bearer ${observerToken}` },
    });
    expect(observer.status).toBe(403);
    expect(((await observer.json()) as { message: string }).message).toContain(
      "not allowed to create provisioning keys for this fleet",
    );
    const other = await fetch(`${t.url}/download?deviceType=raspberrypi4-64&version=6.2.4&appId=${otherFleet.id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(other.status).toBe(404);
    expect(((await other.json()) as { message: string }).message).toBe(`Fleet not found: ${otherFleet.id}`);
    expect(await provisioningKeyCount()).toBe(keysBefore);
    await expectNoPartitionCopy();
  });

  it("answers unknown versions and device types, bad settings and broken images with a sentence, never a 500", async () => {
    const get = (query: string, auth = true) =>
      fetch(`${t.url}/download?${query}`, { headers: auth ? { authorization: `Bearer ${token}` } : {} });
    const cases: [string, number, string][] = [
      [
        `deviceType=raspberrypi4-64&version=9.9.9&appId=${fleet.id}`,
        404,
        "This server has no balenaOS 9.9.9 image for raspberrypi4-64; it has 6.2.4, 6.1.0, 6.0.13.",
      ],
      ["deviceType=raspberrypi4-64&version=nonsense", 404, "Device raspberrypi4-64 not found for nonsense version"],
      [`deviceType=no-such-board&version=6.2.4&appId=${fleet.id}`, 404, "Unknown device type no-such-board"],
      [`deviceType=a'b&appId=${fleet.id}`, 400, "Invalid device type"],
      [
        `deviceType=intel-nuc&version=6.2.4&appId=${fleet.id}`,
        404,
        "This server has no balenaOS 6.2.4 image for intel-nuc.",
      ],
      [`deviceType=raspberrypi4-64&version=6.2.4&appId=${fleet.id}&network=wifi`, 400, "wifiSsid: is required"],
      [
        `deviceType=raspberrypi4-64&version=6.2.4&appId=${fleet.id}&network=wifi&wifiSsid=lab&wifiKey=short`,
        400,
        "wifiKey: must be 8 to 63 characters (WPA)",
      ],
      [`deviceType=raspberrypi4-64&version=6.2.4&appId=x`, 400, "appId: must be the fleet's id"],
      [`deviceType=raspberrypi4-64&version=6.2.4&developmentMode=maybe`, 400, "developmentMode: must be true or false"],
      [
        `deviceType=raspberrypi3&version=6.2.4&appId=${fleet.id}`,
        503,
        "The balenaOS image raspberrypi3/6.2.4.img on this server has no resin-boot partition",
      ],
    ];
    for (const [query, status, words] of cases) {
      const answer = await get(query);
      expect(answer.status, query).toBe(status);
      expect(((await answer.json()) as { message: string }).message, query).toContain(words);
    }
    // Without a session: images are for signed-in users (the agent package stays public).
    const guest = await get("deviceType=raspberrypi4-64&version=6.2.4", false);
    expect(guest.status).toBe(401);
    await guest.body?.cancel();
    await expectNoPartitionCopy();
  });
});

describe("the image as it is, sizes and versions", () => {
  it("serves the unconfigured image to a signed-in user when no fleet is named", async () => {
    const answer = await fetch(`${t.url}/download?deviceType=raspberrypi4-64&version=v6.2.4`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-disposition")).toBe('attachment; filename="balenaos-raspberrypi4-64-6.2.4.img"');
    const file = await saveDownload(answer, "plain.img");
    expect(fs.readFileSync(file).equals(fs.readFileSync(image.file))).toBe(true);
  });

  it("answers the download size and versions from the images, and lists them for the dashboard", async () => {
    expect(await sdk.models.os.getDownloadSize("raspberrypi4-64", "6.2.4")).toBe(image.size);
    const versions = await fetch(`${t.url}/device-types/v1/raspberrypi4-64/images`);
    expect(await versions.json()).toEqual({ versions: ["6.2.4", "6.1.0", "6.0.13"], latest: "6.2.4" });
    const list = await fetch(`${t.url}/os-images/v1/raspberrypi4-64`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await list.json()).toEqual({
      deviceType: "raspberrypi4-64",
      directory: true,
      images: [
        { version: "6.2.4", size: image.size },
        { version: "6.1.0", size: expect.any(Number) },
        { version: "6.0.13", size: expect.any(Number) },
      ],
    });
    const none = await fetch(`${t.url}/os-images/v1/intel-nuc`, { headers: { authorization: `Bearer ${token}` } });
    expect(await none.json()).toEqual({ deviceType: "intel-nuc", directory: true, images: [] });
    expect((await fetch(`${t.url}/os-images/v1/intel-nuc`)).status).toBe(401);
  });

  it("keeps the agent package as the download of device types without images", async () => {
    const answer = await fetch(`${t.url}/download?deviceType=intel-nuc&version=6.2.4`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/gzip");
    await answer.body?.cancel();
  });
});
