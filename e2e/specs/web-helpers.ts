import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { DEMO_EMAIL, DEMO_PASSWORD, screenshotPath } from "../support/flotilla.ts";

/** Shared bits of the dashboard-shell specs. Screenshots go to e2e/screenshots/ (git-ignored). */

export const DEMO = { email: DEMO_EMAIL, password: DEMO_PASSWORD } as const;

export async function screenshot(page: Page, name: string) {
  const file = screenshotPath(name);
  mkdirSync(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file });
}

/** Every URL the tab shows, including history.pushState/replaceState changes of the SPA. */
export function recordUrls(page: Page): string[] {
  const urls: string[] = [];
  page.on("framenavigated", (frame) => {
    if (frame === page.mainFrame()) urls.push(frame.url());
  });
  return urls;
}

export async function signIn(page: Page, email: string = DEMO.email, password: string = DEMO.password) {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
}

export function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

/**
 * Waits for a form's submit to land on `url`. Registration hashes a password and mails a link,
 * which a loaded machine makes slow; when the page does not get there, the error names the
 * form's alerts instead of a bare timeout.
 */
export async function submittedTo(page: Page, url: string | RegExp, timeout = 60_000) {
  await page.waitForURL(url, { timeout }).catch(async (error: unknown) => {
    const alerts = await page.getByRole("alert").allInnerTexts();
    const form = await page.locator("form").allInnerTexts();
    throw new Error(
      `the form did not reach ${url} (at ${page.url()}); alerts: ${JSON.stringify(alerts)}; form: ${JSON.stringify(form)}`,
      {
        cause: error,
      },
    );
  });
}
