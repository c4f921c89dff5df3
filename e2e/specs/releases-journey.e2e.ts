import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { cliWorkspace } from "./cli-helpers.ts";
import { startDemoSession } from "./demo-session.ts";
import { api, shot } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

type Release = { id: number; commit: string; raw_version: string };
type Device = { id: number; uuid: string; device_name: string; is_running__release: { __id: number } | null };

/**
 * Issue 9 "Done when", as a person does it: push a compose project of prebuilt images with the
 * `flotilla` CLI, watch the new release and its build log appear in the dashboard, see the
 * demo's simulated devices download and run it, pin one device to the previous release and see
 * it go back, finalize a draft and invalidate an old release with their warnings, fail to
 * delete the pinned release, and see a bad compose file fail (CLI non-zero, parse error in the
 * build log).
 */
describe("releases: push with the CLI, roll out to simulated devices, pin, finalize, invalidate", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  let fleetId = 0;
  const { cli, project, remove } = cliWorkspace("flotilla-releases-e2e-");
  const url = (p: string) => `${flotilla.dashboardUrl}${p}`;
  const call = <T>(method: string, p: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, p, body);

  const releaseByVersion = async (version: string) =>
    (
      await call<{ d: Release[] }>(
        "GET",
        `/v7/release?$select=id,commit,raw_version&$filter=belongs_to__application eq ${fleetId} and semver eq '${version}'&$orderby=id desc`,
      )
    ).d[0];
  const devices = async () =>
    (
      await call<{ d: Device[] }>(
        "GET",
        `/v7/device?$select=id,uuid,device_name,is_running__release&$filter=belongs_to__application eq ${fleetId}&$orderby=device_name asc`,
      )
    ).d;
  const logsOf = async (uuid: string) =>
    (await call<Array<{ message: string }>>("GET", `/device/v2/${uuid}/logs?count=1000`)).map((line) => line.message);

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(3));
    const apps = await call<{ d: Array<{ id: number; app_name: string }> }>(
      "GET",
      "/v7/application?$select=id,app_name",
    );
    fleetId = apps.d.find((app) => app.app_name === "demo-fleet")?.id ?? 0;
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
    remove();
  });

  let pushed: Release | undefined;

  it("flotilla push builds the project; the dashboard lists the release and shows its build log", async () => {
    // The demo's three simulated devices are there (provisioning onto the fleet's release 1.1.0).
    // A loaded CI machine has taken over a minute to start the simulator and register them.
    await expect.poll(async () => (await devices()).length, { timeout: 150_000, interval: 1000 }).toBe(3);
    await page.goto(url(`/fleets/${fleetId}/releases`));
    const grid = page.getByRole("grid", { name: "Releases" });
    await grid.getByRole("link", { name: "1.1.0" }).waitFor();

    const login = await cli("login", "--api", flotilla.apiUrl, "--email", DEMO.email, "--password", DEMO.password);
    expect(login.code, login.stderr).toBe(0);
    const dir = project("sample", {
      "docker-compose.yml": [
        "services:",
        "  main:",
        "    image: nginx:1.27-alpine",
        '    ports: ["80:80"]',
        "  worker:",
        "    image: alpine:3.20",
        "    environment: [MODE=e2e]",
        "",
      ].join("\n"),
      "balena.yml": "version: 1.2.0\n",
      "README.md": "A sample project\n",
    });
    const push = await cli("push", "demo/demo-fleet", dir);
    expect(push.code, push.stderr).toBe(0);
    expect(push.stdout).toContain("[main] Using prebuilt image nginx:1.27-alpine");
    expect(push.stdout).toMatch(/Release 1\.2\.0 \([0-9a-f]{7}\) created: success/);

    // The list polls: the new release shows up without a reload.
    await grid.getByRole("link", { name: "1.2.0" }).waitFor({ timeout: 15_000 });
    await shot(page, "releases-journey-list");
    await grid.getByRole("link", { name: "1.2.0" }).click();
    await page.getByRole("heading", { name: "Release 1.2.0" }).waitFor();
    const log = page.getByRole("log", { name: "Build log" }).locator(".xterm-rows");
    await log.getByText("[worker] Using prebuilt image alpine:3.20").waitFor();
    await log.getByText("Release created").waitFor();
    await page
      .getByRole("table", { name: "Services" })
      .getByRole("row", { name: /worker/ })
      .waitFor();
    await shot(page, "releases-journey-summary");
    pushed = await releaseByVersion("1.2.0");
    expect(pushed).toBeDefined();
  }, 240_000);

  it("the simulated devices download the new release and run it, wave by wave under the demo's release policy", async () => {
    const id = pushed?.id;
    // The demo fleet's policy: the canary device first, then half of the rest, then the rest.
    await page.goto(url(`/fleets/${fleetId}/rollouts`));
    await page.getByRole("link", { name: "View rollout" }).first().click();
    const canary = page.getByRole("region", { name: "canary", exact: true });
    await canary.getByText("1 device", { exact: true }).waitFor();
    await page.getByRole("region", { name: "half", exact: true }).getByText("2 devices", { exact: true }).waitFor();
    await canary.getByText(/^Healthy enough: soaking, \d+ s left before the next wave$/).waitFor({ timeout: 150_000 });
    await shot(page, "releases-journey-demo-rollout");
    await page
      .getByRole("region", { name: "Rollout overview" })
      .getByText("Completed", { exact: true })
      .waitFor({ timeout: 150_000 });
    await expect
      .poll(async () => (await devices()).map((d) => d.is_running__release?.__id), { timeout: 150_000, interval: 1000 })
      .toEqual([id, id, id]);
    const [first] = await devices();
    const short = pushed?.commit.slice(0, 7);
    // Log lines are stored in batches (up to 1 s): the last may land after the device's report.
    await expect.poll(() => logsOf(String(first?.uuid))).toContain(`Release ${short} is running`);
    expect(await logsOf(String(first?.uuid))).toContain(`Downloading release ${short}`);
    await page.goto(url(`/devices/${first?.uuid}`));
    await page
      .getByRole("link", { name: /1\.2\.0/ })
      .first()
      .waitFor();
    await shot(page, "releases-journey-device");
  }, 180_000);

  it("a device pinned to the previous release goes back to it", async () => {
    const previous = await releaseByVersion("1.1.0");
    const [device] = await devices();
    await page.goto(url(`/devices/${device?.uuid}/settings`));
    await page.getByRole("region", { name: "Release" }).getByRole("button", { name: "Change" }).click();
    const dialog = page.getByRole("dialog", { name: "Pin to release" });
    await dialog.getByLabel("Release").click();
    await page.getByRole("option", { name: /^1\.1\.0/ }).click();
    await dialog.getByRole("button", { name: "Save" }).click();
    await page
      .getByRole("region", { name: "Release" })
      .getByText(/Pinned to 1\.1\.0/)
      .waitFor();
    await expect
      .poll(async () => (await devices()).find((d) => d.id === device?.id)?.is_running__release?.__id, {
        timeout: 90_000,
        interval: 1000,
      })
      .toBe(previous?.id);
    // The others stay on the fleet's release.
    expect((await devices()).filter((d) => d.is_running__release?.__id === pushed?.id)).toHaveLength(2);
  }, 120_000);

  it("finalizes a draft and invalidates an old release with their warnings; the pinned release cannot be deleted", async () => {
    const draftDir = project("draft", {
      "docker-compose.yml": "services:\n  main:\n    image: nginx:1.27-alpine\n",
      "balena.yml": "version: 1.3.0\n",
    });
    const draftPush = await cli("push", "demo/demo-fleet", draftDir, "--draft");
    expect(draftPush.code, draftPush.stderr).toBe(0);
    const draft = await releaseByVersion("1.3.0");
    await page.goto(url(`/fleets/${fleetId}/releases/${draft?.id}/settings`));
    const finalize = page.getByRole("region", { name: "Finalize" });
    await finalize.getByRole("button", { name: "Finalize" }).click();
    const finalizeDialog = page.getByRole("dialog", { name: "Finalize this release?" });
    await finalizeDialog
      .getByText("Finalizing is one way: you will not be able to turn this release back into a draft.")
      .waitFor();
    await finalizeDialog.getByRole("button", { name: "Finalize" }).click();
    await finalize.getByText("This release is already finalized.").waitFor();

    const old = await releaseByVersion("1.0.0");
    await page.goto(url(`/fleets/${fleetId}/releases/${old?.id}/settings`));
    const validity = page.getByRole("region", { name: "Validity" });
    await validity.getByRole("switch").click();
    const invalidate = page.getByRole("dialog", { name: "Invalidate this release?" });
    await invalidate
      .getByText(
        "Invalidating this release will update the devices that are not pinned to it to the fleet's latest valid release.",
      )
      .waitFor();
    await invalidate.getByRole("button", { name: "Invalidate" }).click();
    await validity.getByText("Invalidated", { exact: true }).waitFor();

    await page.goto(url(`/fleets/${fleetId}/releases`));
    const grid = page.getByRole("grid", { name: "Releases" });
    await grid
      .getByRole("row", { name: /1\.0\.0/ })
      .getByText("Invalidated")
      .waitFor();
    await grid
      .getByRole("row", { name: /1\.1\.0/ })
      .getByRole("checkbox")
      .check();
    await page.getByRole("button", { name: "Actions" }).click();
    await page.getByRole("menuitem", { name: "Delete" }).click();
    const remove = page.getByRole("dialog", { name: "Delete 1 release" });
    await remove.getByRole("button", { name: "Delete" }).click();
    await remove
      .getByText("A release that a fleet or a device is pinned to (or targets) cannot be deleted.", { exact: true })
      .waitFor();
    await shot(page, "releases-journey-delete-refused");
    await remove.getByRole("button", { name: "Cancel" }).click();
    expect(await releaseByVersion("1.1.0")).toBeDefined();
  }, 120_000);

  it("a bad compose file fails the build: the CLI exits non-zero and the build log shows the parse error", async () => {
    const dir = project("broken", { "docker-compose.yml": "services:\n  main:\n    image: [nginx\n" });
    const push = await cli("push", "demo/demo-fleet", dir);
    expect(push.code).not.toBe(0);
    expect(`${push.stdout}${push.stderr}`).toContain("error: docker-compose.yml:");
    const { d } = await call<{ d: Array<{ id: number; status: string }> }>(
      "GET",
      `/v7/release?$select=id,status&$filter=belongs_to__application eq ${fleetId}&$orderby=id desc&$top=1`,
    );
    expect(d[0]?.status).toBe("failed");
    await page.goto(url(`/fleets/${fleetId}/releases/${d[0]?.id}`));
    await page.getByRole("region", { name: "Release", exact: true }).getByText("Failed", { exact: true }).waitFor();
    const log = page.getByRole("log", { name: "Build log" }).locator(".xterm-rows");
    await log.getByText("error: docker-compose.yml:").waitFor();
    await log.getByText("build failed").waitFor();
    await shot(page, "releases-journey-failed");
  }, 60_000);
});
