import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { startDemoSession } from "./demo-session.ts";
import { api, demoIds } from "./fleets-helpers.ts";

/** Screenshots for people to look at (outside the repository), once transitions settled. */
const shot = async (page: Page, name: string) => {
  mkdirSync("/tmp/shots-finish-devices", { recursive: true });
  await page.waitForTimeout(400);
  await page.screenshot({ path: `/tmp/shots-finish-devices/${name}.png`, fullPage: true });
};

type DeviceRow = { id: number; uuid: string; device_name: string; note: string | null };

/**
 * Issue "[finish]" (devices): on the demo with two simulated devices, the device pages, URLs that
 * name a device or release by a prefix, the OS release pages under /apps/, the add-device dialog,
 * the fleet summary's releases card, the fleet's log page, the release search and the danger zone.
 */
describe("finish: devices, releases and fleet pages", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let ids: Awaited<ReturnType<typeof demoIds>>;
  let device: DeviceRow;
  const url = (p: string) => `${flotilla.dashboardUrl}${p}`;
  const call = <T>(method: string, p: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, p, body);
  const deviceRow = async (uuid: string) =>
    (await call<{ d: DeviceRow[] }>("GET", `/v7/device?$select=id,uuid,device_name,note&$filter=uuid eq '${uuid}'`))
      .d[0] as DeviceRow;

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(2));
    ids = await demoIds(page, flotilla.apiUrl);
    // The demo's devices, once both are online on the simulator's OS (expect.poll is for tests only).
    for (let tries = 0; tries < 120; tries++) {
      const online = await call<{ d: DeviceRow[] }>(
        "GET",
        "/v7/device?$select=id&$filter=is_connected_to_vpn eq true and os_version eq 'balenaOS 6.1.0'",
      );
      if (online.d.length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const { d } = await call<{ d: DeviceRow[] }>(
      "GET",
      "/v7/device?$select=id,uuid,device_name,note&$orderby=device_name asc&$top=1",
    );
    device = d[0] as DeviceRow;
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  it("device settings offer rename, notes and the rest; an online device cannot be deactivated (DEV-069, DEV-063)", async () => {
    await page.goto(url(`/devices/${device.uuid}/settings`));
    for (const name of [
      "Rename",
      "Notes",
      "Release",
      "Public device URL",
      "Local mode",
      "Support access",
      "OS update",
      "Supervisor update",
      "Move to another fleet",
      "Deactivate",
    ]) {
      await page.getByRole("region", { name, exact: true }).waitFor();
    }
    const rename = page.getByRole("region", { name: "Rename", exact: true });
    await rename.getByLabel("Device name").fill("");
    await rename.getByText("A name is required").waitFor();
    expect(await rename.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    await rename.getByLabel("Device name").fill("kitchen-sensor");
    await rename.getByRole("button", { name: "Save" }).click();
    await page.getByText("Device renamed").waitFor();
    await expect.poll(async () => (await deviceRow(device.uuid)).device_name).toBe("kitchen-sensor");

    const notes = page.getByRole("region", { name: "Notes", exact: true });
    await notes.getByRole("textbox", { name: "Notes (markdown)" }).fill("Mounted **above** the fridge");
    await expect.poll(async () => (await deviceRow(device.uuid)).note).toBe("Mounted **above** the fridge");

    const deactivate = page.getByRole("region", { name: "Deactivate", exact: true });
    await deactivate.getByText("The device must be offline for this action").waitFor();
    expect(await deactivate.getByRole("button", { name: "Deactivate" }).isDisabled()).toBe(true);
    await shot(page, "01-device-settings");
    // The server refuses it too, in the same words.
    const refused = await call("PATCH", `/v7/device(${device.id})`, { is_active: false }).catch(
      (error: Error) => error.message,
    );
    expect(String(refused)).toMatch(/400 The device must be offline for this action/);
  });

  it("the summary shows the public URL toggle only when the device has a web URL (DEV-046)", async () => {
    await page.goto(url(`/devices/${device.uuid}`));
    const toggle = page.getByRole("switch", { name: "Public device URL" });
    await toggle.click();
    await page.getByText("Public device URL enabled").waitFor();
    await page.getByRole("link", { name: `https://${device.uuid}.devices.localhost` }).waitFor();
    await shot(page, "02-summary-public-url");
    // A fleet type without web URLs: the device has none, and no toggle.
    const types = await call<{ d: Array<{ id: number; slug: string }> }>("GET", "/v7/application_type?$select=id,slug");
    const typeId = (slug: string) => types.d.find((type) => type.slug === slug)?.id;
    await call("PATCH", `/v7/application(${ids.fleet})`, { application_type: typeId("essentials") });
    await page.reload();
    await page.getByText("Public IP address").waitFor();
    expect(await page.getByRole("switch", { name: "Public device URL" }).count()).toBe(0);
    expect(await page.getByText("Public URL", { exact: true }).count()).toBe(0);
    await call("PATCH", `/v7/application(${ids.fleet})`, { application_type: typeId("microservices") });
  });

  it("the OS version opens its release page under /apps/, which stays there (DEV-042, REL-008)", async () => {
    await page.goto(url(`/devices/${device.uuid}`));
    const changelog = page.getByRole("link", { name: "balenaOS 6.1.0: open the OS changelog" });
    expect(await changelog.getAttribute("href")).toContain("meta-balena");
    await page.getByRole("link", { name: "balenaOS 6.1.0: open its OS release" }).click();
    await page.waitForURL(/\/apps\/\d+\/releases\/\d+$/);
    await page.getByText("6.1.0").first().waitFor();
    await page.waitForTimeout(1000);
    expect(new URL(page.url()).pathname).toMatch(/^\/apps\/\d+\/releases\/\d+$/);
    await shot(page, "03-os-release-page");
    // The supervisor's release page too, from the device's settings.
    await page.goto(url(`/devices/${device.uuid}/settings`));
    await page
      .getByRole("region", { name: "Supervisor update" })
      .getByRole("link", { name: "Its release page" })
      .click();
    await page.waitForURL(/\/apps\/\d+\/releases\/\d+$/);
    await page.getByText("16.7.0").first().waitFor();
    await page.waitForTimeout(1000);
    expect(new URL(page.url()).pathname).toMatch(/^\/apps\/\d+\/releases\/\d+$/);
  });

  it("a short uuid opens its device; a prefix of several says it is ambiguous (DEV-028)", async () => {
    await page.goto(url(`/devices/${device.uuid.slice(0, 8)}/settings`));
    await page.waitForURL(url(`/devices/${device.uuid}/settings`));
    const types = await call<{ d: Array<{ id: number }> }>(
      "GET",
      "/v7/device_type?$select=id&$filter=slug eq 'raspberrypi4-64'",
    );
    for (const tail of ["1", "2"]) {
      await call("POST", "/v7/device", {
        belongs_to__application: ids.fleet,
        is_of__device_type: types.d[0]?.id,
        uuid: `abcabc12${tail.repeat(24)}`,
        device_name: `twin-${tail}`,
      });
    }
    await page.goto(url("/devices/abcabc12"));
    await page.getByText("Device is ambiguous: abcabc12").waitFor();
    await page.waitForURL(/\/fleets$/);
    await page.goto(url("/devices/abcabc121"));
    await page.waitForURL(url(`/devices/abcabc12${"1".repeat(24)}`));
    await page.getByRole("heading", { name: "twin-1" }).waitFor();
  });

  it("a commit prefix opens its release; one that matches several is ambiguous (REL-007)", async () => {
    const post = (commit: string, patch: number) =>
      call<{ id: number }>("POST", "/v7/release", {
        belongs_to__application: ids.fleet,
        commit,
        status: "success",
        composition: {},
        source: "cloud",
        semver_major: 9,
        semver_minor: 0,
        semver_patch: patch,
      });
    const first = await post(`cafe0123${"a".repeat(24)}`, 1);
    await post(`cafe0123${"b".repeat(24)}`, 2);
    await page.goto(url(`/fleets/${ids.fleet}/releases/cafe0123a`));
    await page.waitForURL(url(`/fleets/${ids.fleet}/releases/${first.id}`));
    await page.goto(url(`/fleets/${ids.fleet}/releases/cafe0123`));
    await page.getByText("Release is ambiguous: multiple releases match the hash").waitFor();
    await page.waitForURL(url(`/fleets/${ids.fleet}/releases`));
  });

  it("the releases card flags an invalidated release and says pinned only when the fleet is pinned (REL-055)", async () => {
    const { d } = await call<{ d: Array<{ id: number; commit: string }> }>(
      "GET",
      `/v7/release?$select=id,commit&$filter=belongs_to__application eq ${ids.fleet} and startswith(commit,'cafe0123')&$orderby=id asc`,
    );
    const [valid, invalid] = d as [{ id: number; commit: string }, { id: number; commit: string }];
    await call("PATCH", `/v7/release(${invalid.id})`, { is_invalidated: true });
    // Tracking the latest release: nothing is pinned, though the fleet names its target release.
    await call("PATCH", `/v7/application(${ids.fleet})`, { should_track_latest_release: true });
    await page.goto(url(`/fleets/${ids.fleet}`));
    const card = page.getByRole("table", { name: "Releases" });
    // Both commits start alike (REL-007): the rows differ by version.
    const invalidRow = card.getByRole("row").filter({ hasText: "9.0.2" });
    await invalidRow.getByText("Invalidated").waitFor();
    expect(await card.getByRole("row").filter({ hasText: "9.0.1" }).getByText("Invalidated").count()).toBe(0);
    expect(await card.getByText("pinned", { exact: true }).count()).toBe(0);
    await call("PATCH", `/v7/application(${ids.fleet})`, {
      should_track_latest_release: false,
      should_be_running__release: valid.id,
    });
    await page.reload();
    await card.getByRole("row").filter({ hasText: "9.0.1" }).getByText("pinned", { exact: true }).waitFor();
    await shot(page, "04-fleet-summary-releases");
    await call("PATCH", `/v7/application(${ids.fleet})`, { should_track_latest_release: true });
  });

  it("the release search says why a text over 200 characters cannot search", async () => {
    await page.goto(url(`/fleets/${ids.fleet}/releases`));
    await page.getByLabel("Search version, commit or tag").fill("x".repeat(201));
    await page.getByText("The search text has 201 characters: at most 200 are allowed.").waitFor();
    // No rows, and the pager does not count the previous search's.
    await page.getByText("0–0 of 0").waitFor();
    await shot(page, "05-release-search-too-long");
  });

  it("the add-device dialog shows the type's architecture, latest OS and instructions (DEV-013, DEV-016)", async () => {
    await page.goto(url(`/fleets/${ids.fleet}/devices`));
    await page.getByRole("button", { name: "Add device" }).first().click();
    const dialog = page.getByRole("dialog", { name: /Add a device to/ });
    await dialog.getByText("CPU architecture aarch64 · latest balenaOS 6.2.4").waitFor();
    await dialog.getByRole("radio", { name: "balenaOS" }).check();
    const steps = dialog.getByRole("region", { name: "Installation instructions" }).getByRole("listitem");
    await expect.poll(() => steps.first().textContent()).toBe("Insert the SD card to the host machine.");
    expect(await steps.last().textContent()).toMatch(/^Connect power to the Raspberry Pi 4.* to boot the device\.$/);
    await shot(page, "06-add-device-instructions");
    await dialog.getByRole("button", { name: "Cancel" }).click();
  });

  it("the fleet's log page has its title, shows lines at once, and links each to its device", async () => {
    await page.goto(url(`/fleets/${ids.fleet}/logs`));
    await page.getByRole("heading", { name: "Fleet logs" }).waitFor();
    const results = page.getByRole("list", { name: "Search results" });
    await results.getByRole("listitem").first().waitFor({ timeout: 30_000 });
    const link = results.getByRole("link").first();
    const label = (await link.getAttribute("aria-label")) ?? "";
    expect(label).toMatch(/^Device [0-9a-f]{32}$/);
    await shot(page, "07-fleet-logs");
    await link.click();
    await page.waitForURL(url(`/devices/${label.slice("Device ".length)}`));
  });

  it("the danger zone offers remove access, transfer ownership and delete (FLT-061)", async () => {
    await page.goto(url(`/fleets/${ids.fleet}/settings`));
    const danger = page.getByRole("region", { name: "Danger zone" });
    await danger.getByRole("button", { name: "Show" }).click();
    for (const name of ["Remove access", "Transfer ownership", "Delete"]) {
      await danger.getByRole("button", { name }).waitFor();
    }
    // The demo user administers the organization: no membership of their own to remove.
    await danger.getByText("You have access through your organization role or a team").waitFor();
    expect(await danger.getByRole("button", { name: "Remove access" }).isDisabled()).toBe(true);
    await danger.scrollIntoViewIfNeeded();
    await shot(page, "08-danger-zone");
  });
});
