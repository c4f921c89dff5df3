import { mkdirSync } from "node:fs";
import type { Page } from "playwright-core";

/** Shared bits of the dashboard-shell specs. Screenshots go to e2e/screenshots/ (git-ignored). */

export const DEMO = { email: "demo@example.com", password: "demo-password-1" } as const;

const screenshotDir = new URL("../screenshots/", import.meta.url);

export async function screenshot(page: Page, name: string) {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, screenshotDir).pathname });
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
