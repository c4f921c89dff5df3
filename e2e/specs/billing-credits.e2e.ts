import crypto from "node:crypto";
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { addCardAndUpgradeToPilot } from "./billing-helpers.ts";
import { api } from "./fleets-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const SHOTS = "/tmp/shots-credits";
const ADMIN = { email: "root@example.com", password: "admin-password-1" };

async function shot(page: Page, name: string) {
  mkdirSync(SHOTS, { recursive: true });
  const size = page.viewportSize();
  await page.setViewportSize({ width: 1280, height: 1300 });
  await page.waitForTimeout(400);
  await page.screenshot({ path: `${SHOTS}/${name}.png` });
  if (size) await page.setViewportSize(size);
}

async function signIn(page: Page, dashboardUrl: string, login: string, password: string) {
  await page
    .context()
    .addInitScript(() => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials")));
  await logIn(page, dashboardUrl, login, password);
  await page.waitForURL(/\/fleets$/);
}

async function openDemoOrganization(page: Page, dashboardUrl: string): Promise<string> {
  await page.goto(`${dashboardUrl}/orgs`);
  await page.getByRole("table", { name: "Organizations" }).getByRole("link", { name: "Demo" }).click();
  await page.waitForURL(/\/orgs\/\d+$/);
  return /\/orgs\/(\d+)$/.exec(page.url())?.[1] ?? "";
}

/**
 * Credits (spec 3 §2 Billing, §4 Credits): the demo administrator finds credits unavailable on
 * the free plan, upgrades to Pilot, buys 100 credits, sees them in the history and the balance,
 * sets a low-balance threshold above the balance and dismisses the banner that follows.
 */
describe("organization credits", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  useDashboard({}, (ui) => {
    ({ flotilla, page } = ui);
  });
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;

  it("buys 100 credits and is warned below the notification threshold", async () => {
    await signIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    const orgId = await openDemoOrganization(page, flotilla.dashboardUrl);
    const menu = page.getByRole("navigation", { name: "Main navigation" });
    await menu.getByRole("link", { name: "Credits" }).click();
    await page.waitForURL(url(`/orgs/${orgId}/credits`));
    await page.getByRole("heading", { name: "Credits", level: 1 }).waitFor();
    await page.getByText("Credits are only available for pilot, production and enterprise plans.").waitFor();
    // No payment method yet: told so (spec 3 §5), with the way to add one.
    await page.getByText("You must have a payment method set up to purchase credits.").waitFor();
    await page.getByRole("link", { name: "Add a payment method" }).waitFor();
    const summary = page.getByRole("region", { name: "Credits summary" });
    expect(await summary.getByRole("button", { name: "Add credits" }).isDisabled()).toBe(true);
    await shot(page, "01-credits-free-plan");

    await menu.getByRole("link", { name: "Billing" }).click();
    await page.waitForURL(url(`/orgs/${orgId}/billing`));
    await addCardAndUpgradeToPilot(page, "4242 4242 4242 4242");

    await menu.getByRole("link", { name: "Credits" }).click();
    await page.waitForURL(url(`/orgs/${orgId}/credits`));
    await summary.getByText("Pilot").waitFor();
    await summary.getByText("0 credits").waitFor();
    expect(await page.getByText(/only available for pilot/).count()).toBe(0);
    expect(await page.getByText(/must have a payment method/).count()).toBe(0);
    await page.getByText("No credits purchased yet.").waitFor();

    // The calculator: 10 more devices for 12 months.
    const calculator = page.getByRole("region", { name: "How many credits do I need?" });
    await calculator.getByLabel("Months").fill("121");
    await calculator.getByText("The value must be at most 120").waitFor();
    await calculator.getByLabel("Months").fill("12");
    await shot(page, "02-credits-pilot");

    // Buy 100 credits.
    await summary.getByRole("button", { name: "Add credits" }).click();
    const dialog = page.getByRole("dialog", { name: "Add credits" });
    await dialog.getByLabel("Credits to buy").fill("12a");
    await dialog.getByText("Only digits are allowed").waitFor();
    expect(await dialog.getByRole("button", { name: "Next" }).isDisabled()).toBe(true);
    await dialog.getByLabel("Credits to buy").fill("100");
    await shot(page, "03-dialog-quantity");
    await dialog.getByRole("button", { name: "Next" }).click();
    await dialog.getByText(/100 credits for \$/).waitFor();
    await shot(page, "04-dialog-confirm");
    await dialog.getByRole("button", { name: "Pay now" }).click();
    await dialog.getByText("100 credits were added to your balance.").waitFor();
    await shot(page, "05-dialog-success");
    await dialog.getByRole("button", { name: "Purchase more credits" }).click();
    expect(await dialog.getByLabel("Credits to buy").inputValue()).toBe("1");
    // At $2.00 a credit, $1,000,000 is still bought here; a cent more goes through sales (spec 3 §9).
    await dialog.getByLabel("Credits to buy").fill("500000");
    await dialog.getByRole("group", { name: "Total" }).getByText("$1,000,000.00").waitFor();
    await dialog.getByRole("button", { name: "Next" }).waitFor();
    await dialog.getByLabel("Credits to buy").fill("500001");
    await dialog.getByRole("group", { name: "Total" }).getByText("$1,000,002.00").waitFor();
    await dialog.getByRole("link", { name: "Contact sales" }).waitFor();
    expect(await dialog.getByRole("button", { name: "Next" }).count()).toBe(0);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });

    const history = page.getByRole("table", { name: "Purchase history" });
    const row = history.getByRole("row").filter({ hasText: "Paid" }).first();
    await row.getByRole("cell", { name: "100", exact: true }).first().waitFor();
    await row.getByText("demo").waitFor();
    await summary.getByText("100 credits").waitFor();

    // A threshold above the balance: the banner, then dismissed.
    const notifications = page.getByRole("region", { name: "Notifications" });
    await notifications.getByLabel("Notify below (credits)").fill("150");
    await notifications.getByRole("button", { name: "Apply" }).click();
    await page.getByText("Credit notification saved.").waitFor();
    const banner = page.getByText(/below your notification threshold of 150 credits/);
    await banner.waitFor();
    expect(await notifications.getByRole("button", { name: "Apply" }).isDisabled()).toBe(true);
    await shot(page, "06-threshold-banner");
    await page.getByRole("button", { name: "Dismiss" }).click();
    await banner.waitFor({ state: "hidden" });
    // Once the balance is no longer below the threshold, the dismissal is forgotten: the next time
    // it falls below, the banner is back (spec 3 §4 Credits).
    await notifications.getByLabel("Notify below (credits)").fill("50");
    await notifications.getByRole("button", { name: "Apply" }).click();
    // Apply stays disabled until 50 is the saved threshold: then 150 is a change again.
    await notifications.getByLabel("Notify below (credits)").fill("150");
    await notifications.getByRole("button", { name: "Apply" }).click();
    await banner.waitFor();
    await shot(page, "07-credits-done");
  });
});

