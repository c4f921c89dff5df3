import type { Page } from "playwright-core";
import { api } from "./fleets-helpers.ts";

/** On the organization's billing page: a test card through the payment dialog, then Pilot monthly. */
export async function addCardAndUpgradeToPilot(page: Page, cardNumber = "4242 4242 4242 4242") {
  const payment = page.getByRole("region", { name: "Payment method" });
  await payment.getByRole("button", { name: "Add payment method" }).click();
  const dialog = page.getByRole("dialog", { name: "Payment method" });
  await dialog.getByLabel("Card number").fill(cardNumber);
  await dialog.getByLabel("Expiry (MM/YY)").fill("12/34");
  await dialog.getByLabel("CVC").fill("123");
  await dialog.getByLabel("Name on card").fill("Demo Person");
  await dialog.getByRole("button", { name: "Save" }).click();
  await dialog.waitFor({ state: "hidden" });
  await payment.getByText(/ending in/).waitFor();
  await page.getByRole("table", { name: "Plans" }).getByRole("button", { name: "Upgrade: Pilot Monthly" }).click();
  const change = page.getByRole("dialog", { name: "Change plan" });
  await change.getByRole("button", { name: "Confirm" }).click();
  await change.waitFor({ state: "hidden" });
  await page.getByRole("region", { name: "Current plan" }).getByRole("heading", { name: "Pilot" }).waitFor();
}

/** Puts an organization on a paid plan, monthly, through the billing API with the built-in test card. */
export async function payForPlan(page: Page, apiUrl: string, orgId: number | string, tier: string) {
  const call = <T>(method: string, p: string, body?: unknown) => api<T>(page, apiUrl, method, p, body);
  const intent = await call<{ id: string; client_secret: string }>(
    "POST",
    `/billing/v1/account/${orgId}/setup-intent`,
    {},
  );
  await call("POST", `/billing/v1/test-payments/setup-intents/${intent.id}/confirm`, {
    client_secret: intent.client_secret,
    card: { number: "4242424242424242", exp_month: "12", exp_year: "2034", cvc: "123", name: "Demo Person" },
  });
  await call("PATCH", `/billing/v1/account/${orgId}/info`, { token_id: intent.id, token_type: "setup_intent" });
  await call("PATCH", `/billing/v1/account/${orgId}/plan`, { tier, cycle: "monthly" });
}
