import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { firstDeviceUuid, startDemoSession } from "./demo-session.ts";
import { api } from "./fleets-helpers.ts";
import { screenshot } from "./web-helpers.ts";

/**
 * What device actions tell a person (issue 17): a batch reports every failure and no success
 * when some items failed; opening a terminal does not make the device page wider than the window.
 */
describe("device action feedback", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let fleetId = 0;
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(2));
    const apps = await api<{ d: Array<{ id: number; app_name: string }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/application?$select=id,app_name",
    );
    fleetId = apps.d.find((app) => app.app_name === "demo-fleet")?.id ?? 0;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  const devices = () =>
    api<{ d: Array<{ uuid: string; is_connected_to_vpn: boolean }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/device?$select=uuid,is_connected_to_vpn&$orderby=id asc",
    );

  it("reports the failure of one device in a batch and shows no success toast", async () => {
    await expect
      .poll(async () => (await devices()).d.filter((device) => device.is_connected_to_vpn).length, { timeout: 60_000 })
      .toBe(2);
    const [first] = (await devices()).d;
    // The first device's blink is answered as balena's relay answers for a device it cannot reach.
    await page.route(/\/supervisor\/v1\/blink$/, async (route) => {
      const body = route.request().postData() ?? "";
      const response = await route.fetch();
      if (first && body.includes(first.uuid)) {
        await route.fulfill({
          response,
          status: 400,
          contentType: "text/plain",
          body: "No online device(s) found",
        });
      } else await route.fulfill({ response });
    });
    const toasts: string[] = [];
    await page.goto(url(`/fleets/${fleetId}/devices`));
    const grid = page.getByRole("grid", { name: "Devices" });
    await expect.poll(() => grid.getByRole("row").count(), { timeout: 30_000 }).toBe(3);
    await grid.getByRole("checkbox", { name: "Select all rows" }).check();
    await page.getByRole("button", { name: "Actions" }).click();
    await page.getByRole("menuitem", { name: "Blink" }).click();
    await page.getByRole("dialog", { name: "Blink" }).getByRole("button", { name: "Blink" }).click();
    const report = page.getByText(
      "The operation failed for 1 of the selected items. Operation failed with: No online device(s) found.",
      { exact: true },
    );
    await report.waitFor();
    toasts.push(...(await page.getByRole("alert").allInnerTexts()));
    expect(toasts.join("\n")).not.toContain("Blink sent");
    await screenshot(page, "device-batch-partial-failure");
    await page.unroute(/\/supervisor\/v1\/blink$/);
  });

  it("keeps the device page within a 1280 px window when a terminal opens", async () => {
    const uuid = await firstDeviceUuid(page, flotilla.apiUrl);
    await page.goto(url(`/devices/${uuid}`));
    const card = page.getByRole("region", { name: "Terminal" });
    await card.waitFor();
    const width = () =>
      page.evaluate(() => {
        const main = document.querySelector("main") ?? document.body;
        return { page: document.documentElement.scrollWidth, main: main.scrollWidth, view: main.clientWidth };
      });
    const before = await width();
    expect(before.page).toBeLessThanOrEqual(1280);
    await card.scrollIntoViewIfNeeded();
    await card.getByRole("button", { name: "New session" }).click();
    await card.getByText("Connected", { exact: true }).waitFor({ timeout: 60_000 });
    const output = card.getByRole("log").first();
    await expect.poll(() => output.textContent(), { timeout: 15_000 }).toContain("#");
    const after = await width();
    await screenshot(page, "device-terminal-width");
    expect(after.page).toBeLessThanOrEqual(1280);
    expect(after.main).toBeLessThanOrEqual(after.view);
    expect(after.main).toBe(before.main);
  }, 120_000);
});
