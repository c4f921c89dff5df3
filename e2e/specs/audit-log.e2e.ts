import fs from "node:fs";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import { DEMO_PASSWORD, type RunningFlotilla } from "../support/flotilla.ts";
import { api, consent, demoIds } from "./fleets-helpers.ts";
import { DEMO, screenshot } from "./web-helpers.ts";

const MEMBER = { login: "demo-member", password: DEMO_PASSWORD };
const ADMIN = { email: "root@example.com", password: "admin-password-1" };
/** More variable entries than one page (50) holds, so "Load more" has something to load. */
const VARIABLES = 27;

/**
 * Issue [fleet-ops] "Done when": an administrator filters the audit log and exports CSV. Entries
 * come from real changes (an API key, variables, a membership's role); the page filters them by
 * category and exact action, pages with "Load more", and the CSV has the filtered entries. A
 * member sees neither the menu entries nor the pages.
 */
describe("audit log page", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  useDashboard({ FLOTILLA_ADMIN_EMAIL: ADMIN.email, FLOTILLA_ADMIN_PASSWORD: ADMIN.password }, (ui) => {
    ({ flotilla, page } = ui);
  });
  const url = (p: string) => `${flotilla.dashboardUrl}${p}`;

  async function signIn(login: string, password: string) {
    await page.context().addInitScript(consent);
    await page.goto(url("/login"));
    await page.getByLabel("Email or username").fill(login);
    await page.getByLabel("Password", { exact: true }).fill(password);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/fleets$/);
  }

  async function choose(label: string, option: string) {
    await page.getByRole("combobox", { name: label }).click();
    await page.getByRole("option", { name: option, exact: true }).click();
  }

  const table = () => page.getByRole("table", { name: "Audit log entries" });
  const rows = () =>
    table()
      .getByRole("row")
      .filter({ hasNot: page.getByRole("columnheader") });

  it("an administrator filters the audit log and exports CSV", async () => {
    await signIn(DEMO.email, DEMO.password);
    const ids = await demoIds(page, flotilla.apiUrl);
    // No content type without a body: the server refuses an empty JSON body (DELETE).
    const call = <T>(method: string, p: string, body?: unknown) =>
      body === undefined
        ? (page.evaluate(
            async ({ href, method }) => {
              const token = localStorage.getItem("balena-token");
              const response = await fetch(href, { method, headers: { Authorization: `Bearer ${token}` } });
              if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
              const text = await response.text();
              return text ? JSON.parse(text) : undefined;
            },
            { href: `${flotilla.apiUrl}${p}`, method },
          ) as Promise<T>)
        : api<T>(page, flotilla.apiUrl, method, p, body);

    // Entries to find: a provisioning key, variables created, one updated, all deleted, a role change.
    await call("POST", "/api-key/v2/", {
      actorType: "application",
      actorTypeId: ids.fleet,
      roles: ["provisioning-api-key"],
      name: "audit-e2e-key",
    });
    const created: number[] = [];
    for (let i = 0; i < VARIABLES; i++) {
      const variable = await call<{ id: number }>("POST", "/v7/application_environment_variable", {
        application: ids.fleet,
        name: `AUDIT_E2E_${i}`,
        value: "secret-value-never-logged",
      });
      created.push(variable.id);
    }
    await call("PATCH", `/v7/application_environment_variable(${created[0]})`, { value: "other" });
    for (const id of created) await call("DELETE", `/v7/application_environment_variable(${id})`);
    const memberships = await call<{ d: Array<{ id: number; user: Array<{ username: string }> }> }>(
      "GET",
      `/v7/organization_membership?$select=id&$expand=user($select=username)&$filter=is_member_of__organization eq ${ids.org}`,
    );
    const member = memberships.d.find((row) => row.user[0]?.username === MEMBER.login);
    const roles = await call<{ d: Array<{ id: number; name: string }> }>(
      "GET",
      "/v7/organization_membership_role?$select=id,name",
    );
    const roleId = (name: string) => roles.d.find((role) => role.name === name)?.id;
    // Promoted and put back: two role changes, and the member is a member again for the last test.
    await call("PATCH", `/v7/organization_membership(${member?.id})`, {
      organization_membership_role: roleId("administrator"),
    });
    await call("PATCH", `/v7/organization_membership(${member?.id})`, {
      organization_membership_role: roleId("member"),
    });

    // The menu leads there.
    await page.goto(url(`/orgs/${ids.org}`));
    await page.getByRole("navigation", { name: "Main navigation" }).getByRole("link", { name: "Audit log" }).click();
    await page.waitForURL(url(`/orgs/${ids.org}/audit`));
    await page.getByRole("heading", { name: "Audit log", level: 1 }).waitFor();
    await table().waitFor();
    await screenshot(page, "audit-log");

    // A category: every variable action, newest first, one page of 50, then the rest.
    await choose("Action", "All Variable actions");
    await expect.poll(() => rows().count()).toBe(50);
    await page.getByText("50 entries shown").waitFor();
    const first = rows().first();
    await first.getByText("Variable deleted").waitFor();
    await first.getByText(`AUDIT_E2E_${VARIABLES - 1}`, { exact: true }).waitFor();
    await first.getByText("demo", { exact: true }).waitFor();
    await first.getByText("127.0.0.1").waitFor();
    await page.getByRole("button", { name: "Load more" }).click();
    await expect.poll(() => rows().count()).toBe(2 * VARIABLES + 1);
    await page.getByText(`${2 * VARIABLES + 1} entries shown`).waitFor();
    await expect.poll(() => page.getByRole("button", { name: "Load more" }).count()).toBe(0);
    expect(await table().innerText()).not.toContain("secret-value-never-logged");

    // An exact action: the one update.
    await choose("Action", "Variable updated");
    await expect.poll(() => rows().count()).toBe(1);
    await rows().first().getByText("AUDIT_E2E_0", { exact: true }).waitFor();

    // Another category: the role changes name the member and the roles.
    await choose("Action", "All Membership actions");
    await expect.poll(() => rows().count()).toBe(2);
    await rows().first().getByText("Membership role changed").waitFor();
    await rows()
      .first()
      .getByText(/^User #\d+$/)
      .waitFor();

    // API keys, with its name.
    await choose("Action", "All API key actions");
    await expect.poll(() => rows().count()).toBeGreaterThanOrEqual(1);
    await table().getByText("audit-e2e-key").first().waitFor();
    await screenshot(page, "audit-log-filtered");

    // The CSV has what the filter shows: variable.created only.
    await choose("Action", "Variable created");
    await expect.poll(() => rows().count()).toBe(VARIABLES);
    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: "Export CSV" }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(new RegExp(`^audit-log-org-${ids.org}-\\d{4}-\\d{2}-\\d{2}\\.csv$`));
    const csv = fs.readFileSync((await file.path()) ?? "", "utf8");
    const lines = csv.trim().split("\r\n");
    expect(lines[0]).toBe(
      "id,time,actor_user,actor_username,actor_api_key,organization,action,target_type,target_id,client_address,details",
    );
    expect(lines).toHaveLength(VARIABLES + 1);
    for (const line of lines.slice(1)) {
      expect(line).toContain(",demo,");
      expect(line).toContain(",variable.created,fleet,");
    }
    expect(csv).toContain("AUDIT_E2E_0");
    expect(csv).not.toContain("variable.deleted");
    expect(csv).not.toContain("secret-value-never-logged");

    // A range that ends before it starts asks nothing and says why; an empty range shows the empty state.
    await page.getByLabel("From", { exact: true }).fill("2020-01-02T00:00");
    await page.getByLabel("To", { exact: true }).fill("2020-01-01T00:00");
    await page.getByText("Must be after the start of the range").waitFor();
    await page.getByLabel("To", { exact: true }).fill("2020-01-03T00:00");
    await page.getByRole("heading", { name: "No entries match these filters" }).waitFor();
    await screenshot(page, "audit-log-empty");
    await page.getByRole("button", { name: "Clear filters" }).first().click();
    await table().waitFor();
  });

  it("a member sees neither the menu entries nor the pages", async () => {
    await signIn(MEMBER.login, MEMBER.password);
    const orgs = await api<{ d: Array<{ id: number }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/organization?$select=id&$filter=handle eq 'demo'",
    );
    const org = orgs.d[0]?.id;
    await page.goto(url(`/orgs/${org}`));
    const menu = page.getByRole("navigation", { name: "Main navigation" });
    await menu.getByRole("link", { name: "Members" }).waitFor();
    expect(await menu.getByRole("link", { name: "Audit log" }).count()).toBe(0);
    expect(await menu.getByRole("link", { name: "Webhooks" }).count()).toBe(0);
    for (const path of [`/orgs/${org}/audit`, `/orgs/${org}/webhooks`, "/audit"]) {
      await page.goto(url(path));
      await page.getByRole("heading", { name: "Page not found" }).waitFor();
      expect(await page.getByRole("heading", { name: "Audit log" }).count()).toBe(0);
    }
  });

  it("a platform administrator reads every organization's log, sign-ins included", async () => {
    await signIn(ADMIN.email, ADMIN.password);
    await page.getByRole("button", { name: "Account menu" }).click();
    await page.getByRole("menuitem", { name: "Audit log (all organizations)" }).click();
    await page.getByRole("heading", { name: "Audit log of every organization" }).waitFor();
    // The demo organization's API key from the first test, with its organization; sign-ins belong to none.
    await choose("Action", "API key created");
    const keyRow = rows().filter({ hasText: "audit-e2e-key" }).first();
    await keyRow.waitFor();
    expect(await keyRow.getByRole("cell").nth(1).textContent()).toMatch(/^#\d+$/);
    await choose("Action", "All Sign-in actions");
    await rows().filter({ hasText: "sign_in.succeeded" }).first().waitFor();
    expect(await rows().filter({ hasText: "sign_in.succeeded" }).first().getByRole("cell").nth(1).textContent()).toBe(
      "–",
    );
    await screenshot(page, "audit-log-platform");
  });
});
