import { mkdirSync } from "node:fs";
import type { Page } from "playwright-core";

/** Screenshots of the fleet pages for people to look at (outside the repository). */
export async function shot(page: Page, name: string) {
  mkdirSync("/tmp/shots-fleets", { recursive: true });
  await page.waitForTimeout(400);
  await page.screenshot({ path: `/tmp/shots-fleets/${name}.png`, fullPage: true });
}

/** A data API call with the page's own session token. */
export async function api<T>(page: Page, apiUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  return page.evaluate(
    async ({ apiUrl, method, path, body }) => {
      const token = localStorage.getItem("balena-token");
      const response = await fetch(`${apiUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${response.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
    { apiUrl, method, path, body },
  ) as Promise<T>;
}

export const consent = () => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials"));

/** The demo's fleet, block and organization ids, read as the signed-in user. */
export async function demoIds(page: Page, apiUrl: string) {
  const apps = await api<{ d: Array<{ id: number; app_name: string; organization: { __id: number } }> }>(
    page,
    apiUrl,
    "GET",
    "/v7/application?$select=id,app_name,organization",
  );
  const find = (name: string) => apps.d.find((app) => app.app_name === name);
  return {
    fleet: find("demo-fleet")?.id ?? 0,
    block: find("demo-block")?.id ?? 0,
    org: find("demo-fleet")?.organization.__id ?? 0,
  };
}
