import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { addCardAndUpgradeToPilot } from "./billing-helpers.ts";
import { cliWorkspace } from "./cli-helpers.ts";
import { startDemoSession } from "./demo-session.ts";
import { api, shot } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const AGENT_BIN = path.resolve(import.meta.dirname, "../../apps/agent/bin/flotilla-agent.mjs");
const COUNT = 20;
/** The simulator's output, for when something goes wrong. */
const AGENT_LOG = path.join(os.tmpdir(), "flotilla-rollouts-e2e-agent.log");

type Release = { id: number; commit: string; raw_version: string };
type Device = { id: number; uuid: string; device_name: string; is_running__release: { __id: number } | null };

/**
 * Whether `flotilla-agent simulate --fail-share` picks this device: the simulator's own rule
 * (apps/agent/src/sim/model.ts `failsInjectedRelease`, FNV-1a of "fail:" and the uuid), repeated
 * here because e2e does not compile the agent's sources.
 */
function failsInjectedRelease(uuid: string, share: number): boolean {
  let hash = 0x811c9dc5;
  const text = `fail:${uuid.toLowerCase()}`;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash / 0x1_0000_0000 < share;
}

/**
 * Issue 23 "Done when": 20 simulated devices, a three-wave policy (canary tag, 25 %, the rest)
 * set in the fleet settings' editor; a good release advances wave by wave to 100 % on the
 * rollout page; a bad release that crash-loops on half the canaries halts the rollout with the
 * reason, the canaries go back, no device outside the canary wave ever targets it; resume and
 * abort work from the page.
 */
