import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { screenshot, signIn } from "./web-helpers.ts";

/**
 * The error page (spec 1 §2.2; FND-004..006) on a real failure, no mocks: the server runs with a
 * small rate limit of API requests per minute (FLOTILLA_RATE_LIMIT). Once the fleets page has
 * loaded, the page spends the rest of its address's budget; reloading makes the session check
 * answer 429 with a Retry-After longer than the dashboard waits out, so the page fails.
 */
describe("error page", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  useDashboard({ FLOTILLA_RATE_LIMIT: "30" }, (ui) => {
    ({ flotilla, page } = ui);
  });

  it("shows something went wrong, the status text of the failure, and Refresh reloads the page", async () => {
    await page.goto(`${flotilla.dashboardUrl}/login`);
    await signIn(page);
    await page.waitForURL(`${flotilla.dashboardUrl}/fleets`);
    await page.getByRole("heading", { name: "Fleets", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Account menu" }).getByText("demo").waitFor();
    // The rest of the minute's budget, from the browser itself (the limit counts per address).
    const spent = await page.evaluate(async (apiUrl) => {
      for (let n = 0; n < 60; n++) if ((await fetch(`${apiUrl}/v7/device?$top=1`)).status === 429) return true;
      return false;
    }, flotilla.apiUrl);
    expect(spent).toBe(true);

    const rateLimited = page.waitForResponse((response) => /\/v7\/user\(\d+\)/.test(response.url()));
    await page.reload();
    expect((await rateLimited).status()).toBe(429);

    const heading = page.getByRole("heading", { level: 1 });
    await heading.waitFor();
    expect((await heading.textContent())?.toLowerCase()).toBe("something went wrong");
    await page.getByText("429 Too Many Requests", { exact: true }).waitFor();
    await page.getByText("Too Many Requests. Try again later.", { exact: true }).waitFor();
    await screenshot(page, "error-page");

    await page.evaluate(() => {
      (window as unknown as { beforeRefresh?: boolean }).beforeRefresh = true;
    });
    const reloaded = page.waitForEvent("load");
    await page.getByRole("button", { name: "Refresh" }).click();
    await reloaded;
    expect(await page.evaluate(() => (window as unknown as { beforeRefresh?: boolean }).beforeRefresh)).toBeUndefined();
    // Still inside the same minute: the reloaded page fails the same way.
    await page.getByText("429 Too Many Requests", { exact: true }).waitFor();
    expect(pathOfPage(page)).toBe("/fleets");
  }, 90_000);
});

function pathOfPage(page: Page) {
  return new URL(page.url()).pathname;
}
