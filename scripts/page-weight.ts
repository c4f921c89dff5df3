import { chromium, type Page } from "playwright-core";
import { CHROMIUM_ARGS, DEMO_EMAIL, DEMO_PASSWORD, startFlotilla } from "../e2e/support/flotilla.ts";

/**
 * Page weight over the wire (issue performance-2, docs/benchmarks.md "Page weight"): Chromium
 * loads the dashboard from the real server, which sends brotli or gzip copies of the assets, and
 * the JavaScript bytes transferred (Chromium's encodedDataLength: compressed body and headers)
 * are summed per page: the login page with an empty cache, the first signed-in page (/fleets)
 * with an empty cache, then each other page's additional JavaScript with the cache of the pages
 * before, as a person moves through the dashboard. The three largest files of each page are named.
 */

type Load = { name: string; bytes: number; files: Array<{ name: string; bytes: number }> };
const BUDGETS = { login: 110 * 1024, fleets: 300 * 1024, other: 120 * 1024 };

/** The JavaScript transferred while `visit` runs (files served from the cache cost nothing). */
async function measure(page: Page, name: string, visit: () => Promise<void>): Promise<Load> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  const scripts = new Map<string, string>();
  const files: Load["files"] = [];
  cdp.on("Network.responseReceived", (event) => {
    const cached = event.response.fromDiskCache || event.response.fromPrefetchCache;
    if (event.type === "Script" && !cached) scripts.set(event.requestId, new URL(event.response.url).pathname);
  });
  cdp.on("Network.loadingFinished", (event) => {
    const file = scripts.get(event.requestId);
    if (file) files.push({ name: file, bytes: event.encodedDataLength });
  });
  await visit();
  await page.waitForLoadState("networkidle");
  await cdp.detach();
  files.sort((a, b) => b.bytes - a.bytes);
  return { name, bytes: files.reduce((sum, file) => sum + file.bytes, 0), files };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

export async function measurePageWeight(dashboardUrl: string, apiUrl: string): Promise<Load[]> {
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: CHROMIUM_ARGS });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(() => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials")));
    const page = await context.newPage();
    const loads: Load[] = [];
    loads.push(
      await measure(page, "/login (empty cache)", async () => {
        await page.goto(`${dashboardUrl}/login`);
        await page.getByLabel("Email or username").waitFor();
      }),
    );
    // The token the login gives, then /fleets in a fresh context with it: the first signed-in page, cache empty.
    const login = await fetch(`${apiUrl}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: DEMO_EMAIL, password: DEMO_PASSWORD }),
    });
    const token = await login.text();
    const signedIn = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await signedIn.addInitScript((value) => {
      localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials"));
      localStorage.setItem("balena-token", value);
    }, token);
    const app = await signedIn.newPage();
    loads.push(
      await measure(app, "/fleets (empty cache)", async () => {
        await app.goto(`${dashboardUrl}/fleets`);
        await app.getByRole("heading", { name: "Fleets" }).first().waitFor();
      }),
    );
    const fleets = (await (
      await fetch(`${apiUrl}/v7/application?$select=id&$filter=app_name eq 'demo-fleet'`, {
        headers: { authorization: `Bearer ${token}` },
      })
    ).json()) as { d: Array<{ id: number }> };
    const fleet = fleets.d[0]?.id;
    const orgs = (await (
      await fetch(`${apiUrl}/v7/organization?$select=id&$top=1`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { d: Array<{ id: number }> };
    const org = orgs.d[0]?.id;
    const pages = [
      `/fleets/${fleet}`,
      `/fleets/${fleet}/devices`,
      `/fleets/${fleet}/releases`,
      `/fleets/${fleet}/envvars`,
      `/fleets/${fleet}/rollouts`,
      `/orgs/${org}/members`,
      `/orgs/${org}/billing`,
      `/orgs/${org}/audit`,
      "/preferences/details",
    ];
    for (const path of pages) {
      loads.push(
        await measure(app, path, async () => {
          await app.goto(`${dashboardUrl}${path}`);
          await app.locator("main h1").first().waitFor();
        }),
      );
    }
    return loads;
  } finally {
    await browser.close();
  }
}

/** Prints each page's figure against its budget; true when every page is within it. */
export function reportPageWeight(loads: Load[]): boolean {
  let within = true;
  for (const [index, load] of loads.entries()) {
    const budget = index === 0 ? BUDGETS.login : index === 1 ? BUDGETS.fleets : BUDGETS.other;
    const ok = load.bytes <= budget;
    within &&= ok;
    const largest = load.files
      .slice(0, process.env.PAGE_WEIGHT_FILES ? undefined : 3)
      .map((file) => `${file.name.replace(/^\/assets\//, "")} ${kb(file.bytes)}`)
      .join(", ");
    console.log(
      `${load.name.padEnd(34)} ${kb(load.bytes).padStart(9)} (budget ${kb(budget)}) ${ok ? "ok" : "OVER"}  largest: ${largest || "—"}`,
    );
  }
  return within;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const flotilla = await startFlotilla({ FLOTILLA_RATE_LIMIT: "10000000" });
  try {
    reportPageWeight(await measurePageWeight(flotilla.dashboardUrl, flotilla.apiUrl));
  } finally {
    await flotilla.stop();
  }
}
