import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { startDemoSession } from "./demo-session.ts";
import { api, shot } from "./fleets-helpers.ts";

const AGENT_BIN = path.resolve(import.meta.dirname, "../../apps/agent/bin/flotilla-agent.mjs");
/** The simulator's output, for when something goes wrong. */
const AGENT_LOG = path.join(os.tmpdir(), "flotilla-log-search-e2e-agent.log");
const OFFLINE_AFTER_S = 25;
const OFFLINE_FOR_S = 30;

type Found = { id: number; message: string; timestamp: number; createdAt: number; serviceName: string | null };

/** `yyyy-MM-dd HH:mm:ss` and `yyyy-MM-ddTHH:mm` in this machine's zone, as the dashboard shows and takes them. */
const pad = (n: number) => String(n).padStart(2, "0");
const localDay = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
const shown = (ms: number) => {
  const d = new Date(ms);
  return `${localDay(d)} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};
const minuteInput = (ms: number) => {
  const d = new Date(ms);
  return `${localDay(d)}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
};

/**
 * Issue "Logs over time", Done when: a simulated device disconnected for 30 s keeps logging into
 * its offline buffer, uploads the lines on reconnect, and they appear in search with their
 * original times, through the API and on the device's page.
 */
describe("log search: lines logged while offline keep their times", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let agent: ChildProcess | undefined;
  let uuid = "";
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-log-search-e2e-"));
  const call = <T>(method: string, p: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, p, body);
  /** The simulated device's uuid, from its state file; "" until it registered. */
  const mine = async () => {
    const state = path.join(stateDir, "simulated-devices.json");
    if (!fs.existsSync(state)) return "";
    const saved = JSON.parse(fs.readFileSync(state, "utf8")) as
      | Array<{ uuid: string }>
      | { devices: Array<{ uuid: string }> };
    const list = Array.isArray(saved) ? saved : saved.devices;
    return list[0]?.uuid ?? "";
  };

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(0));
    const apps = await call<{ d: Array<{ id: number; app_name: string }> }>(
      "GET",
      "/v7/application?$select=id,app_name",
    );
    const fleetId = apps.d.find((app) => app.app_name === "demo-fleet")?.id ?? 0;
    const key = await call<string>("POST", "/api-key/v2/", {
      actorType: "application",
      actorTypeId: fleetId,
      roles: ["provisioning-api-key"],
      name: "log search device",
    });
    // One device that logs every second, loses its network 25 s after it starts, for 30 s.
    agent = spawn(
      process.execPath,
      [
        AGENT_BIN,
        "simulate",
        ...["--api", flotilla.apiUrl, "--provisioning-key", key, "--fleet", String(fleetId), "--count", "1"],
        ...["--interval-ms", "1000", "--busy-interval-ms", "500", "--state-dir", stateDir],
        ...["--offline-after", String(OFFLINE_AFTER_S), "--offline-for", String(OFFLINE_FOR_S)],
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    agent.stdout?.on("data", (chunk) => fs.appendFileSync(AGENT_LOG, chunk));
    agent.stderr?.on("data", (chunk) => fs.appendFileSync(AGENT_LOG, chunk));
  }, 180_000);

  afterAll(async () => {
    if (agent && agent.exitCode === null) {
      const running = agent;
      await new Promise<void>((resolve) => {
        running.once("exit", () => resolve());
        running.kill("SIGTERM");
      });
    }
    await browser?.close();
    await flotilla?.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("uploads the lines of the outage on reconnect and finds them by their original times", async () => {
    await expect.poll(mine, { timeout: 60_000, interval: 500 }).not.toBe("");
    uuid = await mine();
    const search = (query: Record<string, string>) =>
      call<{ lines: Found[]; next: string | null }>(
        "GET",
        `/logs/v1/search?${new URLSearchParams({ device: uuid, ...query })}`,
      );
    // Lines that reached the server 10 s or more after the device logged them: the outage's.
    const buffered = async () =>
      (await search({ limit: "1000" })).lines.filter((line) => line.createdAt - line.timestamp >= 10_000);
    await expect
      .poll(async () => (await buffered()).length, {
        timeout: (OFFLINE_AFTER_S + OFFLINE_FOR_S + 60) * 1000,
        interval: 1000,
      })
      .toBeGreaterThanOrEqual(5);
    // Give the rest of the buffer a moment to arrive, then look at all of it.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const lines = await buffered();
    const times = lines.map((line) => line.timestamp).sort((a, b) => a - b);
    const first = times[0] as number;
    const last = times.at(-1) as number;
    // Logged across most of the 30 s outage, one a second or so, uploaded together at its end.
    expect(last - first).toBeGreaterThanOrEqual(15_000);
    const uploadedAt = Math.min(...lines.map((line) => line.createdAt));
    expect(uploadedAt).toBeGreaterThan(last);

    // Search by the device's time range finds them, newest first, times as the device logged them.
    const ranged = await search({ from: String(first), to: String(last + 1) });
    const rangedIds = new Set(ranged.lines.map((line) => line.id));
    for (const line of lines) expect(rangedIds.has(line.id)).toBe(true);
    const rangedTimes = ranged.lines.map((line) => line.timestamp);
    expect(rangedTimes).toEqual([...rangedTimes].sort((a, b) => b - a));
    const sample = lines[Math.floor(lines.length / 2)] as Found;
    const words = sample.message.split(/\s+/).slice(0, 2).join(" ");
    const byText = await search({ q: words, from: String(first), to: String(last + 1) });
    expect(byText.lines.some((line) => line.id === sample.id && line.timestamp === sample.timestamp)).toBe(true);

    // The device page's search shows the line at its original time.
    await page.goto(`${flotilla.dashboardUrl}/devices/${uuid}`);
    const card = page.getByRole("region", { name: "Log search", exact: true });
    await card.scrollIntoViewIfNeeded();
    await card.getByLabel("Text", { exact: true }).fill(sample.message);
    await card.getByLabel("From", { exact: true }).fill(minuteInput(first));
    await card.getByLabel("To", { exact: true }).fill(minuteInput(last + 60_000));
    await card.getByRole("button", { name: "Search", exact: true }).click();
    const results = card.getByRole("list", { name: "Search results" });
    // Messages repeat: the row with this message at the device's time of the sample.
    const row = results
      .getByRole("listitem")
      .filter({ hasText: sample.message })
      .filter({ hasText: shown(sample.timestamp) })
      .first();
    await row.waitFor({ timeout: 15_000 });
    expect(await row.locator("time").getAttribute("datetime")).toBe(new Date(sample.timestamp).toISOString());
    await shot(page, "log-search-device");
  }, 240_000);
});
