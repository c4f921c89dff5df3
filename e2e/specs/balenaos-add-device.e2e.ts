import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildDiskImage,
  outsideBootSha256,
  readBootFile,
  type TestDiskImage,
} from "../../apps/server/test/support/disk-image.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { startDemoSession } from "./demo-session.ts";
import { api } from "./fleets-helpers.ts";

const SHOTS = "/tmp/shots-balenaos";

/**
 * Issue 35 "Adding a balenaOS device from the dashboard", as a person does it: in the add-device
 * dialog, choose balenaOS, a version, the edition and the Wi-Fi settings; download config.json for
 * a version this server has no image of (the dialog says where to get one and shows the
 * `balena os configure` line), then the configured image of a version it has (a small disk image
 * with a FAT boot partition, built here): the browser downloads it at its size with config.json
 * inside, read back with mtools.
 */
describe("adding a balenaOS device: config.json and the configured image", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let fleetId = 0;
  let image: TestDiskImage;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-balenaos-e2e-"));
  const imagesDir = path.join(dir, "images");

  beforeAll(async () => {
    fs.mkdirSync(path.join(imagesDir, "raspberrypi4-64"), { recursive: true });
    image = await buildDiskImage(path.join(imagesDir, "raspberrypi4-64", "6.2.4.img"), { rootKiB: 2048 });
    ({ flotilla, browser, page } = await startDemoSession(
      0,
      { acceptDownloads: true },
      { FLOTILLA_OS_IMAGES_DIR: imagesDir },
    ));
    const apps = await api<{ d: Array<{ id: number; app_name: string }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/application?$select=id,app_name",
    );
    fleetId = apps.d.find((app) => app.app_name === "demo-fleet")?.id ?? 0;
    fs.mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const dialogShot = async (name: string) => {
    await page.waitForTimeout(300);
    await page.getByRole("dialog").screenshot({ path: `${SHOTS}/${name}.png` });
  };

  it("downloads config.json with the Wi-Fi settings for a version without an image here, and says where to get one", async () => {
    await page.goto(`${flotilla.dashboardUrl}/fleets/${fleetId}/devices`);
    await page.getByRole("button", { name: "Add device" }).first().click();
    const dialog = page.getByRole("dialog", { name: "Add a device to demo-fleet" });
    // flotilla-agent stays the first choice.
    expect(await dialog.getByRole("radio", { name: "Debian or Raspberry Pi OS (flotilla-agent)" }).isChecked()).toBe(
      true,
    );
    await dialog.getByRole("radio", { name: "balenaOS" }).check();

    // The version offered first is the newest one this server has the image of.
    const version = dialog.getByRole("combobox", { name: "balenaOS version" });
    await expect.poll(() => version.textContent()).toBe("6.2.4");
    await dialog.getByText("balenaOS 6.2.4 for Raspberry Pi 4 (using 64bit OS)").waitFor();
    await version.click();
    const newest = page.getByRole("option", { name: /^6\.2\.4/ });
    expect(await newest.textContent()).toContain("image on this server");
    await page.getByRole("option", { name: /^6\.1\.0/ }).click();

    await dialog
      .getByText("This server has no balenaOS 6.1.0 image for Raspberry Pi 4 (using 64bit OS)", { exact: true })
      .waitFor();
    const balenaPage = dialog.getByRole("link", { name: "balena's balenaOS downloads" });
    expect(await balenaPage.getAttribute("href")).toBe("https://www.balena.io/os#download");
    await dialog.getByText("raspberrypi4-64/6.1.0.img").waitFor();
    expect(await dialog.getByRole("button", { name: /Download image/ }).count()).toBe(0);

    await dialog.getByRole("radio", { name: "Development" }).check();
    await dialog.getByRole("radio", { name: "Wi-Fi + Ethernet" }).check();
    await dialog.getByRole("textbox", { name: "Wi-Fi SSID" }).fill("Workshop");
    const passphrase = dialog.getByLabel("Wi-Fi passphrase");
    await passphrase.fill("short");
    await dialog.getByText("must be 8 to 63 characters (WPA)").waitFor();
    expect(await dialog.getByRole("button", { name: "Download config.json" }).isDisabled()).toBe(true);
    await passphrase.fill("correct horse battery");
    expect(await passphrase.getAttribute("type")).toBe("password");
    await dialog.getByRole("button", { name: "Show passphrase" }).click();
    expect(await passphrase.getAttribute("type")).toBe("text");
    await dialogShot("balenaos-no-image");

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      dialog.getByRole("button", { name: "Download config.json" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("config.json");
    const configFile = path.join(dir, "config.json");
    await download.saveAs(configFile);
    expect(JSON.parse(fs.readFileSync(configFile, "utf8"))).toMatchObject({
      applicationId: fleetId,
      deviceType: "raspberrypi4-64",
      apiEndpoint: flotilla.apiUrl,
      version: "6.1.0",
      developmentMode: true,
      network: "wifi",
      wifiSsid: "Workshop",
      wifiKey: "correct horse battery",
      apiKey: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
    });
    const command = dialog.getByLabel("Configure command", { exact: true });
    await expect
      .poll(() => command.textContent())
      .toBe("balena os configure balenaos-raspberrypi4-64-6.1.0.img --config config.json");
    await dialog.getByText("keep them private").waitFor();
    await dialogShot("balenaos-config-saved");
    await dialog.getByRole("button", { name: "Done" }).click();
  });

  it("downloads the configured image with its size, config.json in its boot partition", async () => {
    await page.getByRole("button", { name: "Add device" }).first().click();
    const dialog = page.getByRole("dialog", { name: "Add a device to demo-fleet" });
    await dialog.getByRole("radio", { name: "balenaOS" }).check();
    await dialog.getByText("balenaOS 6.2.4 for Raspberry Pi 4 (using 64bit OS)").waitFor();
    await dialog.getByRole("radio", { name: "Wi-Fi + Ethernet" }).check();
    await dialog.getByRole("textbox", { name: "Wi-Fi SSID" }).fill("Field office");
    await dialog.getByLabel("Wi-Fi passphrase").fill("orange-kiwi-42");
    const sizeText = `${(image.size / 1024 / 1024).toFixed(1)} MB`;
    await dialog.getByText(sizeText, { exact: true }).waitFor();
    const button = dialog.getByRole("button", { name: `Download image · ${sizeText}` });
    await dialogShot("balenaos-image");

    const [download] = await Promise.all([page.waitForEvent("download"), button.click()]);
    expect(download.suggestedFilename()).toBe("balenaos-demo-fleet-raspberrypi4-64-6.2.4-prod.img");
    const file = path.join(dir, "configured.img");
    await download.saveAs(file);
    expect(fs.statSync(file).size).toBe(image.size);
    expect(outsideBootSha256(file, image)).toBe(image.outsideBootSha256);
    const config = JSON.parse(await readBootFile(file, image.bootOffset, "config.json"));
    expect(config).toMatchObject({
      applicationId: fleetId,
      deviceType: "raspberrypi4-64",
      version: "6.2.4",
      developmentMode: false,
      network: "wifi",
      wifiSsid: "Field office",
      wifiKey: "orange-kiwi-42",
      apiKey: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
    });
    expect(await readBootFile(file, image.bootOffset, "system-connections/resin-wifi")).toContain("ssid=Field office");
    await dialog
      .getByText(`Your browser is downloading balenaos-demo-fleet-raspberrypi4-64-6.2.4-prod.img (${sizeText})`)
      .waitFor();
    // A started download is not mistaken for a refusal.
    await page.waitForTimeout(1000);
    expect(await dialog.getByText("The server did not start the image download").count()).toBe(0);
    await dialogShot("balenaos-image-started");

    // The image gone from the server meanwhile: the refusal shows in the dialog, the page stays.
    const stored = path.join(imagesDir, "raspberrypi4-64", "6.2.4.img");
    fs.renameSync(stored, `${stored}.away`);
    try {
      await button.click();
      await dialog.getByText("The server did not start the image download.").waitFor();
      expect(page.url()).toBe(`${flotilla.dashboardUrl}/fleets/${fleetId}/devices`);
    } finally {
      fs.renameSync(`${stored}.away`, stored);
    }
    await dialogShot("balenaos-image-refused");
    await dialog.getByRole("button", { name: "Done" }).click();
  });
});
