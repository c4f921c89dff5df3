import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_PASSWORD, launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { startMailServer } from "../support/mail.ts";
import { payForPlan } from "./billing-helpers.ts";
import { api, consent } from "./fleets-helpers.ts";
import { grantSupportAgent } from "./support-helpers.ts";
import { DEMO, screenshot } from "./web-helpers.ts";

const AGENT = { email: "agent@example.com", password: "agent-password-123" };
const ROOT = { email: "root@example.com", password: "root-password-123" };
const MEMBER = { username: "demo-member", password: DEMO_PASSWORD, newEmail: "member.new@example.com" };
const MB = 1024 * 1024;

/**
 * Issue 21 "Done when", the dashboard's half: a member of the free organization "Demo" opens the
 * help drawer and is offered the upgrade; the administrator moves the organization to Pilot; the
 * member, whose new e-mail is unverified, is asked to verify and requests the mail; verified, they
 * file a ticket with a cc and two attachments (one over 5 MB refused); a support agent answers it
 * in /support; the requester gets the reply by mail and reads it in the drawer. Then the failure
 * paths: the ticket form cannot load, the submit fails.
 */
describe("support drawer, tickets and the staff inbox", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let mail: Awaited<ReturnType<typeof startMailServer>>;
  const contexts: BrowserContext[] = [];
  const url = (p: string) => `${flotilla.dashboardUrl}${p}`;

  beforeAll(async () => {
    mail = await startMailServer();
    flotilla = await startFlotilla({
      SMTP_URL: mail.url,
      FLOTILLA_EMAIL_VERIFICATION: "optional",
      FLOTILLA_ADMIN_EMAIL: ROOT.email,
      FLOTILLA_ADMIN_PASSWORD: ROOT.password,
    });
    // The support agent signs up, and the platform administrator grants the role (Admin → Users'
    // API; support-staff.e2e.ts goes through the page).
    await grantSupportAgent(flotilla.apiUrl, AGENT, ROOT);
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await flotilla?.stop();
    await mail?.stop();
  });

  async function signedIn(login: string, password: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    await context.addInitScript(consent);
    const page = await context.newPage();
    await page.goto(url("/login"));
    await page.getByLabel("Email or username").fill(login);
    await page.getByLabel("Password", { exact: true }).fill(password);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/fleets$/);
    return page;
  }

  async function openDrawer(page: Page) {
    await page.getByRole("banner").getByRole("button", { name: "Help and support" }).click();
    const drawer = page.getByRole("dialog", { name: "Help and support" });
    await drawer.waitFor();
    return drawer;
  }

  let ticketSubject = "";

  it("offers the upgrade, asks to verify, files a ticket, and the agent's reply comes back by mail and in the drawer", async () => {
    const member = await signedIn(MEMBER.username, MEMBER.password);
    // A new address, not verified yet (verification is optional on this server).
    await api(member, flotilla.apiUrl, "PATCH", "/user/email", { email: MEMBER.newEmail, password: MEMBER.password });

    // Free plan: no private support, an upgrade offered; a member is told to ask an administrator.
    let drawer = await openDrawer(member);
    // On the right, 310 px wide (once it has slid in).
    await expect.poll(async () => JSON.stringify(await drawer.boundingBox())).toMatch(/"x":970,.*"width":310,/);
    await drawer
      .getByText(
        "The plan of this organization does not include private support. Upgrade the plan, or ask the community forum.",
      )
      .waitFor();
    await drawer.getByText("Ask an administrator of Demo to upgrade its plan.").waitFor();
    expect(await drawer.getByRole("link", { name: "Upgrade plan" }).count()).toBe(0);
    expect(await drawer.getByRole("link", { name: "Community forum" }).getAttribute("href")).toBe(
      "https://forums.balena.io/",
    );
    expect(await drawer.getByRole("link", { name: "Feature requests" }).getAttribute("target")).toBe("_blank");
    await drawer.getByRole("link", { name: "Documentation" }).waitFor();
    await screenshot(member, "support-drawer-free");

    // The administrator gets the upgrade link, and moves Demo to Pilot (test payment provider).
    const admin = await signedIn(DEMO.email, DEMO.password);
    const adminDrawer = await openDrawer(admin);
    await adminDrawer.getByRole("link", { name: "Upgrade plan" }).click();
    await admin.waitForURL(/\/orgs\/\d+\/billing#billing-plans$/);
    const orgId = Number(/\/orgs\/(\d+)\//.exec(admin.url())?.[1]);
    await payForPlan(admin, flotilla.apiUrl, orgId, "pilot-v2");

    // Paid plan, unverified address: verify first; the drawer requests the mail.
    await member.reload();
    drawer = await openDrawer(member);
    await drawer
      .getByText("Private support needs a verified email address. Open the link we sent you, or request a new one.")
      .waitFor();
    await drawer.getByRole("button", { name: "Send verification email" }).click();
    await drawer.getByText("Verification email sent. Check your inbox, then come back here.").waitFor();
    // (The address change mailed a link already; a request within minutes of it is not sent twice.)
    const verify = await mail.waitForLink(MEMBER.newEmail, /https?:\/\/[^\s"<>]+\/user\/verify-email\/[^\s"<>]+/);
    await member.goto(verify);
    await member.waitForURL((address) => !address.pathname.startsWith("/user/verify-email/"));

    // Verified: the ticket form, with a cc and two attachments; one over 5 MB is refused.
    await member.goto(url("/fleets"));
    drawer = await openDrawer(member);
    await drawer.getByRole("button", { name: "Create ticket" }).click();
    const form = drawer.getByRole("form", { name: "Create ticket" });
    await form.getByRole("button", { name: "Submit ticket" }).click();
    // Required fields left blank: in error, with no message of their own.
    await expect.poll(() => form.getByLabel("Subject").getAttribute("aria-invalid")).toBe("true");
    expect(await form.getByLabel("Description").getAttribute("aria-invalid")).toBe("true");
    ticketSubject = `Wi-Fi drops ${Date.now()}`;
    await form.getByLabel("Subject").fill(ticketSubject);
    await form.getByLabel("Description").fill("The devices lose Wi-Fi every night.");
    await form.getByLabel("Affected fleet or device").fill("demo-fleet");
    await form.getByLabel("CC").fill("ops@example.com, not-an-address");
    await form.getByRole("button", { name: "Submit ticket" }).click();
    await form.getByText("not-an-address is not a valid email address.").waitFor();
    await form.getByLabel("CC").fill("ops@example.com, lead@example.com");
    await form.getByLabel("Attach files").setInputFiles({
      name: "huge.log",
      mimeType: "text/plain",
      buffer: Buffer.alloc(5 * MB + 1, "a"),
    });
    await form.getByText("Attachments must be at most 5 MB each.").waitFor();
    await form.getByLabel("Attach files").setInputFiles([
      { name: "device.log", mimeType: "text/plain", buffer: Buffer.from("wlan0: link down\n".repeat(200)) },
      { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("It started after the update.\n") },
    ]);
    await form.getByText(/device\.log · \d+ KB/).waitFor();
    await form.getByText(/notes\.txt · \d+ KB/).waitFor();
    // The server refuses an oversized file too, in the same words.
    const refused = await member.evaluate(
      async ({ apiUrl, orgId, size }) => {
        const body = new FormData();
        body.append("file", new Blob([new Uint8Array(size)], { type: "text/plain" }), "huge.log");
        const response = await fetch(`${apiUrl}/zendesk/v1/${orgId}/upload-attachment`, {
          method: "POST",
          headers: { authorization: `Bearer ${localStorage.getItem("balena-token")}` },
          body,
        });
        return { status: response.status, body: await response.json() };
      },
      { apiUrl: flotilla.apiUrl, orgId, size: 5 * MB + 1 },
    );
    expect(refused.status).toBe(413);
    expect(refused.body.message).toBe("Attachments must be at most 5 MB each.");
    await screenshot(member, "support-drawer-form");
    await form.getByRole("button", { name: "Submit ticket" }).click();
    await drawer.getByText("Ticket created. The support team answers by email and in Your tickets.").waitFor();
    const yours = drawer.getByRole("region", { name: "Your tickets" });
    await yours
      .getByRole("button", { name: new RegExp(ticketSubject) })
      .getByText("Open")
      .waitFor();

    // The agent answers in the inbox, leaves the ticket pending and raises its priority.
    const agent = await signedIn(AGENT.email, AGENT.password);
    await agent.getByRole("button", { name: "Account menu" }).click();
    await agent.getByRole("menuitem", { name: "Support inbox" }).click();
    await agent.getByRole("heading", { name: "Support inbox" }).waitFor();
    await agent
      .getByRole("list", { name: "Tickets" })
      .getByRole("button", { name: new RegExp(ticketSubject) })
      .click();
    const ticket = agent.getByRole("region", { name: /^Ticket #\d+$/ });
    await ticket.getByRole("button", { name: "device.log" }).waitFor();
    await ticket.getByText("cc: ops@example.com, lead@example.com", { exact: false }).waitFor();
    await ticket
      .getByRole("textbox", { name: "Reply" })
      .fill("Please send us the output of journalctl -u NetworkManager.");
    await ticket.getByRole("button", { name: "Send reply" }).click();
    await agent.getByText("Reply sent.").waitFor();
    await ticket.getByRole("combobox", { name: "Priority" }).click();
    await agent.getByRole("option", { name: "High" }).click();
    await agent.getByText("Ticket updated.").waitFor();
    await ticket.getByText("Priority: High", { exact: false }).waitFor();
    await screenshot(agent, "support-inbox");

    // The reply arrives by mail, to the requester and the copied addresses, with the ticket's link.
    const link = await mail.waitForLink(MEMBER.newEmail, /https?:\/\/[^\s"<>]+\/support\/tickets\/\d+/);
    await expect.poll(() => mail.mails.some((m) => m.to.includes("ops@example.com"))).toBe(true);

    // In the drawer: the thread, the staff reply marked, the attachments downloadable.
    await member.reload();
    drawer = await openDrawer(member);
    await drawer
      .getByRole("region", { name: "Your tickets" })
      .getByRole("button", { name: new RegExp(ticketSubject) })
      .click();
    const reply = drawer.getByRole("article", { name: /\(Support\)$/ });
    await reply.getByText("Please send us the output of journalctl -u NetworkManager.").waitFor();
    const download = member.waitForEvent("download");
    await drawer.getByRole("button", { name: "notes.txt" }).click();
    expect((await download).suggestedFilename()).toBe("notes.txt");
    await screenshot(member, "support-drawer-thread");

    // The mail's link, signed out: log in, then the ticket.
    const visitor = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(visitor);
    await visitor.addInitScript(consent);
    const signedOut = await visitor.newPage();
    await signedOut.goto(link);
    await signedOut.waitForURL(/\/login\?redirect=/);
    await signedOut.getByLabel("Email or username").fill(MEMBER.username);
    await signedOut.getByLabel("Password", { exact: true }).fill(MEMBER.password);
    await signedOut.getByRole("button", { name: "Log in" }).click();
    await signedOut.waitForURL(link);
    await signedOut.getByText("Please send us the output of journalctl -u NetworkManager.").waitFor();

    // The inbox is for platform staff only: not in their menu, not found at its address.
    await member.goto(url("/fleets"));
    await member.getByRole("button", { name: "Account menu" }).click();
    await member.getByRole("menuitem", { name: "Preferences" }).waitFor();
    expect(await member.getByRole("menuitem", { name: "Support inbox" }).count()).toBe(0);
    await member.keyboard.press("Escape");
    await member.goto(url("/support"));
    await member.getByRole("heading", { name: "Page not found" }).waitFor();
  });

  it("shows the spec's errors when the ticket form cannot load and when the submit fails", async () => {
    const member = await signedIn(MEMBER.username, MEMBER.password);
    await member.route("**/zendesk/v1/*/ticket-fields", (route) => route.fulfill({ status: 500, body: "down" }));
    let drawer = await openDrawer(member);
    await drawer.getByRole("button", { name: "Create ticket" }).click();
    await drawer.getByText("The ticket form could not be loaded.").waitFor();
    await drawer.getByRole("button", { name: "Go back" }).click();
    await drawer.getByRole("button", { name: "Create ticket" }).waitFor();
    await member.unroute("**/zendesk/v1/*/ticket-fields");

    await member.route("**/zendesk/v1/*/submit-ticket", (route) =>
      route.fulfill({
        status: 502,
        contentType: "application/json",
        body: JSON.stringify({ code: "something_went_wrong", message: "Zendesk said no: upstream 503" }),
      }),
    );
    await member.reload();
    drawer = await openDrawer(member);
    await drawer.getByRole("button", { name: "Create ticket" }).click();
    const form = drawer.getByRole("form", { name: "Create ticket" });
    await form.getByLabel("Subject").fill("Cannot deploy");
    await form.getByLabel("Description").fill("The builder stops.");
    await form.getByRole("button", { name: "Submit ticket" }).click();
    await form.getByText("Something went wrong. Please try again later.").waitFor();
    expect(await form.getByText("Zendesk said no", { exact: false }).count()).toBe(0);
    for (const context of contexts) await context.close();
  });
});
