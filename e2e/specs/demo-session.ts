import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { api, consent } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

export type DemoSession = { flotilla: RunningFlotilla; browser: Browser; page: Page };

/**
 * The demo with `devices` simulated devices (and the server settings in `env`), and a Chromium tab (1280 × 900, cookie consent
 * given) signed in as the demo user on the fleets page: the start of the device specs.
 */
export async function startDemoSession(
  devices: number,
  options: BrowserContextOptions = {},
  env: Record<string, string> = {},
): Promise<DemoSession> {
  const flotilla = await startFlotilla({ FLOTILLA_DEMO_DEVICES: String(devices), ...env });
  const browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  await context.addInitScript(consent);
  const page = await context.newPage();
  await logIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
  await page.waitForURL(/\/fleets$/);
  return { flotilla, browser, page };
}

/** The uuid of the demo's first simulated device; "" until it has registered. */
export async function firstDeviceUuid(page: Page, apiUrl: string): Promise<string> {
  const { d } = await api<{ d: Array<{ uuid: string }> }>(page, apiUrl, "GET", "/v7/device?$select=uuid&$top=1");
  return d[0]?.uuid ?? "";
}
