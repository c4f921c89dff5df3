import { mkdirSync, readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useDashboard } from "../support/dashboard.ts";
import type { RunningFlotilla } from "../support/flotilla.ts";
import { logIn } from "./accounts-helpers.ts";
import { DEMO } from "./web-helpers.ts";

const SHOTS = "/tmp/shots-billing";

/** The page scrolls inside the app's frame, so a full-page shot is a tall window's. */
async function shot(page: Page, name: string) {
  mkdirSync(SHOTS, { recursive: true });
  const size = page.viewportSize();
  await page.setViewportSize({ width: 1280, height: 1900 });
  await page.waitForTimeout(400);
  await page.screenshot({ path: `${SHOTS}/${name}.png` });
  if (size) await page.setViewportSize(size);
}

/**
 * The organization billing page (spec 3 §2 Billing, §4): the demo administrator opens Billing
 * from the organization's side menu, adds a test card, upgrades to Pilot monthly, sees the
 * invoice and downloads its PDF; the company info dialog checks the tax ID; a member of the
 * organization has no Billing entry and is sent away from the page.
 */
describe("organization billing", () => {
  let flotilla: RunningFlotilla;
  let page: Page;
  useDashboard({}, (ui) => {
    ({ flotilla, page } = ui);
  });
  const url = (path: string) => `${flotilla.dashboardUrl}${path}`;

  async function signIn(username: string) {
    await page
      .context()
      .addInitScript(() => localStorage.setItem("flotilla.cookieConsent", JSON.stringify("essentials")));
    await logIn(page, flotilla.dashboardUrl, username, DEMO.password);
    await page.waitForURL(/\/fleets$/);
  }

  async function openDemoOrganization(): Promise<string> {
    await page.goto(url("/orgs"));
    await page.getByRole("table", { name: "Organizations" }).getByRole("link", { name: "Demo" }).click();
    await page.waitForURL(/\/orgs\/\d+$/);
    return /\/orgs\/(\d+)$/.exec(page.url())?.[1] ?? "";
  }

  it("adds a card, upgrades to Pilot monthly and downloads the invoice", async () => {
    await signIn(DEMO.email);
    const orgId = await openDemoOrganization();
    const menu = page.getByRole("navigation", { name: "Main navigation" });
    await menu.getByRole("link", { name: "Billing" }).click();
    await page.waitForURL(url(`/orgs/${orgId}/billing`));
    await page.getByRole("heading", { name: "Billing", level: 1 }).waitFor();

    const current = page.getByRole("region", { name: "Current plan" });
    await current.getByRole("heading", { name: "Free" }).waitFor();
    const plans = page.getByRole("table", { name: "Plans" });
    await plans.getByRole("row", { name: /Pilot/ }).waitFor();
    const payment = page.getByRole("region", { name: "Payment method" });
    await payment.getByText(/No payment method yet/).waitFor();
    await shot(page, "01-billing-free");

    // Add a card with the built-in test provider.
    await payment.getByRole("button", { name: "Add payment method" }).click();
    const dialog = page.getByRole("dialog", { name: "Payment method" });
    await dialog.getByLabel("Card number").fill("4242 4242 4242 4241");
    await dialog.getByLabel("Expiry (MM/YY)").fill("12/34");
    await dialog.getByLabel("CVC").fill("123");
    await dialog.getByLabel("Name on card").fill("Demo Person");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.getByText("Not a valid card number").waitFor();
    await dialog.getByLabel("Card number").fill("4242 4242 4242 4242");
    await shot(page, "02-payment-dialog");
    // The connection drops as the billing info is saved: the dialog and a toast say so in the
    // app's words (spec 3 §8 errors.error_request), never the browser's "Failed to fetch".
    await page.route(
      (address) => address.pathname === `/billing/v1/account/${orgId}/info`,
      (route) => (route.request().method() === "PATCH" ? route.abort("internetdisconnected") : route.continue()),
      { times: 1 },
    );
    await dialog.getByRole("button", { name: "Save" }).click();
    const dropped = "The request to the billing service failed: check your connection and try again.";
    // In the dialog, and as a toast (outside the modal dialog, so not in its accessibility tree).
    await dialog.getByRole("alert").filter({ hasText: dropped }).waitFor();
    await expect.poll(() => page.getByText(dropped, { exact: true }).count()).toBe(2);
    expect(await page.getByText(/failed to fetch/i).count()).toBe(0);
    await shot(page, "02b-payment-request-failed");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.waitFor({ state: "hidden" });
    await page.getByText("Payment method saved.").waitFor();
    await payment.getByText("Visa ending in 4242").waitFor();
    await payment.getByText(/Expires 12\/2034/).waitFor();
    await payment.getByText("Test payments").waitFor();

    // Upgrade to Pilot, billed monthly: the dialog shows the current plan next to the new one.
    await plans.getByRole("button", { name: "Upgrade: Pilot Monthly" }).click();
    const change = page.getByRole("dialog", { name: "Change plan" });
    await change.getByText("Free", { exact: true }).waitFor();
    await change.getByText("Pilot", { exact: true }).waitFor();
    await change.getByText("$299.00 / month").waitFor();
    await shot(page, "03-change-plan");
    await change.getByRole("button", { name: "Confirm" }).click();
    await change.waitFor({ state: "hidden" });
    await page.getByText("Plan updated successfully.").waitFor();
    await current.getByRole("heading", { name: "Pilot" }).waitFor();
    await current.getByText("Billed monthly").waitFor();
    await plans.getByRole("row", { name: /Pilot/ }).getByText("Current plan").waitFor();
    // On a paid plan the payment method cannot be removed.
    expect(await payment.getByRole("button", { name: "Remove" }).count()).toBe(0);

    // The invoice of the new plan, paid, and its PDF.
    const invoices = page.getByRole("table", { name: "Invoices" });
    const row = invoices.getByRole("row").filter({ hasText: "$299.00" }).first();
    await row.getByText("Paid").waitFor();
    // The plan's add-ons with their prices: what a paid role or a device beyond the plan costs.
    const addons = page.getByRole("table", { name: "Add-ons" });
    await addons
      .getByRole("row", { name: /Seats: Administrators/ })
      .getByText("$49.00/month")
      .waitFor();
    await addons.getByRole("row", { name: /Devices beyond the plan/ }).waitFor();
    await shot(page, "04-billing-pilot");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      row.getByRole("button", { name: /Download invoice/ }).click(),
    ]);
    const file = await download.path();
    const pdf = readFileSync(file).toString("latin1");
    expect(pdf.slice(0, 5)).toBe("%PDF-");
    // The amount, in the document's metadata (its page text is hex-encoded glyphs).
    expect(pdf).toMatch(/\(Invoice INV-\d{6}: \$299\.00, paid\)/);
    expect(download.suggestedFilename()).toMatch(/\.pdf$/);

    // The anchors lead to their sections.
    await page.goto(url(`/orgs/${orgId}/billing#payment-method`));
    await payment.getByText("Visa ending in 4242").waitFor();
    await expect.poll(() => payment.evaluate((element) => element.getBoundingClientRect().top)).toBeLessThan(200);

    // Back to the free plan, with optional feedback; then the card can be removed, and a paid
    // plan asks for a payment method first.
    await current.getByRole("button", { name: "Move to the free plan" }).click();
    const downgrade = page.getByRole("dialog", { name: "Change plan" });
    await downgrade
      .getByText(/The unused part of what you paid for this period is refunded to your payment method/)
      .waitFor();
    await downgrade.getByLabel("Why are you moving to this plan? (optional)").fill("Trying things out");
    await downgrade.getByRole("button", { name: "Confirm" }).click();
    await downgrade.waitFor({ state: "hidden" });
    await current.getByRole("heading", { name: "Free" }).waitFor();
    await payment.getByRole("button", { name: "Remove" }).click();
    await page.getByRole("dialog", { name: "Remove payment method" }).getByRole("button", { name: "Remove" }).click();
    await page.getByText("Removed payment method.").waitFor();
    await payment.getByText(/No payment method yet/).waitFor();
    await plans.getByRole("button", { name: "Upgrade: Prototype Annual" }).click();
    const first = page.getByRole("dialog", { name: "Payment method" });
    await first.getByText(/Add a payment method first/).waitFor();
    await first.getByRole("button", { name: "Cancel" }).click();
    await first.waitFor({ state: "hidden" });

    // A link with ?plan=&cycle= proposes that plan on load (here: payment method first).
    await page.goto(url(`/orgs/${orgId}/billing?plan=prototype-v2&cycle=annual`));
    await first.getByText(/Add a payment method first/).waitFor();
    await page.waitForURL(url(`/orgs/${orgId}/billing`));
  });

  it("edits the billing address and company info, refusing a tax ID that does not fit its type", async () => {
    await signIn(DEMO.email);
    const orgId = await openDemoOrganization();
    await page.goto(url(`/orgs/${orgId}/billing`));
    const company = page.getByRole("region", { name: "Billing address & company" });
    await company.getByRole("button", { name: "Edit" }).click();
    const dialog = page.getByRole("dialog", { name: "Billing address & company" });
    await dialog.getByLabel("Billing email").fill("");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.getByText("An email address is required.").waitFor();
    await dialog.getByLabel("Billing email").fill("billing@example.com");
    await dialog.getByLabel("Company name").fill("Demo Robotics Ltd");
    await dialog.getByLabel("Address line 1").fill("1 Harbour Street");
    await dialog.getByLabel("City").fill("Portsmouth");
    await dialog.getByLabel("Country (2-letter code)").fill("gb");
    await dialog.getByLabel("Tax ID type").click();
    await page.getByRole("option", { name: "United Kingdom VAT Number" }).click();
    await dialog.getByLabel("Tax ID number").fill("GB12345");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.getByText("This tax ID is not valid for the chosen type.").waitFor();
    await shot(page, "05-company-dialog");
    await dialog.getByLabel("Tax ID number").fill("GB123456789");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.waitFor({ state: "hidden" });
    await page.getByText("Updated billing account info.").waitFor();
    await company.getByText("Demo Robotics Ltd").waitFor();
    await company.getByText("GB123456789").waitFor();
    await company.getByText(/GB$/).first().waitFor();
  });

  it("a member of the organization sees no Billing entry and is sent away from the page", async () => {
    await signIn("demo-member");
    const orgId = await openDemoOrganization();
    const menu = page.getByRole("navigation", { name: "Main navigation" });
    await menu.getByRole("link", { name: "Teams" }).waitFor();
    expect(await menu.getByRole("link", { name: "Billing" }).count()).toBe(0);
    await shot(page, "06-member-menu");
    await page.goto(url(`/orgs/${orgId}/billing`));
    await page.waitForURL(url("/fleets"));
    // Told whom to ask (spec 3 §6).
    await page
      .getByText("Only the organization's administrators can see and change its plan and billing: contact one of them.")
      .waitFor();
    // The credits page too (spec 1 §2.2: without resin.organization.access_billing, `/`).
    await page.goto(url(`/orgs/${orgId}/credits`));
    await page.waitForURL(url("/fleets"));
    expect(await page.getByRole("heading", { name: "Credits", level: 1 }).count()).toBe(0);
  });

  it("says so when the billing service cannot be reached", async () => {
    await signIn(DEMO.email);
    const orgId = await openDemoOrganization();
    // The one failure: the billing account's request answers 503 (the rest of the page loads).
    await page.route(
      (address) => address.pathname === `/billing/v1/account/${orgId}`,
      (route) =>
        route.request().method() === "GET"
          ? route.fulfill({ status: 503, contentType: "application/json", body: '{"message":"unavailable"}' })
          : route.continue(),
    );
    await page.goto(url(`/orgs/${orgId}/billing`));
    const text = "The billing details could not be loaded. Please try again later.";
    // In the page, with a way to try again, and as an error toast (spec 3 §8).
    const alerts = page.getByRole("alert").filter({ hasText: text });
    await expect.poll(() => alerts.count(), { timeout: 30_000 }).toBe(2);
    await alerts.getByRole("button", { name: "Refresh" }).waitFor();
    // The plans, which do not depend on the account, still show.
    await page.getByRole("table", { name: "Plans" }).getByRole("row", { name: /Pilot/ }).waitFor();
    await shot(page, "07-billing-api-down");
  });
});
