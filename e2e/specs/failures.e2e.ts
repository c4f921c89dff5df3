import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { startDemoSession } from "./demo-session.ts";
import { api, consent, demoIds } from "./fleets-helpers.ts";
import { DEMO, screenshot } from "./web-helpers.ts";

/**
 * Failures the dashboard must show (issue 17): a data load that fails ends on the error page, a
 * missing organization or a fleet-only page of a block gets the not-found handling.
 */
describe("failures the dashboard shows", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  const ids = { fleet: 0, block: 0, org: 0 };
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;
  const call = <T>(method: string, path: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, path, body);

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(0, { viewport: { width: 1280, height: 800 } }));
    Object.assign(ids, await demoIds(page, flotilla.apiUrl));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  /** The error page of spec 1 §2.2, as a person sees it. */
  async function expectErrorPage(status: string) {
    await page.getByRole("heading", { name: "Something went wrong", level: 1 }).waitFor();
    await page.getByText(status, { exact: true }).waitFor();
    await page.getByRole("button", { name: "Refresh" }).waitFor();
  }

  it("shows the error page when a page's data fails to load, not a blank page", async () => {
    // The organization's own row answers 500 (a failing database, say); everything else works.
    await page.route(/\/v7\/organization\(\d+\)/, (route) =>
      route.request().method() === "GET"
        ? route.fulfill({ status: 500, body: "database unavailable" })
        : route.continue(),
    );
    await page.goto(url(`/orgs/${ids.org}`));
    await expectErrorPage("500 Internal Server Error");
    // The frame stays: the person can still go elsewhere.
    await page.getByRole("navigation").first().waitFor();
    await screenshot(page, "failures-data-load-error");
    await page.unroute(/\/v7\/organization\(\d+\)/);
  });

  it("sends a missing organization to the organizations list with a toast, as a missing fleet goes to /fleets", async () => {
    await page.goto(url("/fleets/99999"));
    await page.waitForURL(url("/fleets"));
    await page.getByText("Fleet not found: 99999", { exact: true }).waitFor();

    for (const path of ["/orgs/99999", "/orgs/99999/members"]) {
      await page.goto(url(path));
      await page.waitForURL(url("/orgs"));
      await page.getByText("Resource not found", { exact: true }).first().waitFor();
      await page.getByRole("heading", { name: "Organizations", level: 1 }).waitFor();
    }
  });

  it("sends a fleet-only page of a block (its devices) to the block with a toast", async () => {
    await page.goto(url(`/blocks/${ids.block}/devices`));
    await page.waitForURL(url(`/blocks/${ids.block}`));
    await page.getByText("Resource not found", { exact: true }).first().waitFor();
    await page.getByRole("heading", { name: "demo-block", level: 1 }).waitFor();
  });

  it("shows the catalogue's text for an API error, never 'Request error:', a data rule or [object Object]", async () => {
    await page.goto(url("/organization/invitation/not-a-real-invitation"));
    await page.waitForURL(url("/orgs"));
    await page.getByText("Invitation invalid or expired.", { exact: true }).waitFor();
    const text = await page.locator("body").innerText();
    expect(text).not.toContain("Request error");
    expect(text).not.toContain("[object Object]");
    expect(text).not.toContain("It is necessary that");
  });

  it("disables Create API key with the reason for an organization member, as the server refuses it", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(consent);
    const member = await context.newPage();
    await logIn(member, flotilla.dashboardUrl, "demo-member", DEMO.password);
    await member.waitForURL((address) => address.pathname !== "/login");
    await member.goto(url("/preferences/access-tokens"));
    await member
      .getByText("Creating API keys needs the administrator role in an organization.", { exact: true })
      .waitFor();
    await expect.poll(() => member.getByRole("button", { name: "Create API key" }).isDisabled()).toBe(true);
    await member.waitForTimeout(400); // the button's colour transition, for the screenshot only
    await screenshot(member, "failures-api-key-member");
    await context.close();
    // The organization's administrator may.
    await page.goto(url("/preferences/access-tokens"));
    await page.getByRole("heading", { name: "Access tokens" }).waitFor();
    await expect.poll(() => page.getByRole("button", { name: "Create API key" }).isEnabled()).toBe(true);
  });

  it("starts the create-fleet dialog in the organization the user works in, not the alphabetically first", async () => {
    // A second organization the demo user administers, first in alphabetical order.
    await call("POST", "/v7/organization", { name: "Acme" });
    await page.goto(url(`/orgs/${ids.org}`));
    await page.getByRole("heading", { name: "Demo", level: 1 }).waitFor();
    // Then the fleets list of all organizations.
    await page.goto(url("/fleets"));
    await page.getByRole("button", { name: "Create fleet" }).first().click();
    const dialog = page.getByRole("dialog", { name: "Create fleet" });
    const organization = dialog.getByLabel("Organization");
    await expect.poll(() => organization.textContent()).toBe("Demo");
    // Both are offered.
    await organization.click();
    await page.getByRole("option", { name: "Acme", exact: true }).waitFor();
    await page.keyboard.press("Escape");
    await screenshot(page, "failures-create-fleet-organization");
    await dialog.getByRole("button", { name: "Cancel" }).click();
  });

  it("logs out with 'Your session has expired.' when the session is revoked, instead of showing empty lists", async () => {
    await page.goto(url("/fleets"));
    await page.getByRole("heading", { name: "Fleets", level: 1 }).waitFor();
    await page.getByText("demo-fleet", { exact: true }).first().waitFor();
    // The session ends on the server (a logout elsewhere, an administrator revoking it).
    await call("POST", "/logout", {});
    // The next data load (the organizations list, within the 30 s the session check is trusted).
    await page.getByRole("link", { name: "Organizations" }).first().click();
    await page.waitForURL((address) => address.pathname === "/login");
    await page.getByText("Your session has expired.", { exact: true }).waitFor();
    await screenshot(page, "failures-session-expired");
    // Signing in again works and goes back to the page.
    await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await page.waitForURL((address) => address.pathname !== "/login");
  });

  it("does not refresh the token every second when the browser's clock is an hour ahead of the server's", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(consent);
    // The computer's clock is an hour fast: Date.now() and new Date() in the page say so.
    await context.addInitScript(() => {
      const offset = 3_600_000;
      const RealDate = Date;
      class FastDate extends RealDate {
        constructor(...args: unknown[]) {
          if (args.length === 0) super(RealDate.now() + offset);
          else super(...(args as [string]));
        }
        static override now() {
          return RealDate.now() + offset;
        }
      }
      globalThis.Date = FastDate as DateConstructor;
    });
    const skewed = await context.newPage();
    const refreshes: string[] = [];
    skewed.on("request", (request) => {
      if (request.url().includes("/user/v1/refresh-token")) refreshes.push(request.url());
    });
    await logIn(skewed, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await skewed.waitForURL(/\/fleets$/);
    await skewed.getByRole("heading", { name: "Fleets", level: 1 }).waitFor();
    // A window of several token checks (one a second): before the fix each one asked for a new token.
    await skewed.waitForTimeout(6000);
    expect(refreshes.length).toBeLessThanOrEqual(1);
    // Still signed in and working.
    await skewed.getByRole("link", { name: "Organizations" }).first().click();
    await skewed.getByRole("heading", { name: "Organizations", level: 1 }).waitFor();
    await context.close();
  });
});
