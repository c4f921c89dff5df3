import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const ADMIN = { email: "root@example.com", password: "admin-password-1" };

async function shot(page: Page, name: string) {
  await page.waitForTimeout(400);
  await page.screenshot({ path: `/tmp/shots-orgs/${name}.png`, fullPage: true });
}

/**
 * Fleet members and teams pages (spec 2 §2), invitation and id errors, the member and team
 * pages of the demo organization, and a platform administrator's "Log in as user" (spec 3 §6).
 */
describe("organizations: fleet access, errors and log in as user", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  // One simulated device, for the support-access step.
  const env = {
    FLOTILLA_ADMIN_EMAIL: ADMIN.email,
    FLOTILLA_ADMIN_PASSWORD: ADMIN.password,
    FLOTILLA_DEMO_DEVICES: "1",
  };
  useDashboard(env, (ui) => {
    ({ flotilla, page } = ui);
  });
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;

  async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
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
      { apiUrl: flotilla.apiUrl, method, path, body },
    ) as Promise<T>;
  }

  async function signIn(email: string, password: string) {
    await page
      .context()
      .addInitScript(() => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials")));
    await logIn(page, flotilla.dashboardUrl, email, password);
    await page.waitForURL(/\/fleets$/);
  }

  it("a bad invitation link and a non-numeric id go back with their errors", async () => {
    await signIn(DEMO.email, DEMO.password);
    await page.goto(url("/organization/invitation/not-a-real-token"));
    await page.waitForURL(url("/orgs"));
    await page.getByText("Invitation invalid or expired").waitFor();
    await page.goto(url("/invitation/not-a-real-token"));
    await page.waitForURL(url("/fleets"));
    await page.getByText("Invitation invalid or expired").first().waitFor();
    await page.goto(url("/orgs/abc/members"));
    await page.waitForURL(url("/orgs"));
    await page.getByText(/invalid id passed in url/i).waitFor();
  });

  it("manages a fleet's members: add by username, batch role change, invite and revoke, batch delete", async () => {
    await signIn(DEMO.email, DEMO.password);
    const [org] = (
      await api<{ d: Array<{ id: number }> }>("GET", "/v7/organization?$select=id&$filter=handle%20eq%20'demo'")
    ).d;
    const [deviceType] = (await api<{ d: Array<{ id: number }> }>("GET", "/v7/device_type?$select=id&$top=1")).d;
    const fleet = await api<{ id: number }>("POST", "/v7/application", {
      app_name: "greenhouse",
      organization: org?.id,
      is_for__device_type: deviceType?.id,
    });
    await page.goto(url(`/fleets/${fleet.id}/members`));
    await page.getByRole("heading", { name: "Members", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Add member" }).click();
    const add = page.getByRole("dialog", { name: "Add member" });
    await add.getByLabel("Username or email").fill("demo-member");
    // The default role is developer.
    expect(await add.getByRole("combobox", { name: "Role" }).textContent()).toContain("Developer");
    await add.getByRole("button", { name: "Add" }).click();
    await page.getByText("Resource added").waitFor();
    const table = page.getByRole("table", { name: "Members" });
    await table.getByRole("row", { name: /demo-member.*Developer/ }).waitFor();

    await table.getByRole("checkbox", { name: "Select demo-member" }).check();
    await page.getByRole("button", { name: "Change role" }).click();
    const change = page.getByRole("dialog", { name: "Change the role of 1 member" });
    await change.getByRole("combobox", { name: "Role" }).click();
    await page.getByRole("option", { name: /Observer/ }).click();
    await change.getByRole("button", { name: "Change role" }).click();
    await page.getByText("All changes successful").waitFor();
    await table.getByRole("row", { name: /demo-member.*Observer/ }).waitFor();

    await page.getByRole("button", { name: "Add member" }).click();
    await add.getByLabel("Username or email").fill("guest@example.com");
    await add.getByText("An invitation will be emailed").waitFor();
    await add.getByLabel("Message (optional)").fill("Have a look");
    await add.getByRole("button", { name: "Add" }).click();
    const pending = page.getByRole("table", { name: "Pending invitations" });
    await pending.getByText("guest@example.com").waitFor();
    await shot(page, "11-fleet-members-admin");
    await pending.getByRole("button", { name: "Revoke" }).click();
    await page.getByText("Invitation revoked").waitFor();
    await page.getByText("No pending invitations").waitFor();

    await table.getByRole("checkbox", { name: "Select demo-member" }).check();
    await page.getByRole("button", { name: "Remove access" }).click();
    const confirm = page.getByRole("dialog", { name: "Remove access" });
    await confirm.getByText("Removing member access cannot be undone.").waitFor();
    await confirm.getByRole("button", { name: "Remove access" }).click();
    await page.getByText("No members with direct access").waitFor();

    // Teams page: add the team "Operators" as observers, then remove it in a batch.
    await page.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Teams" }).click();
    await page.getByRole("button", { name: "Add to team" }).click();
    const addTeam = page.getByRole("dialog", { name: "Add to team" });
    await addTeam.getByRole("combobox", { name: "Teams" }).click();
    await page.getByRole("option", { name: "Operators" }).click();
    await page.keyboard.press("Escape");
    await addTeam.getByRole("button", { name: "Add" }).click();
    await page.getByText("Resource added to team").waitFor();
    const teams = page.getByRole("table", { name: "Teams" });
    await teams.getByRole("row", { name: /Operators.*Developer/ }).waitFor();
    await shot(page, "12-fleet-teams-admin");
    await teams.getByRole("checkbox", { name: "Select Operators" }).check();
    await page.getByRole("button", { name: "Remove access" }).click();
    await page.getByRole("dialog", { name: "Remove access" }).getByRole("button", { name: "Remove access" }).click();
    await page.getByText("No team has access").waitFor();
  });

  it("shows the demo organization's members, a member's page and the team page", async () => {
    await signIn(DEMO.email, DEMO.password);
    await page.goto(url("/orgs"));
    await page.getByRole("link", { name: "Demo" }).click();
    await page.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Teams" }).click();
    await page.getByRole("link", { name: "Operators" }).waitFor();
    await shot(page, "13-teams");
    await page.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Members" }).click();
    await page.getByRole("table", { name: "Members" }).getByRole("link", { name: "demo-member" }).click();
    await page.getByRole("heading", { name: "demo-member" }).waitFor();
    await page.getByRole("region", { name: "Teams" }).getByRole("link", { name: "Operators" }).waitFor();
    const menu = page.getByRole("navigation", { name: "Main navigation" });
    for (const entry of ["Summary", "Fleets", "Blocks", "Teams"])
      await menu.getByRole("link", { name: entry }).waitFor();
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByText("demo-member").waitFor();
    await shot(page, "14-member");
  });

  it("platform staff see a fleet and its devices only while support access is granted, with a banner saying so", async () => {
    await signIn(DEMO.email, DEMO.password);
    const [fleet] = (
      await api<{ d: Array<{ id: number }> }>("GET", "/v7/application?$select=id&$filter=app_name%20eq%20'demo-fleet'")
    ).d;
    // The demo's simulated devices register while the server starts.
    let device: { uuid: string } | undefined;
    await expect
      .poll(
        async () => {
          [device] = (
            await api<{ d: Array<{ uuid: string }> }>(
              "GET",
              `/v7/device?$select=uuid&$filter=belongs_to__application%20eq%20${fleet?.id}&$top=1`,
            )
          ).d;
          return device?.uuid;
        },
        { timeout: 60_000 },
      )
      .toBeDefined();
    await page.context().clearCookies();
    await page.evaluate(() => localStorage.removeItem("balena-token"));

    await signIn(ADMIN.email, ADMIN.password);
    await page.goto(url(`/fleets/${fleet?.id}`));
    await page
      .getByText(`Fleet not found: ${fleet?.id}. Platform staff see a fleet only while it grants support access.`)
      .waitFor();
    await page.waitForURL(url("/fleets"));

    // The owner grants support access for a day.
    await page.evaluate(() => localStorage.removeItem("balena-token"));
    await signIn(DEMO.email, DEMO.password);
    await api("PATCH", `/v7/application(${fleet?.id})`, {
      is_accessible_by_support_until__date: new Date(Date.now() + 24 * 3600_000).toISOString(),
    });
    await page.evaluate(() => localStorage.removeItem("balena-token"));

    await signIn(ADMIN.email, ADMIN.password);
    await page.goto(url(`/fleets/${fleet?.id}`));
    await page.getByRole("heading", { name: "demo-fleet", level: 1 }).waitFor();
    await page.getByText(/^Support access to this fleet is granted until /).waitFor();
    await shot(page, "16-support-access-fleet");
    await page.goto(url(`/devices/${device?.uuid}`));
    await page.getByText(/^Support access to this device is granted until /).waitFor();
    await shot(page, "17-support-access-device");
  });

  it("a platform administrator logs in as a user; the header says so", async () => {
    await signIn(ADMIN.email, ADMIN.password);
    await page.getByRole("button", { name: "Account menu" }).click();
    await page.getByRole("menuitem", { name: "Log in as user" }).click();
    const dialog = page.getByRole("dialog", { name: "Log in as user" });
    await dialog.getByLabel("Username").fill("demo-member");
    await dialog.getByRole("button", { name: "Log in as user" }).click();
    await page.getByRole("status").getByText("Logged in as demo-member").waitFor();
    await shot(page, "15-impersonating");
    // An impersonated session cannot impersonate again.
    await page.getByRole("button", { name: "Account menu" }).click();
    expect(await page.getByRole("menuitem", { name: "Log in as user" }).count()).toBe(0);
  });
});
