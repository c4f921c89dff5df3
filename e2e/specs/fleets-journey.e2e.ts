import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { api, consent, shot } from "./fleets-helpers.ts";
import { DEMO, recordUrls } from "./web-helpers.ts";

/**
 * Issue 6 "Done when", as people would do it: the demo administrator creates a fleet with the
 * suggested name, finds it in the table and grid lenses, renames it (bad names show the spec's
 * messages), pins it to a release and back to latest, grants and revokes support access,
 * transfers it to another organization and deletes it with typed confirmation. An observer sees
 * no settings; /fleets/abc shows "invalid id passed in url" and goes up one level.
 */
describe("fleets: create, list, settings, transfer, delete", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let adminContext: BrowserContext;
  let admin: Page;
  let fleetName = "";
  let fleetId = 0;
  const renamed = `journey-${Date.now() % 100000}`;
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;
  const call = <T>(page: Page, method: string, path: string, body?: unknown) =>
    api<T>(page, flotilla.apiUrl, method, path, body);

  beforeAll(async () => {
    flotilla = await startFlotilla();
    browser = await launchBrowser();
    adminContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await adminContext.addInitScript(consent);
    admin = await adminContext.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
  });

  it("creates a fleet with the suggested name", async () => {
    await logIn(admin, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await admin.waitForURL(/\/fleets$/);
    await admin.getByRole("table", { name: "Fleets" }).getByRole("link", { name: "demo-fleet" }).waitFor();
    await admin.getByRole("button", { name: "Create fleet" }).first().click();
    const dialog = admin.getByRole("dialog", { name: "Create fleet" });
    const name = dialog.getByLabel("Fleet name");
    await expect.poll(() => name.inputValue()).toMatch(/^[a-z]+-[a-z]+$/);
    // The name rules show live; create stays disabled while the name is bad.
    await name.fill("ab");
    await dialog.getByText("The name should be at least 4 characters long").waitFor();
    expect(await dialog.getByRole("button", { name: "Create fleet" }).isDisabled()).toBe(true);
    await name.fill("Demo-Fleet");
    await dialog
      .getByText("This name is already used by another fleet. Note that the name is case-insensitive")
      .waitFor();
    expect(await dialog.getByRole("button", { name: "Create fleet" }).isDisabled()).toBe(true);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    // A fresh dialog suggests a fresh name; the defaults are raspberrypi4-64 and a usable fleet type.
    await admin.getByRole("button", { name: "Create fleet" }).first().click();
    await expect.poll(() => name.inputValue()).toMatch(/^[a-z]+-[a-z]+$/);
    fleetName = await name.inputValue();
    await dialog.getByText("Raspberry Pi 4 (using 64bit OS)").waitFor();
    await dialog.getByLabel("Organization").click();
    await admin.getByRole("option", { name: "Demo", exact: true }).click();
    await dialog.getByLabel("Fleet type").click();
    await admin.getByRole("option", { name: /Microservices/ }).waitFor();
    await shot(admin, "02-create-fleet-types");
    await admin.keyboard.press("Escape");
    await shot(admin, "01-create-dialog");
    await dialog.getByRole("button", { name: "Create fleet" }).click();
    await admin.waitForURL(/\/fleets\/\d+$/);
    fleetId = Number(new URL(admin.url()).pathname.split("/")[2]);
    await admin.getByRole("heading", { name: fleetName }).waitFor();
    await admin.getByText("This fleet has no devices yet").waitFor();
    await admin.getByRole("link", { name: "Add device" }).waitFor();
    await shot(admin, "03-fleet-summary");
  });

  it("shows the fleet in the table and the grid lens", async () => {
    await admin.goto(url("/fleets"));
    const table = admin.getByRole("table", { name: "Fleets" });
    await table.getByRole("link", { name: fleetName }).waitFor();
    await shot(admin, "04-fleets-table");
    // The headers sort: by name, then by name descending.
    const firstColumn = async () => {
      const rows = await table.getByRole("row").all();
      return Promise.all(rows.slice(1).map((row) => row.getByRole("cell").first().innerText()));
    };
    const byName = (a: string, b: string) => a.localeCompare(b, undefined, { sensitivity: "base", numeric: true });
    await table.getByRole("button", { name: "Name" }).click();
    const ascending = await firstColumn();
    expect(ascending.length).toBeGreaterThan(1);
    expect(ascending).toEqual([...ascending].sort(byName));
    await table.getByRole("button", { name: "Name" }).click();
    expect(await firstColumn()).toEqual([...ascending].reverse());
    await admin.getByRole("button", { name: "Grid" }).click();
    const card = admin.getByRole("list", { name: "Fleets" }).getByRole("listitem", { name: fleetName });
    await card.waitFor();
    expect((await card.boundingBox())?.width).toBeGreaterThanOrEqual(370);
    await card.getByText("0 devices").waitFor();
    await shot(admin, "05-fleets-grid");
    // The lens is remembered.
    await admin.reload();
    await admin.getByRole("list", { name: "Fleets" }).getByRole("listitem", { name: fleetName }).waitFor();
    await admin.getByRole("button", { name: "Table" }).click();
    await table.waitFor();
  });

  it("renames the fleet; bad names show the spec's messages", async () => {
    await admin.goto(url(`/fleets/${fleetId}`));
    await admin.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Settings" }).click();
    await admin.waitForURL(new RegExp(`/fleets/${fleetId}/settings$`));
    const rename = admin.getByRole("region", { name: "Rename" });
    await rename.getByText("Renaming the fleet will restart application containers").waitFor();
    const name = rename.getByLabel("Name");
    const messages: Array<[string, string]> = [
      ["", "A name is required"],
      ["abc", "The name should be at least 4 characters long"],
      ["x".repeat(101), "The name should not be more than 100 characters long"],
      ["-leading", "The name can only contain alphanumeric characters, hyphens or underscores"],
      ["has space", "The name can only contain alphanumeric characters, hyphens or underscores"],
      ["DEMO-FLEET", "This name is already used by another fleet. Note that the name is case-insensitive"],
    ];
    for (const [value, message] of messages) {
      await name.fill(value);
      await rename.getByText(message).waitFor();
      expect(await rename.getByRole("button", { name: "Rename" }).isDisabled()).toBe(true);
    }
    await shot(admin, "06-rename-error");
    await name.fill(renamed);
    await rename.getByRole("button", { name: "Rename" }).click();
    await admin.getByText("Renamed successfully").waitFor();
    await admin.getByRole("heading", { name: "Settings" }).waitFor();
    await admin.getByRole("navigation", { name: "Breadcrumb" }).getByText(renamed).waitFor();
  });

  it("pins the fleet to a release and tracks the latest again", async () => {
    const release = await call<{ id: number; commit: string }>(admin, "POST", "/v7/release", {
      belongs_to__application: fleetId,
      commit: "0123456789abcdef0123456789abcdef",
      status: "success",
      composition: {},
      source: "cloud",
      semver_major: 1,
      semver_minor: 2,
      semver_patch: 3,
    });
    await admin.reload();
    const section = admin.getByRole("region", { name: "Release", exact: true });
    await section.getByLabel("Target release").click();
    await admin.getByRole("option", { name: /1\.2\.3 \(0123456\)/ }).click();
    await section.getByRole("button", { name: "Save" }).click();
    await admin.getByText("Pinned to release").waitFor();
    const pinned = await call<{
      d: Array<{ should_track_latest_release: boolean; should_be_running__release: { __id: number } }>;
    }>(admin, "GET", `/v7/application(${fleetId})?$select=should_track_latest_release,should_be_running__release`);
    expect(pinned.d[0]?.should_track_latest_release).toBe(false);
    expect(pinned.d[0]?.should_be_running__release.__id).toBe(release.id);
    await section.getByLabel("Target release").click();
    await admin.getByRole("option", { name: "Track latest" }).click();
    await section.getByRole("button", { name: "Save" }).click();
    await admin.getByText("Tracking the latest release").waitFor();
    const tracking = await call<{ d: Array<{ should_track_latest_release: boolean }> }>(
      admin,
      "GET",
      `/v7/application(${fleetId})?$select=should_track_latest_release`,
    );
    expect(tracking.d[0]?.should_track_latest_release).toBe(true);
  });

  it("grants and revokes support access", async () => {
    const section = admin.getByRole("region", { name: "Support access" });
    await section.getByText("Support access is off").waitFor();
    // The suggested date is 5 days ahead.
    const suggested = new Date(await section.getByLabel("Grant until").inputValue()).getTime();
    expect(Math.abs(suggested - (Date.now() + 5 * 24 * 3600 * 1000))).toBeLessThan(5 * 60 * 1000);
    await section.getByLabel("Grant until").fill("2020-01-01T10:00");
    await section.getByRole("button", { name: "Grant" }).click();
    await section.getByText("The date cannot be earlier than now").waitFor();
    await section.getByLabel("Grant until").fill(`${new Date().getFullYear() + 1}-06-01T10:00`);
    await section.getByRole("button", { name: "Grant" }).click();
    await admin.getByText("Support access granted until").waitFor();
    await section.getByText(/Granted until Jun 1st \d{4}, 10:00 AM/).waitFor();
    await shot(admin, "07-settings");
    await section.getByRole("button", { name: "Revoke" }).click();
    await admin.getByText("Support access removed").waitFor();
    await section.getByText("Support access is off").waitFor();
  });

  it("transfers the fleet to another organization", async () => {
    const target = `Transfer Target ${Date.now() % 100000}`;
    await call(admin, "POST", "/v7/organization", { name: target });
    await admin.reload();
    const danger = admin.getByRole("region", { name: "Danger zone" });
    await danger.getByRole("button", { name: "Show" }).click();
    await danger.getByRole("button", { name: "Transfer ownership" }).click();
    const dialog = admin.getByRole("dialog", { name: "Transfer ownership" });
    await dialog.getByText("You will lose access").waitFor();
    await dialog.getByLabel("Target organization").click();
    await admin.getByRole("option", { name: target }).click();
    await shot(admin, "08-transfer");
    await dialog.getByRole("button", { name: "Transfer ownership" }).click();
    await admin.getByText(`${renamed} transferred`).waitFor();
    await admin.waitForURL(/\/fleets$/);
    const moved = await call<{ d: Array<{ organization: Array<{ name: string }> }> }>(
      admin,
      "GET",
      `/v7/application(${fleetId})?$select=id&$expand=organization($select=name)`,
    );
    expect(moved.d[0]?.organization[0]?.name).toBe(target);
  });

  it("deletes the fleet with typed confirmation", async () => {
    await admin.goto(url(`/fleets/${fleetId}/settings`));
    const danger = admin.getByRole("region", { name: "Danger zone" });
    await danger.getByRole("button", { name: "Show" }).click();
    await danger.getByRole("button", { name: "Delete" }).click();
    const dialog = admin.getByRole("dialog", { name: "Delete fleet" });
    await dialog.getByText("also removes its devices").waitFor();
    const confirm = dialog.getByRole("button", { name: "Delete" });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByRole("textbox").pressSequentially(renamed.slice(0, -1));
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByRole("textbox").pressSequentially(renamed.slice(-1));
    await shot(admin, "09-delete");
    await confirm.click();
    await admin.getByText(`${renamed} deleted`).waitFor();
    await admin.waitForURL(/\/fleets$/);
    await admin.getByRole("table", { name: "Fleets" }).getByRole("link", { name: "demo-fleet" }).waitFor();
    expect(await admin.getByRole("link", { name: renamed }).count()).toBe(0);
    // The deleted fleet's address leads to /fleets.
    await admin.goto(url(`/fleets/${fleetId}`));
    await admin.getByText(`Fleet not found: ${fleetId}`).waitFor();
    await admin.waitForURL(/\/fleets$/);
  });

  it("an observer sees no settings", async () => {
    const demoFleet = await call<{ d: Array<{ id: number }> }>(
      admin,
      "GET",
      "/v7/application?$select=id&$filter=app_name eq 'demo-fleet'",
    );
    const demoFleetId = demoFleet.d[0]?.id ?? 0;
    const roles = await call<{ d: Array<{ id: number; name: string }> }>(
      admin,
      "GET",
      "/v7/application_membership_role?$select=id,name",
    );
    await call(admin, "POST", "/v7/user_application_membership", {
      username: "demo-member",
      is_member_of__application: demoFleetId,
      application_membership_role: roles.d.find((role) => role.name === "observer")?.id,
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(consent);
    const observer = await context.newPage();
    await logIn(observer, flotilla.dashboardUrl, "demo-member", DEMO.password);
    await observer.waitForURL(/\/fleets$/);
    await observer.goto(url(`/fleets/${demoFleetId}`));
    await observer.getByTestId("fleet-role").getByText("Observer").waitFor();
    const menu = observer.getByRole("navigation", { name: "Main navigation" });
    await menu.getByRole("link", { name: "Members" }).waitFor();
    expect(await menu.getByRole("link", { name: "Settings" }).count()).toBe(0);
    await shot(observer, "10-observer-summary");
    await observer.goto(url(`/fleets/${demoFleetId}/settings`));
    await observer.waitForURL(/\/fleets$/);
    // Someone who administers no organization is told to contact an administrator.
    await observer.getByRole("button", { name: "Create fleet" }).first().click();
    const dialog = observer.getByRole("dialog", { name: "Create fleet" });
    await dialog.getByText("Contact an administrator of your organization").waitFor();
    expect(await dialog.getByRole("button", { name: "Create fleet" }).isDisabled()).toBe(true);
    await shot(observer, "16-contact-administrator");
    await context.close();
  });

  it("/fleets/abc shows invalid id passed in url and goes up one level", async () => {
    const urls = recordUrls(admin);
    await admin.goto(url("/fleets/abc"));
    await admin.getByText("invalid id passed in url").waitFor();
    await admin.waitForURL(/\/fleets$/);
    expect(new URL(urls.at(-1) ?? "").pathname).toBe("/fleets");
  });
});
