import { getSdk } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./harness.ts";
import { call } from "./support/devices.ts";

/**
 * balena-sdk's `models.billing` against the billing service: every call works for an
 * organization administrator (with the built-in payment provider) and is refused for a member.
 */

let t: TestApp;
let admin: { token: string };
let member: { token: string };
let org: { id: number; handle: string };

async function sdkAs(token: string) {
  const sdk = getSdk({ apiUrl: t.url, dataDirectory: false });
  await sdk.auth.loginWithToken(token);
  return sdk;
}

/** The dashboard's card form against the built-in provider: a setup intent, confirmed with a card. */
async function confirmedSetupIntent(sdk: Awaited<ReturnType<typeof sdkAs>>, card = { number: "4242 4242 4242 4242" }) {
  const intent = (await sdk.models.billing.createSetupIntent({ organization: org.id })) as unknown as {
    id: string;
    client_secret: string;
  };
  const confirmed = await call(t, "POST", `/billing/v1/test-payments/setup-intents/${intent.id}/confirm`, admin.token, {
    client_secret: intent.client_secret,
    card: {
      number: card.number,
      exp_month: "12",
      exp_year: String(new Date().getFullYear() + 2),
      cvc: "123",
      name: "Ada Admin",
    },
  });
  return { intent, confirmed };
}

beforeAll(async () => {
  t = await createTestApp();
  const a = await t.factories.user();
  const m = await t.factories.user();
  admin = a;
  member = m;
  const created = await t.factories.organization({ admins: [a.user], members: [m.user] });
  org = { id: created.id, handle: created.handle };
});
afterAll(() => t.close());

