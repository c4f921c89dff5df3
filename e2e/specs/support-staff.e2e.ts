import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { startMailServer } from "../support/mail.ts";
import { payForPlan } from "./billing-helpers.ts";
import { api, consent } from "./fleets-helpers.ts";
import { DEMO, screenshot } from "./web-helpers.ts";

const ROOT = { email: "root@example.com", password: "root-password-123" };
/** Signs up as anybody does; the username is the address's local part. */
const AGENT = { email: "agent@example.com", password: "agent-password-123" };

/** The ticket form's custom fields (FLOTILLA_SUPPORT_TICKET_FIELDS): a required choice, a number, a text. */
const CUSTOM_FIELDS = [
  {
    id: 200,
    type: "tagger",
    title_in_portal: "Product area",
    required_in_portal: true,
    options: [
      { name: "Devices and fleets", value: "devices" },
      { name: "Billing", value: "billing" },
    ],
  },
  { id: 201, type: "integer", title_in_portal: "Devices affected", required_in_portal: false },
  { id: 100, type: "text", title_in_portal: "Affected fleet or device", required_in_portal: false },
  { id: 202, type: "text", title_in_portal: "Support contract number", required_in_portal: false },
];

/**
 * Issue #34 "Support staff", in the dashboard: the platform administrator makes a user a support
 * agent in Admin → Users; a customer opens a ticket; the agent gets the new-ticket mail, follows
 * its link (signed out: log in, then the ticket), sees every field of the form as the customer
 * filled it, and answers; the customer reads the answer in the help drawer.
 */
