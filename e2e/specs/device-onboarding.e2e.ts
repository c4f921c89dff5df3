import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { startDemoSession } from "./demo-session.ts";
import { api } from "./fleets-helpers.ts";

const run = promisify(execFile);
const SHOTS = "/tmp/shots-onboarding";

/**
 * Issue 18 "Onboarding a real device", as a person does it: download the device configuration in
 * the add-device dialog, fetch the server's installer and run it (into a temp prefix, without
 * systemd: this machine has none), and see the device the installed agent registered appear in
 * the fleet's device list. Real processes only: the server, the browser, sh, npm and the agent.
 */
describe("device onboarding: config download and the one-line installer", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let fleetId = 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-onboarding-"));

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(0, {
      viewport: { width: 1280, height: 860 },
      acceptDownloads: true,
    }));
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

  it("downloads config.json, installs the served agent with install.sh, and the device shows up", async () => {
    await page.goto(`${flotilla.dashboardUrl}/fleets/${fleetId}/devices`);
    await page.getByText("No devices yet").waitFor();
    await page.getByRole("button", { name: "Add device" }).first().click();
    const dialog = page.getByRole("dialog", { name: "Add a device to demo-fleet" });
    await dialog.getByText("Download the device's configuration file").waitFor();
    await page.waitForTimeout(300); // the dialog's fade-in
    await dialog.screenshot({ path: `${SHOTS}/add-device-dialog-start.png` });
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      dialog.getByRole("button", { name: "Download configuration" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("config.json");
    const configFile = path.join(dir, "config.json");
    await download.saveAs(configFile);
    const config = JSON.parse(fs.readFileSync(configFile, "utf8"));
    expect(config).toMatchObject({
      applicationId: fleetId,
      deviceType: "raspberrypi4-64",
      apiEndpoint: flotilla.apiUrl,
      apiKey: expect.any(String),
    });
    const installer = dialog.getByLabel("Installer", { exact: true });
    await expect
      .poll(() => installer.textContent())
      .toBe(`curl -fsSL ${flotilla.apiUrl}/install.sh | sudo sh -s -- --config config.json`);
    const shown = (await installer.textContent()) ?? "";
    await page.waitForTimeout(300);
    await dialog.screenshot({ path: `${SHOTS}/add-device-dialog.png` });
    await dialog.getByRole("button", { name: "Done" }).click();

    // The line the dialog shows, as it is, minus sudo (the test installs into a temp prefix) and
    // systemd (this machine has none): curl pipes the served script into sh, which fetches the
    // served tarball, installs it with npm and registers with the downloaded file.
    const line = `${shown.replace("| sudo sh", "| sh")} --prefix agent --no-service --without-terminal`;
    const prefix = path.join(dir, "agent");
    const { stdout } = await run("/bin/sh", ["-c", line], {
      cwd: dir,
      env: { ...process.env, npm_config_cache: path.join(dir, "npm-cache") },
      timeout: 120_000,
    });
    expect(stdout).toContain(`Downloading the agent from ${flotilla.apiUrl}/download/agent.tgz`);
    const uuid = /registered device ([0-9a-f]{32})/.exec(stdout)?.[1] ?? "";
    expect(uuid).not.toBe("");
    expect(stdout).toContain("No service written (--no-service)");

    // Registering again with the installed agent and the same file keeps the device (key exchange).
    const again = await run(path.join(prefix, "bin", "flotilla-agent"), [
      "register",
      "--config",
      configFile,
      "--state",
      path.join(prefix, "flotilla-agent.json"),
    ]);
    expect(again.stdout).toContain(`registered device ${uuid}`);

    const grid = page.getByRole("grid", { name: "Devices" });
    await expect.poll(() => grid.getByRole("row").count(), { timeout: 30_000 }).toBe(2);
    const devices = await api<{ d: Array<{ uuid: string; device_name: string }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      `/v7/device?$select=uuid,device_name&$filter=belongs_to__application eq ${fleetId}`,
    );
    expect(devices.d.map((d) => d.uuid)).toEqual([uuid]);
    await grid.getByRole("link", { name: devices.d[0]?.device_name }).waitFor();
    await page.screenshot({ path: `${SHOTS}/devices-after-install.png` });
  }, 240_000);
});
