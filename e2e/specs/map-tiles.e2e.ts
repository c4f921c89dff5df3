import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { firstDeviceUuid } from "./demo-session.ts";
import { consent } from "./fleets-helpers.ts";
import { DEMO, screenshot } from "./web-helpers.ts";

/** A 1×1 grey PNG: every tile of the stand-in tile server. */
const TILE = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGPo6OgAAAMEAYFL09IQAAAAAElFTkSuQmCC",
  "base64",
);

/**
 * The device map's tiles come from FLOTILLA_MAP_TILES (issue 17): a deployment's own tile server
 * (plain http here, which the dashboard's CSP must name), or none at all — and never from
 * OpenStreetMap then.
 */
describe.each([{ tiles: "own" as const }, { tiles: "none" as const }])("device map tiles: $tiles", ({ tiles }) => {
  let tileServer: http.Server;
  let tileRequests = 0;
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  const offside: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    tileServer = http.createServer((_request, response) => {
      tileRequests += 1;
      response.writeHead(200, { "Content-Type": "image/png" });
      response.end(TILE);
    });
    await new Promise<void>((resolve) => tileServer.listen(0, "127.0.0.1", resolve));
    const { port } = tileServer.address() as AddressInfo;
    flotilla = await startFlotilla({
      FLOTILLA_DEMO_DEVICES: "1",
      FLOTILLA_MAP_TILES: tiles === "own" ? `http://127.0.0.1:${port}/{z}/{x}/{y}.png` : "none",
    });
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(consent);
    page = await context.newPage();
    page.on("request", (request) => {
      const host = new URL(request.url()).hostname;
      if (host !== "localhost" && host !== "127.0.0.1") offside.push(request.url());
    });
    page.on("console", (message) => {
      if (message.text().includes("Content Security Policy")) cspViolations.push(message.text());
    });
    await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await page.waitForURL(/\/fleets$/);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
    await new Promise<void>((resolve) => tileServer?.close(() => resolve()));
  });

  it("shows the device location map with the configured tiles and no third-party request", async () => {
    let uuid = "";
    await expect
      .poll(
        async () => {
          uuid = await firstDeviceUuid(page, flotilla.apiUrl);
          return uuid;
        },
        { timeout: 60_000 },
      )
      .not.toBe("");
    await page.goto(`${flotilla.dashboardUrl}/devices/${uuid}/location`);
    await page.getByRole("region", { name: "Device location map" }).waitFor();
    if (tiles === "own") {
      await expect.poll(() => tileRequests).toBeGreaterThan(0);
    } else {
      // The map is drawn (its zoom control) without asking anyone for tiles.
      await page.getByRole("button", { name: "Zoom in" }).waitFor();
      expect(tileRequests).toBe(0);
    }
    await screenshot(page, `map-tiles-${tiles}`);
    expect(offside).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
