import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { logIn, shot } from "./accounts-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const OFFLINE_TEXT = "You are offline: Flotilla cannot reach the server.";

/**
 * The offline banner against a server that is stopped and started again (spec 1 §2.5, §4, §9):
 * pings from 10 s after start, offline at the 3rd failure in a row, back when a ping answers.
 */
describe("offline banner", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    flotilla = await startFlotilla();
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(() => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials")));
    page = await context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  it("shows the banner while the server is down and clears it when the server is back", async () => {
    await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await page.waitForURL(`${flotilla.dashboardUrl}/fleets`);
    await page.getByRole("heading", { name: "Fleets", level: 1 }).waitFor();
    const ports = {
      dashboard: Number(new URL(flotilla.dashboardUrl).port),
      api: Number(new URL(flotilla.apiUrl).port),
    };

    expect(await flotilla.stop()).toBe(0);
    const banner = page.getByRole("alert").filter({ hasText: OFFLINE_TEXT });
    await banner.waitFor({ timeout: 40_000 });
    await shot(page, "offline-banner");

    flotilla = await startFlotilla({}, { dataDir: flotilla.dataDir, env: flotilla.env, ports });
    // While offline the pings keep going (at most 2 s apart), so one may clear the banner before
    // this line runs; Retry asks at once when it is still there.
    await page
      .getByRole("button", { name: "Retry" })
      .click({ timeout: 2000 })
      .catch(() => undefined);
    await banner.waitFor({ state: "detached", timeout: 30_000 });
    // The page works again without a reload.
    await page.getByRole("link", { name: "Organizations" }).click();
    await page.getByRole("heading", { name: "Organizations", level: 1 }).waitFor();
  }, 150_000);
});