describe("balena-sdk models.billing", () => {
  it("getAccount and updateAccountInfo keep company info and a tax ID checked against its type", async () => {
    const sdk = await sdkAs(admin.token);
    expect(await sdk.models.billing.getAccount(org.id)).toMatchObject({ account_state: "active", email: "" });
    await sdk.models.billing.updateAccountInfo(org.id, {
      email: "billing@example.com",
      company_name: "Acme Robotics",
      address: { address1: "1 Main St", city: "Springfield", zip: "12345", country: "US" },
      tax_id: { type: "us_ein", value: "12-3456789" },
    } as never);
    expect(await sdk.models.billing.getAccount(org.handle)).toMatchObject({
      email: "billing@example.com",
      company_name: "Acme Robotics",
      address: { address1: "1 Main St", city: "Springfield" },
      tax_id: { type: "us_ein", value: "12-3456789" },
    });
    await expect(
      sdk.models.billing.updateAccountInfo(org.id, {
        email: "billing@example.com",
        tax_id: { type: "us_ein", value: "123" },
      } as never),
    ).rejects.toThrow("fields_errors.invalid_tax_id");
    await expect(sdk.models.billing.updateAccountInfo(org.id, { email: "not-an-address" } as never)).rejects.toThrow(
      "must be an email address",
    );
    // Empty type or value: no tax ID.
    await sdk.models.billing.updateAccountInfo(org.id, {
      email: "billing@example.com",
      tax_id: { type: "", value: "" },
    } as never);
    expect((await sdk.models.billing.getAccount(org.id)).tax_id).toBeNull();
  });

  it("getPlan is the free plan until a change; a paid plan needs a payment method, and so do credits", async () => {
    const sdk = await sdkAs(admin.token);
    const [feature] = await sdk.pine.get({
      resource: "feature",
      options: { $select: "id", $filter: { slug: "device:microservices" } },
    });
    await expect(sdk.models.creditBundle.create(org.id, Number(feature?.id), 10)).rejects.toThrow(
      "Credits are only available for pilot, production and enterprise plans.",
    );
    expect(await sdk.models.billing.getPlan(org.id)).toMatchObject({
      code: "free",
      tier: "free",
      intervalLength: "1",
      billing: { currency: "USD", totalCostCents: "0" },
    });
    await expect(sdk.models.billing.changePlan(org.id, { tier: "pilot-v2", cycle: "monthly" })).rejects.toThrow(
      "Add a payment method before moving to a paid plan.",
    );
    expect(await sdk.models.billing.getBillingInfo(org.id)).toEqual({});
  });

  it("createSetupIntent, then updateBillingInfo with the confirmed intent sets the card; getBillingInfo shows it", async () => {
    const sdk = await sdkAs(admin.token);
    const bad = await call(t, "POST", "/billing/v1/test-payments/setup-intents/seti_x/confirm", admin.token, {
      client_secret: "nope",
      card: { number: "4242424242424241", exp_month: "01", exp_year: "2001", cvc: "1", name: "" },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain("card number: not a valid card number");
    const { intent, confirmed } = await confirmedSetupIntent(sdk);
    expect(confirmed.status).toBe(200);
    await sdk.models.billing.updateBillingInfo(org.id, { token_id: intent.id, token_type: "setup_intent" });
    expect(await sdk.models.billing.getBillingInfo(org.id)).toMatchObject({
      type: "card",
      card_type: "visa",
      last_four: "4242",
      first_one: "4",
      month: "12",
      full_name: "Ada Admin",
      company: "Acme Robotics",
    });
    // A setup intent is used once.
    await expect(
      sdk.models.billing.updateBillingInfo(org.id, { token_id: intent.id, token_type: "setup_intent" }),
    ).rejects.toThrow("not confirmed (or was already used)");
  });

  it("changePlan to pilot monthly invoices the plan at once; getInvoices lists it and downloadInvoice streams a PDF", async () => {
    const sdk = await sdkAs(admin.token);
    await sdk.models.billing.changePlan(org.id, { tier: "pilot-v2", cycle: "monthly" });
    const plan = await sdk.models.billing.getPlan(org.id);
    expect(plan).toMatchObject({
      code: "pilot-v2",
      tier: "pilot",
      intervalLength: "1",
      billing: { totalCostCents: "29900" },
    });
    // Its charges (name, code, quantity, unit cost) and the add-on plan with its own total (spec 3 §3).
    expect(plan.billing.charges[0]).toMatchObject({
      itemType: "plan",
      code: "pilot-v2",
      name: expect.any(String),
      quantity: "1",
      unitCostCents: "29900",
    });
    expect((plan as unknown as { addonPlan: unknown }).addonPlan).toMatchObject({
      code: "pilot-v2-addons",
      addOns: [],
      billing: { currency: "USD", totalCostCents: "0" },
    });
    const invoices = await sdk.models.billing.getInvoices(org.id);
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({
      state: "paid",
      total_in_cents: "29900",
      invoice_number: expect.stringMatching(/^INV-\d{6}$/),
    });
    const stream = (await sdk.models.billing.downloadInvoice(
      org.id,
      invoices[0]?.invoice_number ?? "",
    )) as unknown as NodeJS.ReadableStream;
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
    const pdf = Buffer.concat(chunks);
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    expect(pdf.toString("latin1")).toContain(`(Invoice ${invoices[0]?.invoice_number}: $299.00, paid)`);
    await expect(sdk.models.billing.changePlan(org.id, { tier: "pilot-v2", cycle: "monthly" })).rejects.toThrow(
      "This is already the organization's plan.",
    );
    await expect(sdk.models.billing.changePlan(org.id, { tier: "enterprise-v2", cycle: "annual" })).rejects.toThrow(
      "contact sales",
    );
    // The payment method stays while the plan is paid.
    await expect(sdk.models.billing.removeBillingInfo(org.id)).rejects.toThrow("only be removed on the free plan");
  });

  it("creditBundle.create buys credits on a pilot plan with the payment method; a member cannot", async () => {
    const sdk = await sdkAs(admin.token);
    const [feature] = await sdk.pine.get({
      resource: "feature",
      options: { $select: "id", $filter: { slug: "device:microservices" } },
    });
    const bundle = (await sdk.models.creditBundle.create(org.id, Number(feature?.id), 100)) as unknown as Record<
      string,
      unknown
    >;
    expect(bundle).toMatchObject({
      payment_status: "paid",
      original_quantity: 100,
      total_balance: 100,
      unit_cost: 200,
      total_cost: 20000,
    });
    const listed = await sdk.models.creditBundle.getAllByOrg(org.id, {
      $select: ["original_quantity", "payment_status"],
    });
    expect(listed).toEqual([expect.objectContaining({ original_quantity: 100, payment_status: "paid" })]);
    await expect(sdk.models.creditBundle.create(org.id, Number(feature?.id), 0)).rejects.toThrow(
      "original_quantity: must be a whole number from 1 to 1500000",
    );
    const memberSdk = await sdkAs(member.token);
    await expect(memberSdk.models.creditBundle.create(org.id, Number(feature?.id), 5)).rejects.toThrow();
  });

  it("usage and can-access-support answer for the administrator", async () => {
    const usage = await call(t, "GET", `/billing/v1/account/${org.id}/usage`, admin.token);
    expect(usage.json).toMatchObject({
      currentUsage: { "device:microservices": 0, "member:administrator": 1, "member:member": 1 },
    });
    const support = await call(t, "GET", `/billing/v1/account/${org.id}/can-access-support`, admin.token);
    expect(support.json).toBe(true);
  });

  it("shows no billing info and no invoices while the account is not active", async () => {
    await t.db.query(
      `INSERT INTO "billing_account" (organization, account_state) VALUES ($1, 'closed')
                      ON CONFLICT (organization) DO UPDATE SET account_state = 'closed'`,
      [org.id],
    );
    try {
      const sdk = await sdkAs(admin.token);
      expect(await sdk.models.billing.getBillingInfo(org.id)).toEqual({});
      expect(await sdk.models.billing.getInvoices(org.id)).toEqual([]);
    } finally {
      await t.db.query(`UPDATE "billing_account" SET account_state = 'active' WHERE organization = $1`, [org.id]);
    }
  });

  it("refuses every call to a member of the organization (403), and answers 404 to a stranger", async () => {
    const sdk = await sdkAs(member.token);
    const refused = "Only the organization's administrators can see and change its billing.";
    await expect(sdk.models.billing.getAccount(org.id)).rejects.toThrow(refused);
    await expect(sdk.models.billing.getPlan(org.id)).rejects.toThrow(refused);
    await expect(sdk.models.billing.getBillingInfo(org.id)).rejects.toThrow(refused);
    await expect(sdk.models.billing.createSetupIntent({ organization: org.id })).rejects.toThrow(refused);
    await expect(sdk.models.billing.updateBillingInfo(org.id, { token_id: "seti_x" })).rejects.toThrow(refused);
    await expect(sdk.models.billing.removeBillingInfo(org.id)).rejects.toThrow(refused);
    await expect(sdk.models.billing.updateAccountInfo(org.id, { email: "x@example.com" } as never)).rejects.toThrow(
      refused,
    );
    await expect(sdk.models.billing.changePlan(org.id, { tier: "free", cycle: "monthly" })).rejects.toThrow(refused);
    await expect(sdk.models.billing.getInvoices(org.id)).rejects.toThrow(refused);
    await expect(sdk.models.billing.downloadInvoice(org.id, "INV-000001")).rejects.toThrow();
    const stranger = await t.factories.user();
    const usage = await call(t, "GET", `/billing/v1/account/${org.id}/usage`, stranger.token);
    expect(usage.status).toBe(404);
  });

  it("downgrades to the free plan with feedback, and then the payment method can go", async () => {
    const sdk = await sdkAs(admin.token);
    await sdk.models.billing.changePlan(org.id, { tier: "free", cycle: "monthly", planChangeReason: "Too expensive" });
    expect((await sdk.models.billing.getPlan(org.id)).code).toBe("free");
    const { rows } = await t.db.query<{ change_reason: string }>(
      `SELECT change_reason FROM "subscription" WHERE is_for__organization = $1 AND ends_on__date IS NOT NULL`,
      [org.id],
    );
    expect(rows.map((row) => row.change_reason)).toContain("Too expensive");
    await sdk.models.billing.removeBillingInfo(org.id);
    expect(await sdk.models.billing.getBillingInfo(org.id)).toEqual({});
  });
});
