import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { DEMO, screenshot, signIn } from "./web-helpers.ts";

/**
 * The cookie banner (spec 1 §2.5) is asked once per browser; until it is answered it must not
 * cover a form's primary button (issue 17): login, sign-up and a settings form, at 1280×720 and
 * 1440×900. "Covered" is what a person sees: the button, scrolled into view, is the element at
 * its centre and at its corners.
 */
describe("cookie banner", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  useDashboard({}, (ui) => {
    ({ flotilla, page } = ui);
  });

  async function expectUncovered(name: string) {
    const button = page.getByRole("button", { name, exact: true });
    await button.scrollIntoViewIfNeeded();
    await page.getByRole("region", { name: "Cookie preferences" }).waitFor();
    const hits = await button.evaluate((element) => {
      const box = element.getBoundingClientRect();
      const inset = 3;
      const points: Array<[number, number]> = [
        [box.left + box.width / 2, box.top + box.height / 2],
        [box.left + inset, box.top + inset],
        [box.right - inset, box.top + inset],
        [box.left + inset, box.bottom - inset],
        [box.right - inset, box.bottom - inset],
      ];
      return points.map(([x, y]) => {
        const found = document.elementFromPoint(x, y);
        return found !== null && (found === element || element.contains(found));
      });
    });
    expect(hits, `"${name}" is covered at ${page.viewportSize()?.width}×${page.viewportSize()?.height}`).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
  }

  for (const viewport of [
    { width: 1280, height: 720 },
    { width: 1440, height: 900 },
  ]) {
    it(`does not cover the primary button of login, sign-up and a settings form at ${viewport.width}×${viewport.height}`, async () => {
      await page.setViewportSize(viewport);
      await page.goto(`${flotilla.dashboardUrl}/login`);
      await page.getByRole("heading", { name: "Log in to Flotilla" }).waitFor();
      await expectUncovered("Log in");
      // A failed attempt adds its message above the button, which moves down.
      await signIn(page, DEMO.email, "not-the-password");
      await page.getByText("Invalid login credentials.", { exact: true }).waitFor();
      await expectUncovered("Log in");
      await screenshot(page, `cookie-banner-login-${viewport.width}`);

      await page.goto(`${flotilla.dashboardUrl}/signup`);
      await expectUncovered("Create account");
      await screenshot(page, `cookie-banner-signup-${viewport.width}`);

      await page.goto(`${flotilla.dashboardUrl}/login`);
      await signIn(page, DEMO.email, DEMO.password);
      await page.waitForURL(/\/fleets$/);
      await page.goto(`${flotilla.dashboardUrl}/preferences/profile`);
      await expectUncovered("Save profile");
      await screenshot(page, `cookie-banner-settings-${viewport.width}`);
    });
  }
});
