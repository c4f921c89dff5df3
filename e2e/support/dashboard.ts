import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "./flotilla.ts";

export type Dashboard = { flotilla: RunningFlotilla; browser: Browser; context: BrowserContext; page: Page };

/**
 * One server and one Chromium per describe block, a fresh browser context and page per test.
 * `use` receives them whenever they change: `useDashboard({}, (ui) => ({ flotilla, page } = ui))`.
 */
export function useDashboard(env: Record<string, string>, use: (dashboard: Dashboard) => void) {
  const state = {} as Dashboard;
  beforeAll(async () => {
    state.flotilla = await startFlotilla(env);
    state.browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await state.browser?.close();
    await state.flotilla?.stop();
  });
  beforeEach(async () => {
    state.context = await state.browser.newContext({ viewport: { width: 1280, height: 800 } });
    state.page = await state.context.newPage();
    use(state);
  });
  afterEach(async () => {
    await state.context?.close();
  });
}
