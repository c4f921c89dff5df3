import type { TestApp } from "../harness.ts";
import { call } from "./devices.ts";

/**
 * Adds a card as the dashboard does with the built-in provider: a setup intent, its confirmation
 * with the card, then the intent taken as the payment method (which pays unpaid invoices too).
 * Answers the last step's response.
 */
export async function addTestCard(t: TestApp, organization: number, token: string, number = "4242424242424242") {
  const intent = await call(t, "POST", `/billing/v1/account/${organization}/setup-intent`, token, {});
  const { id, client_secret } = intent.json as { id: string; client_secret: string };
  await call(t, "POST", `/billing/v1/test-payments/setup-intents/${id}/confirm`, token, {
    client_secret,
    card: { number, exp_month: "12", exp_year: String(new Date().getFullYear() + 3), cvc: "123", name: "Ada" },
  });
  return call(t, "PATCH", `/billing/v1/account/${organization}/info`, token, { token_id: id });
}
