import http from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call } from "./support/devices.ts";

/**
 * The Stripe adapter against Stripe's documented API (no network): a local server answers the
 * requests the adapter makes with the response objects Stripe's API reference documents, and
 * records what was sent, so the test checks both sides of the contract — form-encoded
 * parameters, the secret key as Bearer, object shapes, a card_error on a declined charge, and a
 * signed webhook (Stripe-Signature, HMAC-SHA256 over `t.payload`).
 */

type Sent = {
  method: string;
  path: string;
  form: URLSearchParams;
  authorization: string | undefined;
  idempotencyKey?: string | undefined;
};

const SECRET_KEY = "sk_test_contract";
const WEBHOOK_SECRET = "whsec_contract";
let stripe: http.Server;
let sent: Sent[] = [];
/** What the next PaymentIntent does: succeed, stay processing (a bank debit) or be declined. */
let nextCharge: "succeeded" | "processing" | "declined" = "succeeded";
let t: TestApp;
let admin: { token: string };
let adminUser: Awaited<ReturnType<TestApp["factories"]["user"]>>["user"];
let org: number;

function stripeApi(request: http.IncomingMessage, body: string): { status: number; json: unknown } {
  const url = new URL(request.url ?? "", "http://stripe");
  const form = new URLSearchParams(body);
  sent.push({
    method: request.method ?? "",
    path: url.pathname,
    form,
    authorization: request.headers.authorization,
    idempotencyKey: request.headers["idempotency-key"] as string | undefined,
  });
  const path = `${request.method} ${url.pathname}`;
  if (path === "POST /v1/customers") {
    return {
      status: 200,
      json: { id: "cus_123", object: "customer", name: form.get("name"), email: form.get("email") },
    };
  }
  if (/^POST \/v1\/customers\/cus_\w+$/.test(path)) {
    return {
      status: 200,
      json: {
        id: "cus_123",
        object: "customer",
        invoice_settings: { default_payment_method: form.get("invoice_settings[default_payment_method]") },
      },
    };
  }
  if (path === "POST /v1/setup_intents") {
    return {
      status: 200,
      json: {
        id: "seti_123",
        object: "setup_intent",
        client_secret: "seti_123_secret_abc",
        status: "requires_payment_method",
        customer: form.get("customer"),
        payment_method: null,
      },
    };
  }
  if (path === "GET /v1/setup_intents/seti_123") {
    // Confirmed in the browser with Stripe.js, then read back with the payment method expanded.
    return {
      status: 200,
      json: {
        id: "seti_123",
        object: "setup_intent",
        status: "succeeded",
        customer: "cus_123",
        payment_method: {
          id: "pm_card_visa",
          object: "payment_method",
          type: "card",
          billing_details: { name: "Ada Admin" },
          card: { brand: "visa", last4: "4242", exp_month: 4, exp_year: 2031 },
        },
      },
    };
  }
  if (path === "POST /v1/payment_intents") {
    if (nextCharge === "declined") {
      return {
        status: 402,
        json: {
          error: {
            type: "card_error",
            code: "card_declined",
            decline_code: "insufficient_funds",
            message: "Your card has insufficient funds.",
            payment_intent: { id: "pi_declined", object: "payment_intent", status: "requires_payment_method" },
          },
        },
      };
    }
    const id = `pi_${sent.length}`;
    return {
      status: 200,
      json: { id, object: "payment_intent", amount: Number(form.get("amount")), currency: "usd", status: nextCharge },
    };
  }
  if (path === "POST /v1/refunds") {
    return {
      status: 200,
      json: {
        id: `re_${sent.length}`,
        object: "refund",
        amount: Number(form.get("amount")),
        payment_intent: form.get("payment_intent"),
        status: "succeeded",
      },
    };
  }
  return {
    status: 404,
    json: { error: { type: "invalid_request_error", message: `Unrecognized request URL (${path})` } },
  };
}

