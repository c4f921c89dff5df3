import crypto from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { payForPlan } from "./billing-helpers.ts";
import { api, consent, demoIds, shot } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

/** The 120 devices the filter matches share this uuid prefix; 10 others do not. */
const PREFIX = "5e1ec7a11";
const MATCHING = 120;

/**
 * Issue [scale]: select every device that matches a filter (more than a page), add a tag to all
 * of them in pages of 50 ids with progress, see the batch report, and find the tag on all 120.
 */
describe("devices: select all that match and run a batch action over them", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let fleetId = 0;
  let otherFleetId = 0;
  const call = <T>(method: string, p: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, p, body);

  beforeAll(async () => {
    flotilla = await startFlotilla();
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(consent);
    // Runs page ids by 50 instead of 500, so that 120 devices take three pages.
    await context.addInitScript(() => localStorage.setItem("flotilla.batchPageSize", "50"));
    page = await context.newPage();
    await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await page.waitForURL(/\/fleets$/);
    const ids = await demoIds(page, flotilla.apiUrl);
    fleetId = ids.fleet;
    // The free plan takes 10 devices; 130 need a paid one.
    await payForPlan(page, flotilla.apiUrl, ids.org, "production-v2");
    const types = await call<{ d: Array<{ id: number }> }>(
      "GET",
      "/v7/device_type?$select=id&$filter=slug eq 'raspberrypi4-64'",
    );
    otherFleetId = (
      await call<{ id: number }>("POST", "/v7/application", {
        app_name: "second-fleet",
        organization: ids.org,
        is_for__device_type: types.d[0]?.id,
      })
    ).id;
    const key = await call<string>("POST", "/api-key/v2/", {
      actorType: "application",
      actorTypeId: fleetId,
      roles: ["provisioning-api-key"],
    });
    const register = (uuid: string) =>
      fetch(`${flotilla.apiUrl}/device/register`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({
          application: fleetId,
          uuid,
          device_type: "raspberrypi4-64",
          api_key: crypto.randomBytes(20).toString("hex"),
        }),
      }).then((response) => response.status);
    const uuids = [
      ...Array.from({ length: MATCHING }, () => PREFIX + crypto.randomBytes(16).toString("hex").slice(PREFIX.length)),
      ...Array.from({ length: 10 }, () => `0${crypto.randomBytes(16).toString("hex").slice(1)}`),
    ];
    const statuses: number[] = [];
    for (let start = 0; start < uuids.length; start += 10) {
      statuses.push(...(await Promise.all(uuids.slice(start, start + 10).map(register))));
    }
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  it("tags all 120 matching devices in pages, with progress and the batch report", async () => {
    await page.goto(`${flotilla.dashboardUrl}/fleets/${fleetId}/devices?filter=${PREFIX}`);
    const grid = page.getByRole("grid", { name: "Devices" });
    await page.getByRole("combobox", { name: /rows per page/i }).click();
    await page.getByRole("option", { name: "50", exact: true }).click();
    await expect.poll(() => grid.getByRole("row").count(), { timeout: 30_000 }).toBe(51);

    await grid.getByRole("checkbox", { name: "Select all rows" }).check();
    await page.getByText("All 50 devices on this page are selected.").waitFor();
    await page.getByRole("button", { name: `Select all ${MATCHING} devices that match` }).click();
    await page.getByText(`All ${MATCHING} devices that match are selected.`).waitFor();
    await page.getByText(`${MATCHING} selected`).waitFor();
    // The grid's footer counts them all too, not the page's 50 rows.
    await page.getByText(`${MATCHING} rows selected`).waitFor();
    await shot(page, "40-all-matching-selected");

    // Only the data API writes run over all matching devices: no reboot of 120 by accident.
    await page.getByRole("button", { name: "Actions" }).click();
    expect(await page.getByRole("menuitem").allTextContents()).toEqual([
      "Move to another fleet",
      "Pin to release",
      "Add a tag",
      "Delete",
    ]);
    await page.getByRole("menuitem", { name: "Add a tag" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a tag" });
    await dialog.getByText(`This applies to all ${MATCHING} devices that match the list's filter.`).waitFor();
    await dialog.getByLabel("Tag name").fill("batch");
    await dialog.getByLabel("Value").fill("all");

    // Each id page waits a little, so that the progress between pages can be seen.
    await page.route(/\/v7\/device\?.*select=id&/, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 600));
      await route.continue();
    });
    await dialog.getByRole("button", { name: "Save tags" }).click();
    await dialog.getByText(`50 of ${MATCHING} devices`).waitFor();
    await dialog.getByRole("progressbar", { name: "Progress" }).waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).waitFor();
    await shot(page, "41-all-matching-progress");
    await dialog.getByText(`Done for ${MATCHING} devices.`).waitFor({ timeout: 30_000 });
    await shot(page, "42-all-matching-report");
    await dialog.getByRole("button", { name: "Close" }).click();
    await page.unroute(/\/v7\/device\?.*select=id&/);

    const tagged = await call<{ d: Array<{ device: { __id: number } }> }>(
      "GET",
      "/v7/device_tag?$select=device&$filter=tag_key eq 'batch' and value eq 'all'",
    );
    const matching = await call<{ d: Array<{ id: number }> }>(
      "GET",
      `/v7/device?$select=id&$filter=startswith(uuid,'${PREFIX}')`,
    );
    expect(matching.d).toHaveLength(MATCHING);
    expect(new Set(tagged.d.map((row) => row.device.__id))).toEqual(new Set(matching.d.map((row) => row.id)));
  }, 120_000);

  it("moves all 120 matching devices to another fleet", async () => {
    await page.getByText(`All ${MATCHING} devices that match are selected.`).waitFor();
    await page.getByRole("button", { name: "Actions" }).click();
    await page.getByRole("menuitem", { name: "Move to another fleet" }).click();
    const dialog = page.getByRole("dialog", { name: "Move to another fleet" });
    await dialog.getByLabel("Target fleet").click();
    await page.getByRole("option", { name: "second-fleet" }).click();
    await dialog.getByRole("button", { name: "Move" }).click();
    await dialog.getByText(`Done for ${MATCHING} devices.`).waitFor({ timeout: 30_000 });
    await dialog.getByRole("button", { name: "Close" }).click();
    // They left the list, and the selection with them.
    await page
      .getByText("No devices match")
      .or(page.getByText(/no devices/i).first())
      .waitFor();
    const moved = await call<{ d: Array<{ id: number }> }>(
      "GET",
      `/v7/device?$select=id&$filter=startswith(uuid,'${PREFIX}') and belongs_to__application eq ${otherFleetId}`,
    );
    expect(moved.d).toHaveLength(MATCHING);
  }, 60_000);
});
