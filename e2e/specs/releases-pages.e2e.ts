import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { startDemoSession } from "./demo-session.ts";
import { api, consent } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

/** Screenshots of the release pages for people to look at (outside the repository). */
async function shot(page: Page, name: string) {
  mkdirSync("/tmp/shots-releases", { recursive: true });
  await page.waitForTimeout(400);
  await page.screenshot({ path: `/tmp/shots-releases/${name}.png`, fullPage: true });
}

type Row = { id: number };
const hex = (seed: string) => seed.repeat(32).slice(0, 32);

/**
 * Issue #9, the dashboard: the releases list (search, fleet columns, a refused batch delete of
 * the fleet's target), the release summary (fields, services, Dockerfile and compose viewers,
 * the build-log terminal), finalize and invalidate with their warnings, the version and known
 * issues, the add-release dialog, an observer's read-only view, and pinning a device through
 * the release picker. Releases are seeded through the data API next to the demo's two built ones.
 */
describe("release pages", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let page: Page;
  const ids = { fleet: 0, block: 0, target: 0, draft: 0, long: 0, running: 0, failed: 0, device: 0 };
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;
  const call = <T>(method: string, path: string, body?: unknown) => api<T>(page, flotilla.apiUrl, method, path, body);
  const release = async (id: number) =>
    (
      await call<{
        d: Array<{ is_final: boolean; is_invalidated: boolean; known_issue_list: string | null; semver: string }>;
      }>("GET", `/v7/release(${id})?$select=is_final,is_invalidated,known_issue_list,semver`)
    ).d[0];

  beforeAll(async () => {
    ({ flotilla, browser, page } = await startDemoSession(0, { viewport: { width: 1280, height: 860 } }));
    const apps = await call<{ d: Array<{ id: number; app_name: string }> }>(
      "GET",
      "/v7/application?$select=id,app_name",
    );
    ids.fleet = apps.d.find((app) => app.app_name === "demo-fleet")?.id ?? 0;
    ids.block = apps.d.find((app) => app.app_name === "demo-block")?.id ?? 0;
    // The demo built 1.0.0 and 1.1.0; the fleet tracks the latest, so 1.1.0 is its target.
    const built = await call<{ d: Array<{ id: number; raw_version: string }> }>(
      "GET",
      `/v7/release?$select=id,raw_version&$filter=belongs_to__application eq ${ids.fleet}`,
    );
    ids.target = built.d.find((r) => r.raw_version.startsWith("1.1.0"))?.id ?? 0;
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    // Not final unless said (the API's default is final, as balena's): none of these moves the
    // fleet off 1.1.0.
    const post = (body: Record<string, unknown>) =>
      call<Row>("POST", "/v7/release", {
        belongs_to__application: ids.fleet,
        source: "cloud",
        composition: {},
        is_final: false,
        ...body,
      });
    ids.draft = (
      await post({
        commit: hex("d"),
        status: "success",
        is_final: false,
        semver_major: 2,
        semver_minor: 0,
        semver_patch: 0,
        start_timestamp: iso(now - 125_000),
        end_timestamp: iso(now - 60_000),
        composition: {
          services: { api: { build: "./api", ports: ["8080:8080"] }, cache: { image: "redis:7-alpine" } },
        },
        build_log: "[api] Step 1/3 : FROM node:20-alpine\n[api] Step 2/3 : COPY . .\n[api] Successfully built\n",
        known_issue_list: "Slow start on cold boots",
        note: "First cut of the API service",
      })
    ).id;
    const services = await call<{ d: Array<{ id: number; service_name: string }> }>(
      "GET",
      `/v7/service?$select=id,service_name&$filter=application eq ${ids.fleet}`,
    );
    const service = async (name: string) =>
      services.d.find((s) => s.service_name === name)?.id ??
      (await call<Row>("POST", "/v7/service", { application: ids.fleet, service_name: name })).id;
    for (const [name, dockerfile, size] of [
      ["api", 'FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD ["node", "server.js"]\n', 52_428_800],
      ["cache", null, 31_457_280],
    ] as const) {
      const image = await call<Row>("POST", "/v7/image", {
        is_a_build_of__service: await service(name),
        is_stored_at__image_location: `registry.local/demo/demo-fleet/${name}:${hex("d").slice(0, 7)}`,
        status: "success",
        image_size: size,
        dockerfile,
      });
      await call("POST", "/v7/release_image", { image: image.id, is_part_of__release: ids.draft });
    }
    await call("POST", "/v7/release_tag", { release: ids.draft, tag_key: "env", value: "staging" });
    ids.long = (
      await post({
        commit: hex("a"),
        status: "success",
        semver_major: 1,
        semver_minor: 2,
        semver_patch: 0,
        build_log: Array.from({ length: 3100 }, (_v, i) => `[main] build line ${i + 1}`).join("\n"),
      })
    ).id;
    ids.failed = (
      await post({
        commit: hex("f"),
        status: "failed",
        is_invalidated: true,
        semver_major: 1,
        semver_minor: 3,
        semver_patch: 0,
        build_log: "[main] build failed\n",
      })
    ).id;
    ids.running = (
      await post({
        commit: hex("b"),
        status: "running",
        semver_major: 1,
        semver_minor: 4,
        semver_patch: 0,
        start_timestamp: iso(now),
        build_log: "[main] Step 1/2 : FROM alpine\n",
      })
    ).id;
    const types = await call<{ d: Row[] }>("GET", "/v7/device_type?$select=id&$filter=slug eq 'raspberrypi4-64'");
    ids.device = (
      await call<Row>("POST", "/v7/device", {
        belongs_to__application: ids.fleet,
        is_of__device_type: types.d[0]?.id,
        device_name: "pin-me",
      })
    ).id;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  it("lists the fleet's releases newest first, searches version and tags, and refuses to delete the fleet's target", async () => {
    await page.goto(url(`/fleets/${ids.fleet}`));
    const menu = page.getByRole("navigation", { name: "Main navigation" });
    await menu.getByRole("link", { name: "Releases" }).click();
    await page.waitForURL(new RegExp(`/fleets/${ids.fleet}/releases$`));
    const grid = page.getByRole("grid", { name: "Releases" });
    await grid
      .getByRole("row", { name: /1\.4\.0/ })
      .getByText("Running")
      .waitFor();
    // Newest first: the running build was created last.
    const versions = await grid.getByRole("link").allTextContents();
    expect(versions.slice(0, 2)).toEqual(["1.4.0", "1.3.0"]);
    await grid
      .getByRole("row", { name: /1\.3\.0/ })
      .getByText("Invalidated")
      .first()
      .waitFor();
    await grid
      .getByRole("row", { name: /1\.3\.0/ })
      .getByText("Failed")
      .waitFor();
    await grid
      .getByRole("row", { name: /2\.0\.0/ })
      .getByText("Draft")
      .first()
      .waitFor();
    // Fleets show the devices and build-time columns.
    await grid.getByRole("columnheader", { name: "Devices" }).waitFor();
    await grid.getByRole("columnheader", { name: "Build time" }).waitFor();
    await shot(page, "01-releases-list");

    const search = page.getByLabel("Search version, commit or tag");
    await search.fill("staging");
    await expect.poll(async () => grid.getByRole("link").allTextContents()).toEqual(["2.0.0"]);
    await search.fill("1.1");
    await expect.poll(async () => grid.getByRole("link").allTextContents()).toEqual(["1.1.0"]);

    await grid
      .getByRole("row", { name: /1\.1\.0/ })
      .getByRole("checkbox")
      .check();
    await page.getByRole("button", { name: "Actions" }).click();
    await page.getByRole("menuitem", { name: "Delete" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete 1 release" });
    await dialog.getByRole("button", { name: "Delete" }).click();
    await dialog
      .getByText("A release that a fleet or a device is pinned to (or targets) cannot be deleted.")
      .last()
      .waitFor();
    await shot(page, "02-delete-refused");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect(await release(ids.target)).toBeDefined();
    await search.fill("");

    // A block shows fewer columns.
    await page.goto(url(`/blocks/${ids.block}/releases`));
    await page.getByRole("heading", { name: "Releases" }).waitFor();
    await page
      .getByText("No releases yet")
      .or(page.getByRole("grid", { name: "Releases" }))
      .first()
      .waitFor();
    expect(await page.getByRole("columnheader", { name: "Devices" }).count()).toBe(0);
  });

  it("shows a release's summary: fields, services, Dockerfile and compose viewers, and its build log", async () => {
    await page.goto(url(`/fleets/${ids.fleet}/releases`));
    await page.getByRole("grid", { name: "Releases" }).getByRole("link", { name: "2.0.0" }).click();
    await page.waitForURL(new RegExp(`/fleets/${ids.fleet}/releases/${ids.draft}$`));
    await page.getByRole("heading", { name: "Release 2.0.0" }).waitFor();
    const card = page.getByRole("region", { name: "Release", exact: true });
    await card.getByText("Succeeded").waitFor();
    await card.getByText("Draft (not rolled out)").waitFor();
    await card.getByText("Valid", { exact: true }).waitFor();
    await card.getByText(hex("d")).waitFor();
    await card.getByText("1m 5s").waitFor();
    await card.getByText("80 MB").waitFor();
    await card.getByText("running on 0 devices").waitFor();
    await page.getByRole("region", { name: "Known issues" }).getByText("Slow start on cold boots").waitFor();
    await page.getByRole("region", { name: "Notes" }).getByText("First cut of the API service").waitFor();
    await page.getByRole("region", { name: "Tags (1)" }).getByText("env: staging").waitFor();
    // Tags are managed in a dialog: a key is required, then the new tag is saved next to the old one.
    await page.getByRole("region", { name: "Tags (1)" }).getByRole("button", { name: "Manage tags" }).click();
    const tagsDialog = page.getByRole("dialog", { name: "Manage tags" });
    await tagsDialog.getByRole("button", { name: "Add tag" }).click();
    await tagsDialog.getByRole("button", { name: "Save tags" }).click();
    await tagsDialog.getByText("Every tag needs a key.").waitFor();
    await tagsDialog.getByLabel("Key").last().fill("owner");
    await tagsDialog.getByLabel("Value").last().fill("ops");
    await tagsDialog.getByRole("button", { name: "Save tags" }).click();
    await page.getByRole("region", { name: "Tags (2)" }).getByText("owner: ops").waitFor();
    expect(await tagsDialog.count()).toBe(0);
    const crumbs = page.getByRole("navigation", { name: "Breadcrumb" });
    await crumbs.getByText("2.0.0").waitFor();
    await crumbs.getByRole("link", { name: "Releases" }).waitFor();

    const services = page.getByRole("table", { name: "Services" });
    await services.getByRole("row", { name: /api/ }).getByText("50 MB").waitFor();
    await services.getByRole("button", { name: "View the Dockerfile of api" }).click();
    const dockerfile = page.getByRole("dialog", { name: "Dockerfile of api" });
    await dockerfile.getByText("WORKDIR /app").waitFor();
    await shot(page, "04-dockerfile");
    const download = page.waitForEvent("download");
    await dockerfile.getByRole("button", { name: "Download Dockerfile" }).click();
    expect((await download).suggestedFilename()).toBe("Dockerfile");
    await dockerfile.getByRole("button", { name: "Close" }).click();
    await services.getByRole("button", { name: "View the Dockerfile of cache" }).click();
    await page
      .getByRole("dialog", { name: "Dockerfile of cache" })
      .getByText("No Dockerfile available for this service.")
      .waitFor();
    await page.getByRole("dialog", { name: "Dockerfile of cache" }).getByRole("button", { name: "Close" }).click();

    await page.getByRole("button", { name: "docker-compose.yml" }).click();
    const compose = page.getByRole("dialog", { name: "docker-compose.yml" });
    await compose.getByText("image: redis:7-alpine").waitFor();
    await compose.getByText("build: ./api").waitFor();
    await compose.getByRole("button", { name: "Close" }).click();

    const log = page.getByRole("log", { name: "Build log" });
    await log.locator(".xterm-rows").getByText("Successfully built").waitFor();
    await shot(page, "03-release-summary");

    // A long log: the last 2,999 lines and a notice.
    await page.goto(url(`/fleets/${ids.fleet}/releases/${ids.long}`));
    await page.getByText("only its last 2999 of 3100 lines are shown").waitFor();
    expect(await page.getByRole("log", { name: "Build log" }).getAttribute("data-lines")).toBe("2999");
    await page.getByRole("log", { name: "Build log" }).locator(".xterm-rows").getByText("build line 3100").waitFor();

    // A running build: its log grows on the page while it runs.
    await page.goto(url(`/fleets/${ids.fleet}/releases/${ids.running}`));
    await page.getByRole("region", { name: "Release", exact: true }).getByText("Running", { exact: true }).waitFor();
    await call("PATCH", `/v7/release(${ids.running})`, {
      build_log: "[main] Step 1/2 : FROM alpine\n[main] Step 2/2 : RUN make\n",
    });
    await page
      .getByRole("log", { name: "Build log" })
      .locator(".xterm-rows")
      .getByText("RUN make")
      .waitFor({ timeout: 15_000 });
    await shot(page, "05-running-build");
  });

  it("finalizes a draft after the one-way warning", async () => {
    await page.goto(url(`/fleets/${ids.fleet}/releases/${ids.draft}`));
    await page.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Settings" }).click();
    await page.waitForURL(/\/settings$/);
    const finalize = page.getByRole("region", { name: "Finalize" });
    await finalize.getByRole("button", { name: "Finalize" }).click();
    const dialog = page.getByRole("dialog", { name: "Finalize this release?" });
    await dialog
      .getByText("Finalizing is one way: you will not be able to turn this release back into a draft.")
      .waitFor();
    await shot(page, "06-finalize-warning");
    await dialog.getByRole("button", { name: "Finalize" }).click();
    await finalize.getByText("This release is already finalized.").waitFor();
    expect(await finalize.getByRole("button", { name: "Finalize" }).count()).toBe(0);
    expect((await release(ids.draft))?.is_final).toBe(true);
  });

  it("invalidates after the warning, and cannot mark a failed release valid", async () => {
    const validity = page.getByRole("region", { name: "Validity" });
    await validity.getByRole("switch").click();
    const dialog = page.getByRole("dialog", { name: "Invalidate this release?" });
    await dialog
      .getByText(
        "Invalidating this release will update the devices that are not pinned to it to the fleet's latest valid release.",
      )
      .waitFor();
    await dialog.getByRole("button", { name: "Invalidate" }).click();
    await validity.getByText("Invalidated", { exact: true }).waitFor();
    expect((await release(ids.draft))?.is_invalidated).toBe(true);
    await validity.getByRole("switch").click();
    await validity.getByText("Valid", { exact: true }).waitFor();
    expect((await release(ids.draft))?.is_invalidated).toBe(false);

    await page.goto(url(`/fleets/${ids.fleet}/releases/${ids.failed}/settings`));
    const failed = page.getByRole("region", { name: "Validity" });
    await failed.getByText("Failed or cancelled releases cannot be marked valid.").waitFor();
    expect(await failed.getByRole("switch").isDisabled()).toBe(true);
  });

  it("edits the version as x.y.z only and saves known issues as you type", async () => {
    await page.goto(url(`/fleets/${ids.fleet}/releases/${ids.draft}/settings`));
    const version = page.getByRole("region", { name: "Version" });
    await version.getByLabel("Version").fill("2.1");
    await version.getByText("The release version must be three numbers: major.minor.patch").waitFor();
    expect(await version.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    await version.getByLabel("Version").fill("2.1.0");
    await version.getByRole("button", { name: "Save" }).click();
    await page.getByText("Version saved").waitFor();
    await expect.poll(async () => (await release(ids.draft))?.semver).toBe("2.1.0");

    const issues = page.getByRole("region", { name: "Known issues" });
    await issues.getByLabel("Known issues").fill("Slow start on cold boots; fixed in 2.2");
    await issues.getByText("Saved", { exact: true }).waitFor();
    expect((await release(ids.draft))?.known_issue_list).toBe("Slow start on cold boots; fixed in 2.2");
    await shot(page, "07-release-settings");
  });

  it("shows the CLI commands in the add-release dialog", async () => {
    await page.goto(url(`/fleets/${ids.fleet}/releases`));
    await page.getByRole("button", { name: "Add release" }).first().click();
    const dialog = page.getByRole("dialog", { name: "Add a release to demo-fleet" });
    await dialog.getByRole("tab", { name: "CLI (recommended)" }).waitFor();
    await dialog.getByRole("button", { name: "macOS" }).click();
    await dialog.getByText("brew install node").waitFor();
    await dialog.getByText(`npx flotilla login --api ${flotilla.apiUrl}`).waitFor();
    await dialog.getByText("npx flotilla push demo/demo-fleet").waitFor();
    await shot(page, "08-add-release");
    await dialog.getByRole("tab", { name: "git" }).click();
    await dialog.getByRole("link", { name: "Add an SSH key in your preferences" }).waitFor();
    await dialog.getByRole("button", { name: "Close" }).click();
  });

  it("pins a device through the release picker, where invalidated releases are not offered", async () => {
    await page.goto(url(`/fleets/${ids.fleet}/releases/${ids.draft}/settings`));
    // Invalidate 1.2.0 so that the picker leaves it out.
    await call("PATCH", `/v7/release(${ids.long})`, { is_invalidated: true });
    const devices = await call<{ d: Array<{ uuid: string }> }>("GET", `/v7/device(${ids.device})?$select=uuid`);
    const uuid = devices.d[0]?.uuid ?? "";
    await page.goto(url(`/devices/${uuid}/settings`));
    await page.getByRole("region", { name: "Release" }).getByRole("button", { name: "Change" }).click();
    const dialog = page.getByRole("dialog", { name: "Pin to release" });
    await dialog.getByLabel("Release").click();
    await page.getByRole("option", { name: /No release/ }).waitFor();
    await page.getByRole("option", { name: /^2\.1\.0/ }).waitFor();
    expect(await page.getByRole("option", { name: /^1\.2\.0/ }).count()).toBe(0);
    expect(await page.getByRole("option", { name: /^1\.3\.0/ }).count()).toBe(0);
    expect(await page.getByRole("option", { name: /^1\.4\.0/ }).count()).toBe(0);
    await shot(page, "09-picker");
    await page.getByRole("option", { name: /^1\.0\.0/ }).click();
    await dialog.getByRole("button", { name: "Save" }).click();
    await page
      .getByTestId("device-release")
      .getByText(/Pinned to 1\.0\.0/)
      .waitFor();
    const pinned = await call<{ d: Array<{ is_pinned_on__release: { __id: number } | null }> }>(
      "GET",
      `/v7/device(${ids.device})?$select=is_pinned_on__release`,
    );
    expect(pinned.d[0]?.is_pinned_on__release).not.toBeNull();
    // The device summary links its target release to the release page.
    await page.goto(url(`/devices/${uuid}`));
    await page.getByRole("link", { name: /1\.0\.0/ }).click();
    await page.waitForURL(new RegExp(`/fleets/${ids.fleet}/releases/\\d+$`));
    await page.getByRole("heading", { name: "Release 1.0.0" }).waitFor();
  });

  it("sends a bad release id up and reports a missing release", async () => {
    await page.goto(url(`/fleets/${ids.fleet}/releases/abc`));
    await page.waitForURL(new RegExp(`/fleets/${ids.fleet}/releases$`));
    await page.getByText("invalid id passed in url").waitFor();
    await page.goto(url(`/fleets/${ids.fleet}/releases/987654`));
    await page.waitForURL(new RegExp(`/fleets/${ids.fleet}/releases$`));
    await page.getByText("Release not found: 987654").waitFor();
  });

  it("shows an observer no edit buttons, build log, compose or tags, and no settings", async () => {
    const roles = await call<{ d: Array<{ id: number; name: string }> }>(
      "GET",
      "/v7/application_membership_role?$select=id,name",
    );
    await call("POST", "/v7/user_application_membership", {
      username: "demo-member",
      is_member_of__application: ids.fleet,
      application_membership_role: roles.d.find((role) => role.name === "observer")?.id,
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    await context.addInitScript(consent);
    const observer = await context.newPage();
    await logIn(observer, flotilla.dashboardUrl, "demo-member", DEMO.password);
    await observer.waitForURL(/\/fleets$/);
    await observer.goto(url(`/fleets/${ids.fleet}/releases/${ids.draft}`));
    await observer.getByRole("heading", { name: "Release 2.1.0" }).waitFor();
    // Known issues are present, so they show.
    await observer.getByRole("region", { name: "Known issues" }).getByText("fixed in 2.2").waitFor();
    await observer.getByRole("table", { name: "Services" }).waitFor();
    expect(await observer.getByRole("log", { name: "Build log" }).count()).toBe(0);
    expect(await observer.getByRole("button", { name: "docker-compose.yml" }).count()).toBe(0);
    expect(await observer.getByRole("region", { name: /^Tags/ }).count()).toBe(0);
    expect(await observer.getByRole("link", { name: "Edit" }).count()).toBe(0);
    const menu = observer.getByRole("navigation", { name: "Main navigation" });
    await menu.getByRole("link", { name: "Summary" }).waitFor();
    expect(await menu.getByRole("link", { name: "Settings" }).count()).toBe(0);
    await shot(observer, "10-observer");
    // No known issues: none shown.
    await observer.goto(url(`/fleets/${ids.fleet}/releases/${ids.target}`));
    await observer.getByRole("heading", { name: /Release 1\.1\.0/ }).waitFor();
    expect(await observer.getByRole("region", { name: "Known issues" }).count()).toBe(0);
    await observer.goto(url(`/fleets/${ids.fleet}/releases/${ids.draft}/settings`));
    await observer.waitForURL(/\/fleets$/);
    await context.close();
  });
});