beforeAll(async () => {
  stripe = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const answer = stripeApi(request, body);
      response.writeHead(answer.status, { "content-type": "application/json", "request-id": "req_test" });
      response.end(JSON.stringify(answer.json));
    });
  });
  await new Promise<void>((resolve) => stripe.listen(0, "127.0.0.1", resolve));
  const port = (stripe.address() as AddressInfo).port;
  t = await createTestApp({
    STRIPE_SECRET_KEY: SECRET_KEY,
    STRIPE_PUBLISHABLE_KEY: "pk_test_flotilla",
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_URL: `http://127.0.0.1:${port}`,
  });
  const a = await t.factories.user();
  admin = a;
  adminUser = a.user;
  org = (await t.factories.organization({ name: "Stripe Org", admins: [a.user] })).id;
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => stripe.close(resolve));
});

const invoices = async (organization = org) =>
  (await call(t, "GET", `/billing/v1/account/${organization}/invoices`, admin.token)).json as unknown as Array<{
    state: string;
  }>;

/** Another organization of the administrator's, with a card set up through Stripe. */
async function organizationWithCard(name: string): Promise<number> {
  const made = (await t.factories.organization({ name, admins: [adminUser] })).id;
  await call(t, "POST", `/billing/v1/account/${made}/setup-intent`, admin.token, {});
  const saved = await call(t, "PATCH", `/billing/v1/account/${made}/info`, admin.token, {
    token_id: "seti_123",
    token_type: "setup_intent",
  });
  expect(saved.status).toBe(200);
  return made;
}

