import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { startDemoSession } from "./demo-session.ts";
import { api, shot } from "./fleets-helpers.ts";

/**
 * The demo's simulated devices (issue 7): the server starts `flotilla-agent simulate` for
 * demo-fleet, the devices register, turn operational and stand in a few cities; after a restart
 * the same devices come back instead of new ones.
 */
describe("demo devices", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  const devices = () =>
    api<{ d: Array<{ uuid: string; overall_status: string; custom_latitude: string | null }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/device?$select=uuid,overall_status,custom_latitude&$orderby=id asc",
    ).then((answer) => answer.d);

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(3, { viewport: { width: 1280, height: 800 } }));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  it("runs three operational devices in demo-fleet, placed on the map", async () => {
    await expect
      .poll(async () => (await devices()).map((device) => device.overall_status).join(","), {
        timeout: 90_000,
        interval: 1000,
      })
      .toBe("operational,operational,operational");
    await expect.poll(async () => (await devices()).every((device) => device.custom_latitude !== null)).toBe(true);
    await page.getByRole("link", { name: "demo-fleet" }).first().click();
    await page.getByRole("link", { name: "Devices" }).click();
    await page.getByRole("button", { name: "Map" }).click();
    await page.getByRole("region", { name: "Map" }).waitFor();
    await page.getByText("3 of the 3 devices on this page have a location.").waitFor();
    await shot(page, "25-demo-map");
  }, 120_000);

  it("brings the same devices back after a restart", async () => {
    const before = (await devices()).map((device) => device.uuid);
    expect(await flotilla.stop()).toBe(0);
    // The same address as before: the simulator's identities belong to the API they registered with.
    const ports = {
      dashboard: Number(new URL(flotilla.dashboardUrl).port),
      api: Number(new URL(flotilla.apiUrl).port),
    };
    flotilla = await startFlotilla(
      { FLOTILLA_DEMO_DEVICES: "3" },
      { dataDir: flotilla.dataDir, env: flotilla.env, ports },
    );
    // The session survives the restart.
    await page.goto(`${flotilla.dashboardUrl}/fleets`);
    await expect
      .poll(async () => (await devices()).map((device) => device.overall_status).join(","), {
        timeout: 90_000,
        interval: 1000,
      })
      .toBe("operational,operational,operational");
    expect((await devices()).map((device) => device.uuid)).toEqual(before);
  }, 150_000);
});
