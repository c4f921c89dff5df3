import { mkdirSync, readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { firstDeviceUuid, startDemoSession } from "./demo-session.ts";

/** Screenshots for people to look at (outside the repository), once transitions settled. */
const shot = async (page: Page, name: string) => {
  mkdirSync("/tmp/shots-logs", { recursive: true });
  await page.waitForTimeout(400);
  await page.screenshot({ path: `/tmp/shots-logs/${name}.png` });
};

/**
 * The live logs panel of a device's summary page (issue 10, OPS-001..018): the demo's simulated
 * devices write service and system lines; a person filters them, switches timestamps and UTC
 * (remembered across a reload), downloads them and expands the panel. Then the diagnostics page
 * of the same device: health checks, diagnostics and the supervisor state.
 */
describe("device live logs and diagnostics", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let uuid = "";

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(1, { acceptDownloads: true }));
  }, 120_000);

  /** The demo's simulated device (it registers a moment after the server starts). */
  const firstDevice = async () => {
    uuid = await firstDeviceUuid(page, flotilla.apiUrl);
    return uuid;
  };

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  it("shows the device's lines, filters them, keeps the time preferences, downloads and expands", async () => {
    await expect.poll(firstDevice, { timeout: 60_000, interval: 500 }).not.toBe("");
    await page.goto(`${flotilla.dashboardUrl}/devices/${uuid}`);
    const panel = page.getByRole("region", { name: "Logs" });
    const log = panel.getByRole("log", { name: "Device logs" });
    // The simulator's supervisor says so once the device is up.
    await log.getByText("Supervisor started").waitFor({ timeout: 60_000 });
    await expect.poll(() => log.textContent()).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    await panel.getByRole("status").getByText("Live").waitFor();
    // Live: lines keep arriving over the open stream.
    const before = await log.locator("[data-log-line]").count();
    await expect
      .poll(() => log.locator("[data-log-line]").count(), { timeout: 30_000, interval: 500 })
      .toBeGreaterThan(before);
    await panel.scrollIntoViewIfNeeded();
    await shot(page, "01-summary-logs");

    // Filter (debounced): nothing matches, then the supervisor's lines only.
    const filter = panel.getByLabel("Filter logs");
    await filter.fill("no-such-line-anywhere");
    await panel.getByText("No line matches “no-such-line-anywhere”.").waitFor();
    await filter.fill("supervisor");
    await log.getByText("Supervisor started").waitFor();
    await panel.getByText(/^\d+ of \d+ lines$/).waitFor();
    const messages = await log.locator("[data-log-line]").allTextContents();
    expect(messages.length).toBeGreaterThan(0);
    for (const text of messages) expect(text.toLowerCase()).toContain("supervisor");
    await filter.fill("");

    // UTC on, timestamps off: both survive a reload.
    await panel.getByLabel("UTC").check();
    await expect.poll(() => log.textContent()).toContain(" UTC");
    await panel.getByLabel("Timestamps").uncheck();
    await expect.poll(() => log.textContent()).not.toMatch(/\d\d:\d\d:\d\d/);
    await page.reload();
    await log.getByText("Supervisor started").waitFor({ timeout: 30_000 });
    expect(await panel.getByLabel("UTC").isChecked()).toBe(true);
    expect(await panel.getByLabel("Timestamps").isChecked()).toBe(false);
    expect(await log.textContent()).not.toMatch(/\d\d:\d\d:\d\d/);
    await panel.getByLabel("Timestamps").check();
    await expect.poll(() => log.textContent()).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);

    // Download: a .log file with every line, timestamps included.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      panel.getByRole("button", { name: "Download logs" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/-logs-\d{8}-\d{6}\.log$/);
    const file = await download.path();
    const text = readFileSync(file, "utf8");
    expect(text).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\] \[system\] .+/m);
    expect(text).toContain("Supervisor started");

    // Expand: the same view in a full-screen dialog.
    await panel.getByRole("button", { name: "Expand logs" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("log", { name: "Device logs" }).getByText("Supervisor started").waitFor();
    await shot(page, "02-expanded");
    await dialog.getByRole("button", { name: "Close expanded logs" }).click();
    await dialog.waitFor({ state: "hidden" });

    // Clear (the administrator has device_log.delete), confirmed in a dialog; gone after a reload too.
    await panel.getByRole("button", { name: "Clear logs" }).click();
    const confirm = page.getByRole("dialog", { name: "Clear logs?" });
    await confirm.getByRole("button", { name: "Clear logs" }).click();
    await page.getByText("Logs cleared").waitFor();
    await confirm.waitFor({ state: "hidden" });
    expect(await log.textContent()).not.toContain("Supervisor started");
    await page.reload();
    await panel.getByRole("status").getByText("Live").waitFor();
    await page.waitForTimeout(1000);
    expect(await log.textContent()).not.toContain("Supervisor started");
  }, 120_000);

  it("stops and starts a service from the services table, and shows its logs", async () => {
    await expect.poll(firstDevice, { timeout: 60_000, interval: 500 }).not.toBe("");
    await page.goto(`${flotilla.dashboardUrl}/devices/${uuid}`);
    const services = page.getByRole("table", { name: "Services" });
    const worker = services.getByRole("row", { name: /worker/ });
    // The device provisions and installs its release first (the table polls every 15 s).
    await worker.getByText("Running").waitFor({ timeout: 90_000 });
    // Running: start is off, stop and restart are on.
    expect(await page.getByRole("button", { name: "Start worker", exact: true }).isDisabled()).toBe(true);
    await expect
      .poll(async () => page.getByRole("button", { name: "Stop worker", exact: true }).isEnabled(), { timeout: 30_000 })
      .toBe(true);
    await page.getByRole("button", { name: "Stop worker", exact: true }).click();
    await page.getByText("Stopped worker").waitFor();
    await worker.getByText("exited").waitFor({ timeout: 30_000 });
    expect(await page.getByRole("button", { name: "Restart worker", exact: true }).isDisabled()).toBe(true);
    await shot(page, "services-stopped");
    await page.getByRole("button", { name: "Start worker", exact: true }).click();
    await worker.getByText("Running").waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: "Show the logs of worker" }).click();
    await expect.poll(async () => page.getByLabel("Filter logs").inputValue()).toBe("worker");
  }, 120_000);

  it("runs health checks and diagnostics on the device and shows the supervisor state", async () => {
    await page.goto(`${flotilla.dashboardUrl}/devices/${uuid}`);
    await page.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Diagnostics" }).click();
    await page.getByRole("heading", { name: "Diagnostics" }).waitFor();
    const run = page.getByRole("button", { name: "Run checks" });
    await expect.poll(async () => run.isEnabled(), { timeout: 30_000 }).toBe(true);
    await page.getByText("No check data available yet: run them to see the results.").waitFor();
    // The run's state (spec 2 §4 "Health checks and diagnostics"): idle, in progress, then done.
    await page.getByText("State: Idle").waitFor();
    await run.click();
    await page.getByRole("status", { name: "Running on the device…" }).waitFor();
    const checks = page.getByRole("table", { name: "Health checks" });
    await checks
      .getByRole("row", { name: /check_disk_space/ })
      .getByText("Passed")
      .waitFor({ timeout: 15_000 });
    await checks.getByRole("row", { name: /check_container_engine/ }).waitFor();
    await page.getByText("State: Done").waitFor();
    await shot(page, "diagnostics-checks");

    await page.getByRole("tab", { name: "Diagnostics" }).click();
    await page.getByRole("button", { name: "Run diagnostics" }).click();
    await page
      .getByLabel("Diagnostics output")
      .getByText(/flotilla-agent .* \(simulated device\)/)
      .waitFor({ timeout: 15_000 });

    await page.getByRole("tab", { name: "Supervisor state" }).click();
    await page
      .getByRole("region", { name: "Supervisor state" })
      .getByText(/"status"/)
      .waitFor();
    await page.getByRole("region", { name: "Target state" }).getByText(new RegExp(uuid)).first().waitFor();
    await shot(page, "diagnostics-supervisor");
  }, 90_000);
});
