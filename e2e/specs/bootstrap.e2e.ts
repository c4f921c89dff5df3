import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { screenshot } from "./web-helpers.ts";

/**
 * A failed start-up (spec 1 §8; FND-007, FND-008): the page gets the load-failed marker and
 * retries by itself after 10 seconds. The failure is injected on one request only: the first
 * `/config.json` answers 503 (Playwright's page.route); everything else is the real server.
 */
describe("bootstrap failure", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  useDashboard({}, (ui) => {
    ({ flotilla, page } = ui);
  });

  it("marks the page load-failed and retries the start-up by itself after 10 seconds", async () => {
    const configRequests: number[] = [];
    let failNext = true;
    await page.route(`${flotilla.dashboardUrl}/config.json`, async (route) => {
      configRequests.push(Date.now());
      if (failNext) {
        failNext = false;
        await route.fulfill({ status: 503, contentType: "text/plain", body: "Service Unavailable" });
      } else {
        await route.continue();
      }
    });

    await page.goto(`${flotilla.dashboardUrl}/login`);
    await page.waitForSelector("html[data-load-failed='true']");
    await page.getByRole("alert").getByText("Flotilla could not load").waitFor();
    await screenshot(page, "bootstrap-failed");

    // No reload: the same document starts again by itself.
    await page.evaluate(() => {
      (window as unknown as { sameDocument?: boolean }).sameDocument = true;
    });
    await page.getByRole("heading", { name: "Log in to Flotilla" }).waitFor({ timeout: 20_000 });
    expect(configRequests).toHaveLength(2);
    const waited = (configRequests[1] ?? 0) - (configRequests[0] ?? 0);
    expect(waited).toBeGreaterThanOrEqual(10_000);
    expect(waited).toBeLessThan(13_000);
    expect(await page.evaluate(() => document.documentElement.dataset.loadFailed)).toBeUndefined();
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
  }, 60_000);
});
