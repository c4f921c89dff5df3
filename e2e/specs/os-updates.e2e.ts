import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { startDemoSession } from "./demo-session.ts";
import { api } from "./fleets-helpers.ts";

const AGENT_BIN = path.resolve(import.meta.dirname, "../../apps/agent/bin/flotilla-agent.mjs");

/** Screenshots for people to look at (outside the repository), once transitions settled. */
const shot = async (page: Page, name: string) => {
  mkdirSync("/tmp/shots-os-updates", { recursive: true });
  await page.waitForTimeout(400);
  await page.screenshot({ path: `/tmp/shots-os-updates/${name}.png`, fullPage: true });
};

/**
 * OS and supervisor updates (issue #10, OPS-067..086, DEV-069): on the demo's simulated devices
 * a person triggers an OS update from the device's settings and watches the device go through
 * updating to the new version, updates its supervisor, then opens the fleet's group "Update OS"
 * dialog, which shows each selected device's category for the chosen version.
 */
describe("OS and supervisor updates", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let devices: Array<{ uuid: string; device_name: string }> = [];
  let fleetId = 0;

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(2));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  /** The demo's devices once both are up on the simulator's OS and online. */
  const onlineDevices = async () => {
    const { d } = await api<{
      d: Array<{ uuid: string; device_name: string; belongs_to__application: { __id: number } }>;
    }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/device?$select=uuid,device_name,belongs_to__application&$filter=is_connected_to_vpn eq true and os_version eq 'balenaOS 6.1.0' and provisioning_progress eq null&$orderby=device_name asc",
    );
    devices = d;
    fleetId = d[0]?.belongs_to__application.__id ?? 0;
    return d.length;
  };

  /** Reloads (as a person would) until `text` shows in `region`. */
  const reloadUntil = async (region: string, text: string | RegExp, timeout = 90_000) => {
    await expect
      .poll(
        async () => {
          await page.reload();
          // A reload on a loaded machine may take a moment: not there yet counts as not yet.
          return page
            .getByRole("region", { name: region })
            .getByText(text)
            .waitFor({ timeout: 5000 })
            .then(
              () => true,
              () => false,
            );
        },
        { timeout, interval: 1500 },
      )
      .toBe(true);
  };

  it("triggers an OS update and watches the device go through updating to the new version", async () => {
    await expect.poll(onlineDevices, { timeout: 120_000, interval: 1000 }).toBe(2);
    const [device] = devices;
    await page.goto(`${flotilla.dashboardUrl}/devices/${device?.uuid}/settings`);
    const section = page.getByRole("region", { name: "OS update" });
    await section.getByText("Running balenaOS 6.1.0").waitFor();
    // Newest first: the ESR 2025.4.1 (built on 6.2.4) is offered as a switch to ESR.
    await section.getByRole("combobox", { name: "Target version" }).click();
    await page.getByRole("option", { name: "6.2.4" }).waitFor();
    const options = await page.getByRole("option").allTextContents();
    expect(options).toEqual(["2025.4.1 (ESR)", "6.2.4"]);
    await page.getByRole("option", { name: "2025.4.1 (ESR)" }).click();
    await section.getByText("Updatable with switch to ESR").waitFor();
    await section.getByText(/switches to the ESR line/).waitFor();
    await shot(page, "01-settings-esr-switch");
    await section.getByRole("combobox", { name: "Target version" }).click();
    await page.getByRole("option", { name: "6.2.4" }).click();
    await section.getByText("Updatable", { exact: true }).waitFor();
    await section.getByRole("button", { name: "Start OS update" }).click();
    await page.getByText("OS update to 6.2.4 started").waitFor();
    // The device downloads the update (status Updating with its progress), reboots, comes back.
    await reloadUntil("OS update", /Updating the OS: \d+%/, 30_000);
    await shot(page, "02-settings-updating");
    await reloadUntil("OS update", "Running balenaOS 6.2.4");
    await page.getByRole("region", { name: "OS update" }).getByText("This device runs the newest OS version").waitFor();
    await page.goto(`${flotilla.dashboardUrl}/devices/${device?.uuid}`);
    await page.getByText("Downloading OS update 6.2.4 … 40%").first().waitFor({ timeout: 30_000 });
    await page.getByText("Running balenaOS 6.2.4").first().waitFor({ timeout: 30_000 });
    // The summary links the OS version to the changelog, with its release line from the catalogue.
    const osVersion = page.getByRole("link", { name: "balenaOS 6.2.4: open the OS changelog" });
    expect(await osVersion.getAttribute("href")).toContain("meta-balena");
    await page.getByText("Current", { exact: true }).waitFor();
    await shot(page, "06-summary-os-version");
  }, 240_000);

  it("updates the supervisor from the device's settings", async () => {
    const [device] = devices;
    await page.goto(`${flotilla.dashboardUrl}/devices/${device?.uuid}/settings`);
    const section = page.getByRole("region", { name: "Supervisor update" });
    await section.getByText("Running supervisor 16.7.0").waitFor();
    await section.getByRole("combobox", { name: "Supervisor release" }).click();
    await page.getByRole("option", { name: "16.7.0 (running)" }).waitFor();
    expect(await page.getByRole("option").allTextContents()).toEqual(["17.0.1", "16.8.2", "16.7.0 (running)"]);
    await page.getByRole("option", { name: "17.0.1" }).click();
    await section.getByRole("button", { name: "Update supervisor" }).click();
    await page.getByText("Supervisor 17.0.1 set: the device updates to it now").waitFor();
    await reloadUntil("Supervisor update", "Running supervisor 17.0.1", 60_000);
    await shot(page, "03-settings-supervisor");
  }, 120_000);

  it("shows each selected device's category in the group OS update and updates only the updatable ones", async () => {
    await page.goto(`${flotilla.dashboardUrl}/fleets/${fleetId}/devices`);
    const grid = page.getByRole("grid", { name: "Devices" });
    await expect.poll(() => grid.getByRole("row").count(), { timeout: 60_000 }).toBe(3);
    await grid.getByRole("checkbox", { name: "Select all rows" }).check();
    await page.getByRole("button", { name: "Actions" }).click();
    await page.getByRole("menuitem", { name: "Update OS" }).click();
    const dialog = page.getByRole("dialog", { name: "Update OS" });
    await dialog.getByRole("combobox", { name: "Target version" }).click();
    await page.getByRole("option", { name: "6.2.4" }).click();
    const table = dialog.getByRole("table", { name: "OS update target category per device" });
    const [updated, other] = devices;
    await table.getByRole("row", { name: new RegExp(`${updated?.device_name}.*Up to date`) }).waitFor();
    await table.getByRole("row", { name: new RegExp(`${other?.device_name}.*Updatable`) }).waitFor();
    await dialog.getByRole("combobox", { name: "Target version" }).click();
    await page.getByRole("option", { name: "2024.10.2 (ESR)" }).click();
    await table
      .getByRole("row", { name: new RegExp(`${other?.device_name}.*Downgrade cannot switch to ESR`) })
      .waitFor();
    await dialog.getByText("None of the selected devices can be updated to this version.").waitFor();
    expect(await dialog.getByRole("button", { name: "Update 0 devices" }).isDisabled()).toBe(true);
    await dialog.getByRole("combobox", { name: "Target version" }).click();
    await page.getByRole("option", { name: "6.2.4" }).click();
    await shot(page, "04-group-update-os");
    await dialog.getByRole("button", { name: "Update 1 device" }).click();
    await page.getByText("OS update to 6.2.4 started on 1 device").waitFor();

    // Group supervisor update: the device already on 17.0.1 is up to date.
    await grid.getByRole("checkbox", { name: "Select all rows" }).check();
    await page.getByRole("button", { name: "Actions" }).click();
    await page.getByRole("menuitem", { name: "Update supervisor" }).click();
    const supervisor = page.getByRole("dialog", { name: "Update supervisor" });
    await supervisor.getByRole("combobox", { name: "Supervisor release" }).click();
    await page.getByRole("option", { name: "17.0.1" }).click();
    const rows = supervisor.getByRole("table", { name: "Supervisor update of the selected devices" });
    await rows.getByRole("row", { name: new RegExp(`${updated?.device_name}.*Up to date`) }).waitFor();
    await rows.getByRole("row", { name: new RegExp(`${other?.device_name}.*Updatable`) }).waitFor();
    await shot(page, "05-group-update-supervisor");
    await supervisor.getByRole("button", { name: "Update 1 device" }).click();
    await page.getByText("Supervisor 17.0.1 set for 1 device").waitFor();
  }, 180_000);

  it("warns of a takeover, and says when a device's OS is too old to update", async () => {
    // Two more simulated devices, started on older OS versions with `flotilla-agent simulate`.
    const key = await api<string>(page, flotilla.apiUrl, "POST", "/api-key/v2/", {
      actorType: "application",
      actorTypeId: fleetId,
      roles: ["provisioning-api-key"],
      name: "older devices",
    });
    const simulate = (...options: string[]): ChildProcess =>
      spawn(
        process.execPath,
        [AGENT_BIN, "simulate", "--api", flotilla.apiUrl, "--provisioning-key", key, "--fleet", String(fleetId)].concat(
          ["--count", "1", "--interval-ms", "1000", ...options],
        ),
        { stdio: "ignore" },
      );
    const agents = [
      simulate("--device-type", "jetson-orin-nano-devkit-nvme", "--os-version", "5.1.20"),
      simulate("--os-version", "2.12.0"),
    ];
    const online = async (osVersion: string) => {
      const { d } = await api<{ d: Array<{ uuid: string }> }>(
        page,
        flotilla.apiUrl,
        "GET",
        `/v7/device?$select=uuid&$filter=is_connected_to_vpn eq true and os_version eq 'balenaOS ${osVersion}'`,
      );
      return d[0]?.uuid ?? "";
    };
    try {
      await expect.poll(() => online("5.1.20"), { timeout: 60_000, interval: 1000 }).not.toBe("");
      await expect.poll(() => online("2.12.0"), { timeout: 60_000, interval: 1000 }).not.toBe("");

      // The Orin Nano moves to a new partition layout with 6.x: a takeover, confirmed before it starts.
      await page.goto(`${flotilla.dashboardUrl}/devices/${await online("5.1.20")}/settings`);
      const section = page.getByRole("region", { name: "OS update" });
      await section.getByText("Running balenaOS 5.1.20").waitFor();
      await section.getByRole("combobox", { name: "Target version" }).click();
      await page.getByRole("option", { name: "6.2.4", exact: true }).click();
      await section
        .getByText(/needs a takeover \(advanced update\): the device is re-flashed, data on it is lost/)
        .waitFor();
      const startButton = section.getByRole("button", { name: "Start OS update" });
      expect(await startButton.isDisabled()).toBe(true);
      await section.getByLabel("I understand that data is lost and the update cannot be rolled back").check();
      expect(await startButton.isEnabled()).toBe(true);
      await shot(page, "07-settings-takeover");

      // Below the minimum source version no update can start, and the section says why.
      await page.goto(`${flotilla.dashboardUrl}/devices/${await online("2.12.0")}/settings`);
      await page
        .getByRole("region", { name: "OS update" })
        .getByText(
          "OS version 2.12.0 is not supported for the device type raspberrypi4-64. Current OS version must be >= 2.14.0+rev1.",
        )
        .waitFor();
      await shot(page, "08-settings-os-too-old");
    } finally {
      for (const agent of agents) agent.kill("SIGTERM");
    }
  }, 180_000);
});