/**
 * Past due and frozen (spec 3 §2 Billing, §4 Past due and frozen): a Pilot upgrade paid with the
 * declining test card leaves its invoice past due (warning banner); 65 days later on the test
 * clock the organization is frozen: its administrator is sent to the billing page and a member
 * to the organization list, each with their message.
 */
describe("past due and frozen organization", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  let browser: Browser;
  useDashboard({ FLOTILLA_ADMIN_EMAIL: ADMIN.email, FLOTILLA_ADMIN_PASSWORD: ADMIN.password }, (ui) => {
    ({ flotilla, page, browser } = ui);
  });
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;

  /** Moves the built-in provider's test clock as the platform administrator; the billing job runs at once. */
  async function advanceBillingClock(days: number) {
    const adminContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const adminPage = await adminContext.newPage();
    await signIn(adminPage, flotilla.dashboardUrl, ADMIN.email, ADMIN.password);
    const advanced = await adminPage.evaluate(
      async ({ apiUrl, days }) => {
        const token = localStorage.getItem("balena-token");
        const response = await fetch(`${apiUrl}/billing/v1/test-clock/advance`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ days }),
        });
        return { status: response.status, body: await response.text() };
      },
      { apiUrl: flotilla.apiUrl, days },
    );
    expect(advanced.status, advanced.body).toBe(200);
    await adminContext.close();
  }

  it("shows the past-due banner, then redirects once the organization is frozen", async () => {
    await signIn(page, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    const orgId = await openDemoOrganization(page, flotilla.dashboardUrl);
    await page.goto(url(`/orgs/${orgId}/billing`));
    await addCardAndUpgradeToPilot(page, "4000 0000 0000 0341");
    await page.getByRole("table", { name: "Invoices" }).getByText("Past due").first().waitFor();

    // Credits bought with the declining card: the provider's refusal as a danger toast, the
    // dialog closed (spec 3 §4 Credits, §8); the failed bundle counts for nothing.
    await page.goto(url(`/orgs/${orgId}/credits`));
    const summary = page.getByRole("region", { name: "Credits summary" });
    await summary.getByText("Pilot").waitFor();
    await summary.getByRole("button", { name: "Add credits" }).click();
    const dialog = page.getByRole("dialog", { name: "Add credits" });
    await dialog.getByLabel("Credits to buy").fill("10");
    await dialog.getByRole("button", { name: "Next" }).click();
    await dialog.getByRole("button", { name: "Pay now" }).click();
    await page.getByRole("alert").filter({ hasText: "Your card was declined." }).waitFor();
    await dialog.waitFor({ state: "hidden" });
    await page.getByRole("table", { name: "Purchase history" }).getByText("Failed").waitFor();
    await summary.getByText("0 credits").waitFor();

    // A device of the organization, for its pages' banner.
    const { d: fleets } = await api<{ d: Array<{ id: number }> }>(
      page,
      flotilla.apiUrl,
      "GET",
      "/v7/application?$select=id&$filter=app_name eq 'demo-fleet'",
    );
    const fleetId = fleets[0]?.id ?? 0;
    const key = await api<string>(page, flotilla.apiUrl, "POST", "/api-key/v2/", {
      actorType: "application",
      actorTypeId: fleetId,
      roles: ["provisioning-api-key"],
    });
    const deviceUuid = crypto.randomBytes(16).toString("hex");
    const registered = await fetch(`${flotilla.apiUrl}/device/register`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({
        application: fleetId,
        uuid: deviceUuid,
        device_type: "raspberrypi4-64",
        api_key: crypto.randomBytes(20).toString("hex"),
      }),
    });
    expect(registered.status).toBe(201);

    // The billing job (each minute, or at once through the test clock) marks it past due.
    const banner = page.getByTestId("past-due-banner");
    await advanceBillingClock(0);
    await page.goto(url(`/orgs/${orgId}`));
    await banner.getByText("An invoice of this organization is past due.").waitFor();
    await banner.getByRole("link", { name: "Update billing details" }).waitFor();
    await shot(page, "08-past-due-warning");

    // The same banner above the fleet's and the device's pages (spec 3 §4 Past due and frozen).
    await page.goto(url(`/fleets/${fleetId}`));
    await banner.getByText("An invoice of this organization is past due.").waitFor();
    await page.goto(url(`/devices/${deviceUuid}`));
    await banner.getByText("An invoice of this organization is past due.").waitFor();
    await banner.getByRole("link", { name: "Update billing details" }).click();
    await page.waitForURL(url(`/orgs/${orgId}/billing#payment-method`));

    // A member sees the banner without the link, and is told to contact an administrator.
    const memberBefore = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const memberPage = await memberBefore.newPage();
    await signIn(memberPage, flotilla.dashboardUrl, "demo-member", DEMO.password);
    await memberPage.goto(url(`/orgs/${orgId}`));
    const memberBanner = memberPage.getByTestId("past-due-banner");
    await memberBanner
      .getByText(
        "An invoice of this organization is past due. Please contact an administrator of the organization to update its billing details.",
      )
      .waitFor();
    expect(await memberBanner.getByRole("link").count()).toBe(0);
    await memberBefore.close();

    // 40 days later on the billing clock (not this browser's): 20 days until the freeze.
    await advanceBillingClock(40);
    await page.goto(url(`/orgs/${orgId}`));
    await banner
      .getByText("This organization has an invoice more than 30 days past due: it will be frozen in 20 days.")
      .waitFor();

    // The platform administrator moves the billing clock 65 days ahead in all.
    await advanceBillingClock(25);

    // The administrator opening the organization's fleets goes to its billing page.
    await page.goto(url(`/orgs/${orgId}/fleets`));
    await page.waitForURL(url(`/orgs/${orgId}/billing`));
    await page.getByText("This organization is frozen: update its billing details to unfreeze it.").waitFor();
    await banner.getByText(/frozen: an invoice is more than 60 days past due/).waitFor();
    await shot(page, "09-frozen-admin-billing");

    // A member of the organization is sent to the organization list.
    const memberContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const member = await memberContext.newPage();
    await signIn(member, flotilla.dashboardUrl, "demo-member", DEMO.password);
    await member.goto(url(`/orgs/${orgId}/fleets`));
    await member.waitForURL(url("/orgs"));
    await member.getByText("This organization is frozen: please reach its administrators.").waitFor();
    await shot(member, "10-frozen-member-orgs");
    await memberContext.close();

    // The way out: what is owed, the unpaid invoices, Pay now (refused with the provider's
    // reason while the card declines), then a new card pays and unfreezes without a reload.
    const pastDue = page.getByRole("region", { name: "Past due" });
    await pastDue.getByLabel("Amount owed").waitFor();
    const unpaid = pastDue.getByRole("table", { name: "Unpaid invoices" });
    expect(await unpaid.getByRole("row").count()).toBeGreaterThan(1);
    await shot(page, "11-frozen-past-due-card");
    await pastDue.getByRole("button", { name: "Pay now" }).click();
    await page
      .getByRole("alert")
      .filter({ hasText: "The payment failed: Your card was declined. Update the payment method and try again." })
      .waitFor();
    await pastDue.getByRole("button", { name: "Update payment method" }).click();
    const card = page.getByRole("dialog", { name: "Payment method" });
    await card.getByLabel("Card number").fill("4242 4242 4242 4242");
    await card.getByLabel("Expiry (MM/YY)").fill("12/34");
    await card.getByLabel("CVC").fill("123");
    await card.getByLabel("Name on card").fill("Demo Person");
    await card.getByRole("button", { name: "Save" }).click();
    await card.waitFor({ state: "hidden" });
    await pastDue.waitFor({ state: "hidden" });
    await banner.waitFor({ state: "hidden" });
    await page.goto(url(`/orgs/${orgId}/fleets`));
    await page.waitForURL(url(`/orgs/${orgId}/fleets`));
  }, 150_000);
});