describe("the Stripe adapter", () => {
  it("creates a Customer and a SetupIntent for the dashboard, and takes the confirmed card as the default payment method", async () => {
    const intent = await call(t, "POST", `/billing/v1/account/${org}/setup-intent`, admin.token, {});
    expect(intent.json).toMatchObject({
      id: "seti_123",
      client_secret: "seti_123_secret_abc",
      provider: "stripe",
      is_test: true,
    });
    expect(sent.map((s) => `${s.method} ${s.path}`)).toEqual(["POST /v1/customers", "POST /v1/setup_intents"]);
    expect(sent.every((s) => s.authorization === `Bearer ${SECRET_KEY}`)).toBe(true);
    expect(Object.fromEntries(sent[0]?.form ?? [])).toMatchObject({
      name: "Stripe Org",
      "metadata[organization]": String(org),
    });
    expect(Object.fromEntries(sent[1]?.form ?? [])).toMatchObject({
      customer: "cus_123",
      usage: "off_session",
      "automatic_payment_methods[enabled]": "true",
    });
    // The built-in provider's confirmation is not there: Stripe.js confirms with Stripe.
    const builtIn = await call(t, "POST", "/billing/v1/test-payments/setup-intents/seti_123/confirm", admin.token, {
      client_secret: "x",
    });
    expect(builtIn.status).toBe(404);

    sent = [];
    const saved = await call(t, "PATCH", `/billing/v1/account/${org}/info`, admin.token, {
      token_id: "seti_123",
      token_type: "setup_intent",
    });
    expect(saved.status).toBe(200);
    expect(sent.map((s) => `${s.method} ${s.path}`)).toEqual([
      "GET /v1/setup_intents/seti_123",
      "POST /v1/customers/cus_123",
    ]);
    expect(sent[1]?.form.get("invoice_settings[default_payment_method]")).toBe("pm_card_visa");
    const info = await call(t, "GET", `/billing/v1/account/${org}/info`, admin.token);
    expect(info.json).toMatchObject({
      type: "card",
      card_type: "visa",
      last_four: "4242",
      month: "04",
      year: "2031",
      is_test: true,
    });
  });

  it("charges a plan change off-session with a PaymentIntent; a declined card leaves the invoice past due", async () => {
    sent = [];
    const changed = await call(t, "PATCH", `/billing/v1/account/${org}/plan`, admin.token, {
      tier: "pilot-v2",
      annual: false,
    });
    expect(changed.status).toBe(200);
    const charge = sent.find((s) => s.path === "/v1/payment_intents");
    expect(Object.fromEntries(charge?.form ?? [])).toMatchObject({
      amount: "29900",
      currency: "usd",
      customer: "cus_123",
      payment_method: "pm_card_visa",
      off_session: "true",
      confirm: "true",
    });
    expect((await invoices()).map((i) => i.state)).toEqual(["paid"]);

    // A change within the paid period charges nothing now: it is prorated on the next bill.
    sent = [];
    const annual = await call(t, "PATCH", `/billing/v1/account/${org}/plan`, admin.token, {
      tier: "pilot-v2",
      annual: true,
    });
    expect(annual.status).toBe(200);
    expect(sent.filter((s) => s.path === "/v1/payment_intents")).toEqual([]);
    expect((await invoices()).map((i) => i.state)).toEqual(["paid"]);

    // To the free plan: the unused part of what was paid goes back as a Refund of that payment.
    sent = [];
    const free = await call(t, "PATCH", `/billing/v1/account/${org}/plan`, admin.token, {
      tier: "free",
      annual: false,
    });
    expect(free.status).toBe(200);
    const refundRequest = sent.find((s) => s.path === "/v1/refunds");
    // Named by what it settles, so a retried change is not refunded twice.
    expect(refundRequest?.idempotencyKey).toMatch(/^refund-\d+-\d+-[\d.]+$/);
    const refund = Object.fromEntries(refundRequest?.form ?? []);
    const paid = await t.db.query<{ payment_reference: string }>(
      `SELECT payment_reference FROM "invoice" WHERE organization = $1 AND state = 'paid'`,
      [org],
    );
    expect(refund.payment_intent).toBe(paid.rows[0]?.payment_reference);
    expect(Number(refund.amount)).toBeGreaterThan(0);
    expect(Number(refund.amount)).toBeLessThanOrEqual(29900);
    const { rows } = await t.db.query<{ amount_in_cents: number; reference: string }>(
      `SELECT amount_in_cents, reference FROM "billing_refund" WHERE organization = $1`,
      [org],
    );
    expect(rows).toEqual([{ amount_in_cents: Number(refund.amount), reference: expect.stringMatching(/^re_/) }]);

    const declining = await organizationWithCard("Declined Org");
    nextCharge = "declined";
    const refused = await call(t, "PATCH", `/billing/v1/account/${declining}/plan`, admin.token, {
      tier: "pilot-v2",
      annual: false,
    });
    expect(refused.status).toBe(200);
    expect((await invoices(declining)).map((i) => i.state)).toEqual(["past_due"]);
  });

  it("keeps a bank debit processing until the signed webhook says it succeeded; refuses an unsigned one", async () => {
    const debited = await organizationWithCard("Debit Org");
    nextCharge = "processing";
    const changed = await call(t, "PATCH", `/billing/v1/account/${debited}/plan`, admin.token, {
      tier: "production-v2",
      annual: false,
    });
    expect(changed.status).toBe(200);
    expect((await invoices(debited))[0]?.state).toBe("processing");
    const reference = (
      await t.db.query<{ payment_reference: string }>(
        `SELECT payment_reference FROM "invoice" WHERE organization = $1 AND state = 'processing'`,
        [debited],
      )
    ).rows[0]?.payment_reference;
    const payload = JSON.stringify({
      id: "evt_1",
      object: "event",
      type: "payment_intent.succeeded",
      data: { object: { id: reference, object: "payment_intent", status: "succeeded" } },
    });
    const unsigned = await fetch(`${t.url}/billing/v1/stripe/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=bad" },
      body: payload,
    });
    expect(unsigned.status).toBe(400);
    expect((await invoices(debited))[0]?.state).toBe("processing");
    const signature = new Stripe(SECRET_KEY).webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
    const signed = await fetch(`${t.url}/billing/v1/stripe/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": signature },
      body: payload,
    });
    expect(signed.status).toBe(200);
    expect((await invoices(debited))[0]?.state).toBe("paid");
  });
});
