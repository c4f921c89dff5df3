import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { startDemoSession } from "./demo-session.ts";
import { api, consent, demoIds } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const AGENT_BIN = path.resolve(import.meta.dirname, "../../apps/agent/bin/flotilla-agent.mjs");
/** The simulators' output, for when something goes wrong. */
const AGENT_LOG = path.join(os.tmpdir(), "flotilla-bulk-commands-e2e-agent.log");
const SHOTS = "/tmp/shots-bulk-commands";

type Device = {
  id: number;
  uuid: string;
  device_name: string;
  os_version: string | null;
  is_connected_to_vpn: boolean;
};

async function shot(page: Page, name: string) {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

/**
 * Issue [fleet-ops] "Run a command on many devices", Done when: select 5 simulated devices (and
 * one that went offline) in the fleet table → run `uname -a` on the host OS → the run page shows
 * 5 outputs and a summary, the offline device as offline; the run is in the audit log with its
 * command. An observer is not offered "Run command".
 */
describe("bulk commands from the fleet's device table", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let ids: { fleet: number; org: number };
  const agents: ChildProcess[] = [];
  let lastAgent: ChildProcess | undefined;
  const stateDirs: string[] = [];
  const url = (p: string) => `${flotilla.dashboardUrl}${p}`;
  const call = <T>(method: string, p: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, p, body);
  const devices = async () =>
    (
      await call<{ d: Device[] }>(
        "GET",
        `/v7/device?$select=id,uuid,device_name,os_version,is_connected_to_vpn&$filter=belongs_to__application eq ${ids.fleet}&$orderby=device_name asc`,
      )
    ).d;

  /** One `flotilla-agent simulate` process with its own devices (and state directory). */
  const simulate = (key: string, count: number) => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-bulk-e2e-"));
    stateDirs.push(stateDir);
    const agent = spawn(
      process.execPath,
      [
        AGENT_BIN,
        "simulate",
        "--api",
        flotilla.apiUrl,
        "--provisioning-key",
        key,
        "--fleet",
        String(ids.fleet),
        "--count",
        String(count),
        "--interval-ms",
        "1000",
        "--busy-interval-ms",
        "500",
        "--state-dir",
        stateDir,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    agent.stdout?.on("data", (chunk) => fs.appendFileSync(AGENT_LOG, chunk));
    agent.stderr?.on("data", (chunk) => fs.appendFileSync(AGENT_LOG, chunk));
    agents.push(agent);
    return agent;
  };
  const stop = async (agent: ChildProcess) => {
    if (agent.exitCode !== null || agent.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      agent.once("exit", () => resolve());
      agent.kill("SIGTERM");
    });
  };

  beforeAll(async () => {
    fs.rmSync(AGENT_LOG, { force: true });
    ({ flotilla, browser, page } = await startDemoSession(0));
    ids = await demoIds(page, flotilla.apiUrl);
    const key = await call<string>("POST", "/api-key/v2/", {
      actorType: "application",
      actorTypeId: ids.fleet,
      roles: ["provisioning-api-key"],
      name: "bulk command devices",
    });
    // Six devices fit the free plan: five that stay, and one whose simulator stops (offline).
    simulate(key, 5);
    lastAgent = simulate(key, 1);
  }, 180_000);

  afterAll(async () => {
    for (const agent of agents) await stop(agent);
    await browser?.close();
    await flotilla?.stop();
    for (const dir of stateDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("runs uname -a on 5 online devices and reports the 6th offline; the audit log has it", async () => {
    await expect
      .poll(
        async () =>
          (await devices()).filter((device) => device.os_version !== null && device.is_connected_to_vpn).length,
        { timeout: 90_000, interval: 1000 },
      )
      .toBe(6);
    const before = await devices();
    // The device of the second simulator goes offline: its cloudlink socket closes with it.
    await stop(lastAgent as ChildProcess);
    await expect
      .poll(async () => (await devices()).filter((device) => !device.is_connected_to_vpn).length, { timeout: 30_000 })
      .toBe(1);
    const offline = (await devices()).find((device) => !device.is_connected_to_vpn) as Device;
    const online = before.filter((device) => device.uuid !== offline.uuid);

    // Nothing run yet: the fleet's Commands page says where to start.
    await page.goto(url(`/fleets/${ids.fleet}/commands`));
    await page.getByRole("heading", { name: "No commands run yet" }).waitFor();
    await shot(page, "bulk-commands-empty");

    // Select the six in the table and choose Actions → Run command.
    await page.goto(url(`/fleets/${ids.fleet}/devices`));
    const grid = page.getByRole("grid", { name: "Devices" });
    for (const device of before) {
      await grid.getByRole("row").filter({ hasText: device.device_name }).getByRole("checkbox").check();
    }
    await page.getByText("6 selected").waitFor();
    await page.getByRole("button", { name: "Actions" }).click();
    await page.getByRole("menuitem", { name: "Run command" }).click();
    const dialog = page.getByRole("dialog", { name: "Run a command" });
    await dialog.getByLabel("Command").fill("uname -a");
    await dialog.getByRole("radio", { name: "The 6 selected devices" }).waitFor();
    expect(await dialog.getByRole("radio", { name: "The 6 selected devices" }).isChecked()).toBe(true);
    expect(await dialog.getByRole("radio", { name: "Report it as offline at once" }).isChecked()).toBe(true);
    await dialog.getByRole("combobox", { name: "Run on" }).getByText("Host OS").waitFor();

    // The server's words on the field: a timeout out of range.
    await dialog.getByLabel("Timeout (s)").fill("0");
    await dialog.getByRole("button", { name: "Run command" }).click();
    await dialog.getByText("Must be at least 1").waitFor();
    await shot(page, "bulk-dialog-error");
    await dialog.getByLabel("Timeout (s)").fill("30");
    await shot(page, "bulk-dialog");
    await dialog.getByRole("button", { name: "Run command" }).click();

    // The run page: five outputs with Linux, the summary, the offline device as offline.
    await page.waitForURL(new RegExp(`/fleets/${ids.fleet}/commands/\\d+$`));
    await page.getByRole("heading", { name: /^Command run \d+$/ }).waitFor();
    await page.getByText("6 devices: 5 succeeded · 0 failed · 0 timed out · 1 offline · 0 refused").waitFor({
      timeout: 30_000,
    });
    const outputs = page.getByLabel(/^Output of /);
    await expect.poll(() => outputs.count()).toBe(5);
    for (const device of online) {
      const output = page.getByLabel(`Output of ${device.device_name}`, { exact: true });
      expect(await output.innerText()).toMatch(/^Linux .+ GNU\/Linux/);
    }
    const table = page.getByRole("table", { name: "Devices" });
    const offlineRow = table.getByRole("row").filter({ hasText: offline.device_name });
    await offlineRow.getByText("Offline", { exact: true }).waitFor();
    expect(await offlineRow.getByText("Succeeded").count()).toBe(0);
    const row = table.getByRole("row").filter({ hasText: online[0]?.device_name ?? "" });
    await row.getByText("Succeeded").waitFor();
    await page.getByText("Finished", { exact: true }).waitFor();
    expect(await page.getByRole("button", { name: "Cancel run" }).count()).toBe(0);
    await shot(page, "bulk-run-page");

    // The fleet's Commands list, from the side menu.
    await page.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Commands" }).click();
    await page.waitForURL(url(`/fleets/${ids.fleet}/commands`));
    const runs = page.getByRole("table", { name: "Commands" });
    await runs.getByRole("link", { name: "uname -a" }).waitFor();
    await runs.getByText("6 devices: 5 succeeded").waitFor();
    await shot(page, "bulk-commands-list");

    // The audit log has the run with its command.
    await page.goto(url(`/orgs/${ids.org}/audit`));
    await page.getByRole("heading", { name: "Audit log", level: 1 }).waitFor();
    await page.getByRole("combobox", { name: "Action" }).click();
    await page.getByRole("option", { name: "Command run started", exact: true }).click();
    const entries = page.getByRole("table", { name: "Audit log entries" });
    const started = entries.getByRole("row").filter({ hasText: "Command run started" });
    await expect.poll(() => started.count()).toBe(1);
    await started.getByText("uname -a", { exact: true }).waitFor();
    await started.getByText("demo", { exact: true }).waitFor();
    await shot(page, "bulk-audit-log");
  }, 240_000);

  it("streams output live, stderr apart, waits for the offline device, and cancels", async () => {
    const all = await devices();
    const offline = all.find((device) => !device.is_connected_to_vpn) as Device;
    const online = all.filter((device) => device.uuid !== offline.uuid);
    await page.goto(url(`/fleets/${ids.fleet}/devices`));
    const grid = page.getByRole("grid", { name: "Devices" });
    await grid
      .getByRole("row")
      .filter({ hasText: online[0]?.device_name ?? "" })
      .getByRole("checkbox")
      .check();
    await page.getByRole("button", { name: "Actions" }).click();
    await page.getByRole("menuitem", { name: "Run command" }).click();
    const dialog = page.getByRole("dialog", { name: "Run a command" });
    // "sleep x" is an error on stderr, 3 s in: after the page has the run's snapshot (whose output
    // does not say which stream it came on). The long sleep keeps the run open until it is cancelled.
    await dialog.getByLabel("Command").fill("echo started; sleep 3; sleep x; sleep 600");
    await dialog.getByRole("radio", { name: "All devices of the fleet" }).check();
    await dialog.getByRole("radio", { name: "Wait for it to come online" }).check();
    await dialog.getByLabel("Wait up to (minutes)").fill("5");
    await dialog.getByRole("button", { name: "Run command" }).click();
    await page.waitForURL(new RegExp(`/fleets/${ids.fleet}/commands/\\d+$`));

    // Output arrives while the commands still run.
    const output = page.getByLabel(`Output of ${online[0]?.device_name}`, { exact: true });
    await output.getByText("started").waitFor({ timeout: 30_000 });
    const stderr = output.getByText("sleep: invalid number 'x'");
    await stderr.waitFor();
    const colour = (locator: typeof stderr) => locator.evaluate((element) => getComputedStyle(element).color);
    expect(await colour(stderr)).not.toBe(await colour(output.getByText("started")));
    const table = page.getByRole("table", { name: "Devices" });
    await table.getByRole("row").filter({ hasText: offline.device_name }).getByText("Waiting to come online").waitFor();
    // Each online device starts as its agent answers, later under load; a failure shows the rows.
    const running = async () => {
      const rows = await table.getByRole("row").allInnerTexts();
      return rows.filter((row) => /\bRunning\b/.test(row)).length === 5 ? 5 : rows.join(" | ");
    };
    await expect.poll(running, { timeout: 30_000 }).toBe(5);
    await page
      .getByText("6 devices: 0 succeeded · 0 failed · 0 timed out · 0 offline · 0 refused · 6 running or queued")
      .waitFor();
    await shot(page, "bulk-run-page-live");

    await page.getByRole("button", { name: "Cancel run" }).click();
    const confirm = page.getByRole("dialog", { name: "Cancel this run?" });
    await confirm.getByRole("button", { name: "Cancel run" }).click();
    await page
      .getByText("6 devices: 0 succeeded · 0 failed · 0 timed out · 0 offline · 0 refused · 6 cancelled")
      .waitFor();
    await page.getByText("Cancelled", { exact: true }).first().waitFor();
    expect(await page.getByRole("button", { name: "Cancel run" }).count()).toBe(0);
    await shot(page, "bulk-run-page-cancelled");
  }, 120_000);

  it("does not offer Run command to an observer", async () => {
    const roles = await call<{ d: Array<{ id: number; name: string }> }>(
      "GET",
      "/v7/application_membership_role?$select=id,name",
    );
    await call("POST", "/v7/user_application_membership", {
      username: "demo-member",
      is_member_of__application: ids.fleet,
      application_membership_role: roles.d.find((role) => role.name === "observer")?.id,
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(consent);
    const observer = await context.newPage();
    await logIn(observer, flotilla.dashboardUrl, "demo-member", DEMO.password);
    await observer.waitForURL(/\/fleets$/);
    await observer.goto(url(`/fleets/${ids.fleet}/devices`));
    const grid = observer.getByRole("grid", { name: "Devices" });
    // The rows first: "select all" on an empty page selects nothing.
    await expect.poll(() => grid.getByRole("row").count(), { timeout: 30_000 }).toBe(7);
    await grid.getByRole("checkbox", { name: "Select all rows" }).check();
    await observer.getByRole("button", { name: "Actions" }).click();
    await observer.getByRole("menuitem", { name: "Blink" }).waitFor();
    expect(await observer.getByRole("menuitem", { name: "Run command" }).count()).toBe(0);
    await context.close();
  }, 60_000);
});
