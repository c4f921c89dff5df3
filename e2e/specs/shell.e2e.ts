import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { DEMO, pathOf, recordUrls, screenshot, signIn } from "./web-helpers.ts";

/**
 * The dashboard shell against the real server (spec 1 §2.1, §2.2, §2.5; checklist FND-001..003):
 * redirects, guards, sign-in, the signed-in frame and the not-found page.
 */
describe("dashboard shell", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  useDashboard({}, (ui) => {
    ({ flotilla, page } = ui);
  });

  it("shows the not-found page for an unknown path, and Go home leads to / → /fleets → /login", async () => {
    const response = await page.goto(`${flotilla.dashboardUrl}/no-such-page`);
    expect(response?.ok()).toBe(true);
    await page.getByRole("heading", { name: "Page not found", level: 1 }).waitFor();
    expect(await page.title()).toBe("Page not found · Flotilla");
    await screenshot(page, "not-found");

    const urls = recordUrls(page);
    await page.getByRole("link", { name: "Go home" }).click();
    await page.waitForURL(`${flotilla.dashboardUrl}/login?redirect=%2Ffleets`);
    await page.getByRole("heading", { name: "Log in to Flotilla" }).waitFor();
    const paths = urls.map(pathOf);
    expect(paths.indexOf("/")).toBeGreaterThanOrEqual(0);
    expect(paths.indexOf("/fleets")).toBeGreaterThan(paths.indexOf("/"));
    expect(paths.indexOf("/login?redirect=%2Ffleets")).toBeGreaterThan(paths.indexOf("/fleets"));
  }, 60_000);

  it("sends a signed-out visitor from / to /fleets to /login?redirect=…, and signing in lands on /fleets", async () => {
    const urls = recordUrls(page);
    await page.goto(`${flotilla.dashboardUrl}/`);
    await page.waitForURL(`${flotilla.dashboardUrl}/login?redirect=%2Ffleets`);
    const paths = urls.map(pathOf);
    expect(paths[0]).toBe("/");
    expect(paths).toContain("/fleets");
    await page.getByText("Your first 10 devices are free.").waitFor();
    await screenshot(page, "login");

    await signIn(page);
    await page.waitForURL(`${flotilla.dashboardUrl}/fleets`);
    await page.getByRole("heading", { name: "Fleets", level: 1 }).waitFor();
    const nav = page.getByRole("navigation", { name: "Main navigation" });
    expect(await nav.getByRole("link", { name: "Fleets" }).getAttribute("aria-current")).toBe("page");
    expect(await nav.getByRole("link", { name: "Blocks" }).isVisible()).toBe(true);
    expect(await nav.getByRole("link", { name: "Organizations" }).isVisible()).toBe(true);
    // Apps only with the display-apps option, which is off by default.
    expect(await nav.getByRole("link", { name: "Apps" }).count()).toBe(0);
    const breadcrumb = page.getByRole("navigation", { name: "Breadcrumb" });
    expect(await breadcrumb.getByRole("link", { name: "Home" }).isVisible()).toBe(true);
    expect(await breadcrumb.getByText("Fleets").isVisible()).toBe(true);
    await screenshot(page, "fleets-sidebar-expanded");
  }, 60_000);

  it("rejects a wrong password with the catalogue text and keeps the visitor on /login", async () => {
    await page.goto(`${flotilla.dashboardUrl}/login`);
    await signIn(page, DEMO.email, "not-the-password");
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect((await alert.textContent())?.trim()).toBe("Invalid login credentials.");
    expect(pathOf(page.url())).toBe("/login");
    await page.waitForTimeout(300); // let the button finish its loading transition
    await screenshot(page, "login-invalid-credentials");
  }, 60_000);

  it("honours the redirect query after login and sends signed-in visitors of /login home", async () => {
    await page.goto(`${flotilla.dashboardUrl}/orgs`);
    await page.waitForURL(`${flotilla.dashboardUrl}/login?redirect=%2Forgs`);
    await signIn(page);
    await page.waitForURL(`${flotilla.dashboardUrl}/orgs`);
    await page.getByRole("heading", { name: "Organizations", level: 1 }).waitFor();

    await page.goto(`${flotilla.dashboardUrl}/login`);
    await page.waitForURL(`${flotilla.dashboardUrl}/fleets`);
    await page.getByRole("heading", { name: "Fleets", level: 1 }).waitFor();
  }, 60_000);

  it("collapses the sidebar to icons, remembers it across reloads, and logs out from the user menu", async () => {
    await page.goto(`${flotilla.dashboardUrl}/login`);
    await signIn(page);
    await page.waitForURL(`${flotilla.dashboardUrl}/fleets`);
    const nav = page.getByRole("navigation", { name: "Main navigation" });
    await nav.getByRole("link", { name: "Fleets" }).waitFor();
    expect(Math.round((await nav.boundingBox())?.width ?? 0)).toBe(220);

    await page.getByRole("button", { name: "Collapse sidebar" }).click();
    await page.getByRole("button", { name: "Expand sidebar" }).waitFor();
    await page.waitForFunction(
      () => document.querySelector("nav[aria-label='Main navigation']")?.getBoundingClientRect().width === 56,
    );
    // Icons keep their accessible names when the labels are hidden.
    expect(await nav.getByRole("link", { name: "Blocks" }).isVisible()).toBe(true);
    await screenshot(page, "fleets-sidebar-collapsed");

    await page.reload();
    await page.getByRole("button", { name: "Expand sidebar" }).waitFor();
    expect(Math.round((await nav.boundingBox())?.width ?? 0)).toBe(56);
    await page.getByRole("button", { name: "Expand sidebar" }).click();
    await page.getByRole("button", { name: "Collapse sidebar" }).waitFor();

    await page.getByRole("button", { name: "Account menu" }).click();
    const menu = page.getByRole("menu");
    await menu.getByText("demo", { exact: true }).waitFor();
    await menu.getByRole("menuitem", { name: "Log out" }).waitFor();
    await page.waitForTimeout(400); // let the menu finish fading in
    await screenshot(page, "user-menu");
    await menu.getByRole("menuitem", { name: "Log out" }).click();
    await page.waitForURL(`${flotilla.dashboardUrl}/login`);
    await page.goto(`${flotilla.dashboardUrl}/fleets`);
    await page.waitForURL(`${flotilla.dashboardUrl}/login?redirect=%2Ffleets`);
  }, 60_000);

  it("serves hashed assets and a build id without inline scripts", async () => {
    const html = await (await fetch(`${flotilla.dashboardUrl}/`)).text();
    expect(html).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const info = (await (await fetch(`${flotilla.dashboardUrl}/build-info.json`)).json()) as { buildId?: unknown };
    expect(typeof info.buildId).toBe("string");
    expect(info.buildId).not.toBe("dev");
  }, 30_000);
});