describe("rollouts: waves, health gates, halt and rollback", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let fleetId = 0;
  let key = "";
  let agent: ChildProcess | undefined;
  let canaries: Device[] = [];
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-rollouts-e2e-"));
  const { cli, project, remove } = cliWorkspace("flotilla-rollouts-cli-");
  const url = (p: string) => `${flotilla.dashboardUrl}${p}`;
  const call = <T>(method: string, p: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, p, body);
  const devices = async () =>
    (
      await call<{ d: Device[] }>(
        "GET",
        `/v7/device?$select=id,uuid,device_name,is_running__release&$filter=belongs_to__application eq ${fleetId}&$orderby=device_name asc`,
      )
    ).d;
  const releaseByVersion = async (version: string) =>
    (
      await call<{ d: Release[] }>(
        "GET",
        `/v7/release?$select=id,commit,raw_version&$filter=belongs_to__application eq ${fleetId} and semver eq '${version}'&$orderby=id desc`,
      )
    ).d[0];
  const logsOf = async (uuid: string) =>
    (await call<Array<{ message: string }>>("GET", `/device/v2/${uuid}/logs?count=1000`)).map((line) => line.message);

  const startAgent = (...extra: string[]) => {
    agent = spawn(
      process.execPath,
      [
        AGENT_BIN,
        "simulate",
        "--api",
        flotilla.apiUrl,
        "--provisioning-key",
        key,
        "--fleet",
        String(fleetId),
        "--count",
        String(COUNT),
        "--interval-ms",
        "1000",
        "--busy-interval-ms",
        "500",
        "--state-dir",
        stateDir,
        ...extra,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    agent.stdout?.on("data", (chunk) => fs.appendFileSync(AGENT_LOG, chunk));
    agent.stderr?.on("data", (chunk) => fs.appendFileSync(AGENT_LOG, chunk));
  };
  const stopAgent = async () => {
    const running = agent;
    agent = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill("SIGTERM");
    });
  };
  const compose = (image: string) =>
    ["services:", "  main:", `    image: ${image}`, '    ports: ["80:80"]', ""].join("\n");

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(0));
    const apps = await call<{ d: Array<{ id: number; app_name: string }> }>(
      "GET",
      "/v7/application?$select=id,app_name",
    );
    fleetId = apps.d.find((app) => app.app_name === "demo-fleet")?.id ?? 0;
    // 20 devices are more than the free plan allows: the demo organization goes on Pilot first.
    const orgs = await call<{ d: Array<{ id: number }> }>(
      "GET",
      "/v7/organization?$select=id&$filter=handle eq 'demo'",
    );
    await page.goto(url(`/orgs/${orgs.d[0]?.id}/billing`));
    await addCardAndUpgradeToPilot(page);
    key = await call<string>("POST", "/api-key/v2/", {
      actorType: "application",
      actorTypeId: fleetId,
      roles: ["provisioning-api-key"],
      name: "rollout devices",
    });
    startAgent();
    const login = await cli("login", "--api", flotilla.apiUrl, "--email", DEMO.email, "--password", DEMO.password);
    expect(login.code, login.stderr).toBe(0);
  }, 180_000);

  afterAll(async () => {
    await stopAgent();
    await browser?.close();
    await flotilla?.stop();
    remove();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("sets a three-wave policy in the fleet settings, with its preview", async () => {
    await expect
      .poll(async () => (await devices()).filter((d) => d.is_running__release !== null).length, {
        timeout: 90_000,
        interval: 1000,
      })
      .toBe(COUNT);
    // Four canaries: two that will fail the bad release (the simulator picks them by uuid), two that will not.
    const all = await devices();
    const failing = all.filter((d) => failsInjectedRelease(d.uuid, 0.5));
    const fine = all.filter((d) => !failsInjectedRelease(d.uuid, 0.5));
    canaries = [...failing.slice(0, 2), ...fine.slice(0, 2)];
    expect(canaries).toHaveLength(4);
    for (const canary of canaries) {
      await call("POST", "/v7/device_tag", { device: canary.id, tag_key: "canary", value: "yes" });
    }

    await page.goto(url(`/fleets/${fleetId}/settings`));
    const editor = page.getByRole("region", { name: "Release policy" });
    await editor.getByText("The fleet has no release policy yet").waitFor();
    // The suggested waves: canary (tag canary=yes), a quarter, the rest; soak 1 s for the test.
    for (const wave of ["Wave 1", "Wave 2", "Wave 3"]) {
      const fieldset = editor.getByRole("group", { name: wave });
      await fieldset.getByLabel("Soak time").fill("1");
      await fieldset.getByLabel("Healthy share needed").fill("100");
    }
    await editor.getByRole("group", { name: "Wave 2" }).getByLabel("Halt above failed share").fill("0");
    const preview = editor.getByRole("region", { name: "Wave preview" });
    await expect.poll(() => preview.getByTestId("preview-wave-1").textContent()).toContain("4 devices");
    await expect.poll(() => preview.getByTestId("preview-wave-2").textContent()).toContain("5 devices");
    await expect.poll(() => preview.getByTestId("preview-wave-3").textContent()).toContain("11 devices");
    await shot(page, "rollouts-policy-editor");
    await preview.scrollIntoViewIfNeeded();
    await shot(page, "rollouts-policy-preview");
    await editor.getByRole("button", { name: "Save policy" }).click();
    await page.getByText("Release policy saved").waitFor();
  }, 200_000);

  it("a good release goes wave by wave to 100 % on the rollout page", async () => {
    const push = await cli(
      "push",
      "demo/demo-fleet",
      project("good", { "docker-compose.yml": compose("nginx:1.27-alpine"), "balena.yml": "version: 1.2.0\n" }),
    );
    expect(push.code, push.stderr).toBe(0);
    await page.goto(url(`/fleets/${fleetId}/rollouts`));
    await page.getByRole("link", { name: "View rollout" }).first().click();
    await page.getByRole("heading", { name: /^Rollout \d+$/ }).waitFor();
    await page.getByRole("region", { name: "canary", exact: true }).waitFor();
    await shot(page, "rollouts-page-running");
    await page.getByTestId("rollout-progress").getByText("100 % healthy").waitFor({ timeout: 150_000 });
    await page
      .getByRole("region", { name: "Rollout overview" })
      .getByText("Completed", { exact: true })
      .waitFor({ timeout: 30_000 });
    const good = await releaseByVersion("1.2.0");
    expect(new Set((await devices()).map((d) => d.is_running__release?.__id))).toEqual(new Set([good?.id]));
    await shot(page, "rollouts-page-completed");
  }, 200_000);

  it("a bad release halts in the canary wave with the reason; the canaries roll back; no other device targets it", async () => {
    const good = await releaseByVersion("1.2.0");
    const draft = await cli(
      "push",
      "demo/demo-fleet",
      project("bad", { "docker-compose.yml": compose("nginx:1.27"), "balena.yml": "version: 1.3.0\n" }),
      "--draft",
    );
    expect(draft.code, draft.stderr).toBe(0);
    const bad = await releaseByVersion("1.3.0");
    expect(bad).toBeDefined();
    // The same devices again, now failing the bad release: half of them crash-loop on it.
    await stopAgent();
    startAgent("--fail-release", String(bad?.commit), "--fail-share", "0.5", "--fail-mode", "crash-loop");
    await call("PATCH", `/v7/release(${bad?.id})`, { is_final: true });

    await page.goto(url(`/fleets/${fleetId}`));
    const card = page.getByRole("region", { name: "Rollout in progress" });
    await card.getByText("Halted", { exact: true }).waitFor({ timeout: 120_000 });
    await shot(page, "rollouts-fleet-summary");
    await card.getByRole("link", { name: "View rollout" }).click();
    const overview = page.getByRole("region", { name: "Rollout overview" });
    await overview.getByText("Halted", { exact: true }).waitFor({ timeout: 120_000 });
    // The halt share is 0: the first failing canary halts the wave (the second may be counted too
    // when both reports are written together).
    await overview.getByText(/Wave 1 failed: [12] of 4 devices failed/).waitFor();
    const canary = page.getByRole("region", { name: "canary", exact: true });
    await canary.getByText("Rolled back", { exact: true }).waitFor();
    await canary
      .getByText(/restart loop/)
      .first()
      .waitFor();
    await shot(page, "rollouts-page-halted");
    // What to do now, named with the releases.
    const recovery = page.getByRole("region", { name: "What now" });
    await recovery.getByRole("button", { name: "Pin the fleet to 1.2.0" }).waitFor();
    await recovery.getByRole("button", { name: "Invalidate 1.3.0" }).waitFor();

    // The release summary shows the rollout that brings it, halted, with a link back.
    await page.goto(url(`/fleets/${fleetId}/releases/${bad?.id}`));
    const onRelease = page.getByRole("region", { name: "Rollout in progress" });
    await onRelease.getByText("Halted", { exact: true }).waitFor();
    await onRelease.getByRole("link", { name: "View rollout" }).click();
    await page.getByRole("region", { name: "Rollout overview" }).waitFor();

    const canaryIds = new Set(canaries.map((d) => d.id));
    await expect
      .poll(
        async () =>
          (await devices()).filter((d) => canaryIds.has(d.id)).every((d) => d.is_running__release?.__id === good?.id),
        { timeout: 60_000, interval: 1000 },
      )
      .toBe(true);
    // A device the rollout never reached shows its own target, the previous release.
    const waiting = (await devices()).find((d) => !canaryIds.has(d.id));
    await page.goto(url(`/devices/${waiting?.uuid}`));
    await expect
      .poll(() => page.locator("dt:has-text('Target release') + dd").textContent(), { timeout: 30_000 })
      .toMatch(/^1\.2\.0/);
    await page.goto(url(`/fleets/${fleetId}/releases/${bad?.id}`));
    await page
      .getByText("The fleet's target release, but its rollout halted: devices it did not reach keep 1.2.0", {
        exact: false,
      })
      .waitFor();
    await shot(page, "rollouts-release-halted");
    await page.getByRole("region", { name: "Rollout in progress" }).getByRole("link", { name: "View rollout" }).click();
    await page.getByRole("region", { name: "Rollout overview" }).waitFor();
    const short = String(bad?.commit).slice(0, 7);
    for (const device of (await devices()).filter((d) => !canaryIds.has(d.id))) {
      expect(await logsOf(device.uuid)).not.toContain(`Downloading release ${short}`);
      expect(device.is_running__release?.__id).toBe(good?.id);
    }
  }, 200_000);

  it("resume starts the canary wave again; abort rolls it back for good", async () => {
    const overview = page.getByRole("region", { name: "Rollout overview" });
    await overview.getByRole("button", { name: "Resume" }).click();
    await page.getByText("Rollout resumed").waitFor();
    await overview.getByRole("button", { name: "Abort" }).click();
    const dialog = page.getByRole("dialog", { name: "Abort the rollout?" });
    await dialog.getByRole("button", { name: "Abort" }).click();
    await page.getByText("Rollout aborted: devices go back to the previous release").waitFor();
    await overview.getByText("Aborted", { exact: true }).waitFor();
    const good = await releaseByVersion("1.2.0");
    await expect
      .poll(async () => (await devices()).every((d) => d.is_running__release?.__id === good?.id), {
        timeout: 60_000,
        interval: 1000,
      })
      .toBe(true);
  }, 200_000);

  it("after the abort, the fleet summary offers to pin the fleet to the previous release, which ends it", async () => {
    await page.goto(url(`/fleets/${fleetId}`));
    const card = page.getByRole("region", { name: "Last rollout aborted" });
    await card.getByText("Aborted", { exact: true }).waitFor({ timeout: 30_000 });
    expect(await page.getByRole("region", { name: "Rollout in progress" }).count()).toBe(0);
    await shot(page, "rollouts-fleet-aborted");
    await card.getByRole("button", { name: "Pin the fleet to 1.2.0" }).click();
    const dialog = page.getByRole("dialog", { name: "Pin the fleet to 1.2.0?" });
    await dialog.getByRole("button", { name: "Pin the fleet to 1.2.0" }).click();
    await page.getByText("The fleet is pinned to 1.2.0").waitFor();
    await card.waitFor({ state: "detached", timeout: 30_000 });
    const good = await releaseByVersion("1.2.0");
    const fleet = await call<{ d: Array<{ should_be_running__release: { __id: number } | null }> }>(
      "GET",
      `/v7/application(${fleetId})?$select=should_be_running__release`,
    );
    expect(fleet.d[0]?.should_be_running__release?.__id).toBe(good?.id);
  }, 60_000);
});