describe("support staff: Admin → Users, staff mails, the staff view of a ticket", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let mail: Awaited<ReturnType<typeof startMailServer>>;
  let fieldsDir: string;
  const contexts: BrowserContext[] = [];
  const url = (p: string) => `${flotilla.dashboardUrl}${p}`;

  beforeAll(async () => {
    mail = await startMailServer();
    fieldsDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-fields-"));
    fs.writeFileSync(path.join(fieldsDir, "fields.json"), JSON.stringify(CUSTOM_FIELDS));
    flotilla = await startFlotilla({
      SMTP_URL: mail.url,
      FLOTILLA_EMAIL_VERIFICATION: "optional",
      FLOTILLA_ADMIN_EMAIL: ROOT.email,
      FLOTILLA_ADMIN_PASSWORD: ROOT.password,
      FLOTILLA_SUPPORT_TICKET_FIELDS: path.join(fieldsDir, "fields.json"),
    });
    // The future agent signs up like anybody (no global role yet).
    const registered = await fetch(`${flotilla.apiUrl}/user/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: AGENT.email, password: AGENT.password }),
    });
    expect(registered.status).toBe(200);
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await flotilla?.stop();
    await mail?.stop();
    if (fieldsDir) fs.rmSync(fieldsDir, { recursive: true, force: true });
  });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    await context.addInitScript(consent);
    return context.newPage();
  }

  async function logIn(page: Page, login: string, password: string) {
    await page.getByLabel("Email or username").fill(login);
    await page.getByLabel("Password", { exact: true }).fill(password);
    await page.getByRole("button", { name: "Log in" }).click();
  }

  async function signedIn(login: string, password: string): Promise<Page> {
    const page = await newPage();
    await page.goto(url("/login"));
    await logIn(page, login, password);
    await page.waitForURL(/\/fleets$/);
    return page;
  }

  it("makes a user a support agent, who is mailed the new ticket, opens it from the mail, sees every field and answers", async () => {
    // The platform administrator: Account menu → Admin → Users.
    const root = await signedIn(ROOT.email, ROOT.password);
    await root.getByRole("button", { name: "Account menu" }).click();
    await root.getByRole("menuitem", { name: "Admin → Users" }).click();
    await root.waitForURL(url("/admin/users"));
    await root.getByRole("heading", { name: "Users", level: 1 }).waitFor();
    const grid = root.getByRole("grid", { name: "Users" });
    await grid.getByRole("row", { name: /root.*root@example\.com.*Platform administrator/ }).waitFor();
    await root.getByText("1 platform administrator · 0 support agents").waitFor();

    // Search by part of the email, then the role menu of the row.
    await root.getByLabel("Search by username or email").fill("agent@");
    await expect.poll(() => grid.getByRole("row").count()).toBe(2);
    const row = grid.getByRole("row", { name: /agent.*agent@example\.com/ });
    await row.getByText("None").waitFor();
    await row.getByRole("button", { name: "Change the global roles of agent" }).click();
    await root.getByRole("menuitem", { name: "Make support agent" }).click();
    const confirm = root.getByRole("dialog", { name: "Make agent a support agent?" });
    await confirm.getByText("will read and answer every organization's support tickets", { exact: false }).waitFor();
    await confirm.getByRole("button", { name: "Grant role" }).click();
    await root.getByText("agent is now a support agent.").waitFor();
    await confirm.waitFor({ state: "hidden" });
    await row.getByText("Support agent").waitFor();
    await root.getByText("1 platform administrator · 1 support agent").waitFor();

    // The last platform administrator cannot remove their own role: the menu says why.
    await root.getByLabel("Search by username or email").fill("");
    await expect.poll(() => grid.getByRole("row").count()).toBe(5);
    const own = grid.getByRole("row", { name: /root.*You/ });
    await own.getByRole("button", { name: "Change the global roles of root" }).click();
    const removeOwn = root.getByRole("menuitem", { name: /Remove the platform administrator role/ });
    expect(await removeOwn.getAttribute("aria-disabled")).toBe("true");
    await removeOwn.getByText("The last platform administrator keeps the role", { exact: false }).waitFor();
    await root.keyboard.press("Escape");
    await root.getByRole("menu").waitFor({ state: "hidden" });
    await screenshot(root, "admin-users");

    // The grant is in the audit log of all organizations.
    const entries = await api<{ entries: Array<{ action: string; details: { role: string; username: string } }> }>(
      root,
      flotilla.apiUrl,
      "GET",
      "/audit/v1/entries?action=global_role.",
    );
    expect(entries.entries.map((entry) => [entry.action, entry.details.role, entry.details.username])).toEqual([
      ["global_role.granted", "support_agent", "agent"],
    ]);

    // A customer on a paid plan opens a ticket, filling the required and some optional fields.
    const customer = await signedIn(DEMO.email, DEMO.password);
    const orgs = await api<{ d: Array<{ id: number; name: string }> }>(
      customer,
      flotilla.apiUrl,
      "GET",
      "/v7/organization?$select=id,name&$filter=name%20eq%20'Demo'",
    );
    const orgId = orgs.d[0]?.id ?? 0;
    await payForPlan(customer, flotilla.apiUrl, orgId, "pilot-v2");
    await customer.reload();
    await customer.getByRole("banner").getByRole("button", { name: "Help and support" }).click();
    const drawer = customer.getByRole("dialog", { name: "Help and support" });
    await drawer.getByRole("button", { name: "Create ticket" }).click();
    const form = drawer.getByRole("form", { name: "Create ticket" });
    const subject = `Gateways reboot ${Date.now()}`;
    await form.getByLabel("Subject").fill(subject);
    await form.getByLabel("Description").fill("Since last night the gateways reboot every hour.\nLogs attached later.");
    await form.getByRole("combobox", { name: "Priority" }).click();
    await customer.getByRole("option", { name: "High" }).click();
    await form.getByRole("combobox", { name: "Product area" }).click();
    await customer.getByRole("option", { name: "Devices and fleets" }).click();
    await form.getByLabel("Devices affected").fill("12");
    await form.getByLabel("Affected fleet or device").fill("demo-fleet");
    await form.getByRole("button", { name: "Submit ticket" }).click();
    await drawer.getByText("Ticket created. The support team answers by email and in Your tickets.").waitFor();

    // The agent's mail: once, with the link to the ticket in the support inbox.
    const link = await mail.waitForLink(AGENT.email, /https?:\/\/[^\s"<>]+\/support\?ticket=\d+/);
    const ticketId = Number(/ticket=(\d+)/.exec(link)?.[1]);
    expect(link).toBe(url(`/support?ticket=${ticketId}`));
    const newTicketMails = () =>
      mail.mails.filter((m) => m.to.includes(AGENT.email) && m.subject.includes(`[Ticket #${ticketId}] New ticket`));
    await expect.poll(() => newTicketMails().length).toBe(1);
    expect(newTicketMails()[0]?.body).toContain("Product area: Devices and fleets");
    // The platform administrator is staff too; the customer gets no staff mail.
    await expect
      .poll(() => mail.mails.some((m) => m.to.includes(ROOT.email) && m.subject.includes("New ticket")))
      .toBe(true);
    expect(mail.mails.some((m) => m.to.includes(DEMO.email) && m.subject.includes("New ticket"))).toBe(false);

    // The agent follows the link signed out: log in, then the ticket in the inbox.
    const agent = await newPage();
    await agent.goto(link);
    await agent.waitForURL(/\/login\?redirect=/);
    await logIn(agent, AGENT.email, AGENT.password);
    await agent.waitForURL(link);
    await agent.getByRole("heading", { name: "Support inbox" }).waitFor();
    const ticket = agent.getByRole("region", { name: `Ticket #${ticketId}` });
    const fields = ticket.getByRole("table", { name: "Ticket form" });
    const expected: Array<[string, string]> = [
      ["Subject Required", subject],
      ["Description Required", "Since last night the gateways reboot every hour.\nLogs attached later."],
      ["Priority", "High"],
      ["Product area Required", "Devices and fleets"],
      ["Devices affected", "12"],
      ["Affected fleet or device", "demo-fleet"],
      ["Support contract number", "Not filled in"],
    ];
    await expect.poll(() => fields.getByRole("row").count()).toBe(expected.length);
    const shown = await fields
      .getByRole("row")
      .evaluateAll((rows) =>
        rows.map((r) => [
          (r.querySelector("th") as HTMLElement).innerText.replace(/\s+/g, " ").trim(),
          (r.querySelector("td") as HTMLElement).innerText.trim(),
        ]),
      );
    expect(shown).toEqual(expected);
    await agent.waitForTimeout(300);
    await screenshot(agent, "support-staff-ticket");

    // The agent answers.
    await ticket
      .getByRole("textbox", { name: "Reply" })
      .fill("Please update to balenaOS 6.1.3: it fixes the watchdog.");
    await ticket.getByRole("button", { name: "Send reply" }).click();
    await agent.getByText("Reply sent.").waitFor();
    await ticket.getByRole("article", { name: /^agent \(Support\)$/ }).waitFor();

    // The customer reads the answer in the drawer.
    await customer.reload();
    await customer.getByRole("banner").getByRole("button", { name: "Help and support" }).click();
    await drawer
      .getByRole("region", { name: "Your tickets" })
      .getByRole("button", { name: new RegExp(subject) })
      .click();
    await drawer
      .getByRole("article", { name: /\(Support\)$/ })
      .getByText("Please update to balenaOS 6.1.3: it fixes the watchdog.")
      .waitFor();
    // The staff view's form is for staff: the customer's thread has the description as written.
    expect(await drawer.getByRole("table", { name: "Ticket form" }).count()).toBe(0);

    // Still one new-ticket mail to the agent, and the agent's own reply mailed no staff.
    expect(newTicketMails()).toHaveLength(1);
    expect(
      mail.mails.filter((m) => m.to.includes(AGENT.email) && m.subject.includes(`[Ticket #${ticketId}]`)),
    ).toHaveLength(1);
  });
});
