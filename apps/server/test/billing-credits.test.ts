import { daysBetween, planChangeAdjustments } from "@flotilla/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtInProvider } from "../src/features/billing/provider.ts";
import { billingNow, changePlan, periodEnd, runBillingJob } from "../src/features/billing/service.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { addTestCard } from "./support/billing.ts";
import { call } from "./support/devices.ts";
import { linkIn, type MailServer, startMailServer } from "./support/mail.ts";

/**
 * Credits and prorations on invoices (spec 3 §3 "Billing usage", §4 Credits / Plan change, §9):
 * device overage is paid from the credit balance first, exactly once per period; a plan change
 * mid-period is stated as a proration on the next bill; a low balance is mailed once. Billing
 * time is moved by passing dates to the job, not by waiting.
 */

let t: TestApp;
let mail: MailServer;
const DAY = 24 * 3600_000;

beforeAll(async () => {
  mail = await startMailServer();
  t = await createTestApp({ SMTP_URL: mail.url, FLOTILLA_PUBLIC_URL: "http://dashboard.test" });
});
afterAll(async () => {
  await t.close();
  await mail.close();
});

type Line = {
  code?: string;
  description: string;
  quantity: number;
  unit_cost_in_cents: number;
  amount_in_cents: number;
};

async function payingOrganization() {
  const admin = await t.factories.user();
  const org = await t.factories.organization({ admins: [admin.user] });
  expect((await addTestCard(t, org.id, admin.token)).status).toBe(200);
  // Audited without the card's details.
  const { rows } = await t.db.query<{ action: string; details: unknown }>(
    `SELECT action, details FROM "audit_event" WHERE organization = $1 AND action LIKE 'billing.payment%'`,
    [org.id],
  );
  expect(rows).toEqual([{ action: "billing.payment_method_changed", details: null }]);
  return { admin, org };
}

const planChange = (org: number, tier: string, now: Date) =>
  t.db.transaction((tx) => changePlan(tx, builtInProvider, org, { tier, cycle: "monthly" }, now));

async function invoicesOf(org: number) {
  const { rows } = await t.db.query<{ period_start: Date; total_in_cents: number; state: string; lines: Line[] }>(
    `SELECT period_start, total_in_cents, state, lines FROM "invoice" WHERE organization = $1 ORDER BY period_start`,
    [org],
  );
  return rows;
}

/** A credit bundle as the billing code or staff records it. */
async function bundle(org: number, quantity: number, status: string, expiresInDays: number) {
  const { rows } = await t.db.query<{ id: number }>(
    `INSERT INTO "credit_bundle" (belongs_to__organization, is_for__feature, original_quantity, total_balance, unit_cost,
                                  total_cost, payment_status, expires_on__date)
     SELECT $1, id, $2, $2, 300, 300 * $2, $3, now() + make_interval(days => $4) FROM "feature" WHERE slug = 'device:microservices'
     RETURNING id`,
    [org, quantity, status, expiresInDays],
  );
  return Number(rows[0]?.id);
}

const balances = async (org: number) =>
  (
    await t.db.query<{ total_balance: number }>(
      `SELECT total_balance FROM "credit_bundle" WHERE belongs_to__organization = $1 ORDER BY id`,
      [org],
    )
  ).rows.map((row) => Number(row.total_balance));

describe("credits pay device overage on invoices", () => {
  it("spends the oldest-expiring counted credits first, states them as a negative line, once per period", async () => {
    const { admin, org } = await payingOrganization();
    const now = await billingNow(t.db, builtInProvider);
    await planChange(org.id, "prototype-v2", now);
    // Prototype includes 20 devices; 3 more cost $3.00 each a month.
    const fleet = await t.factories.fleet(org);
    for (let i = 0; i < 23; i++) await t.factories.device(fleet);
    await bundle(org.id, 10, "paid", 3650);
    await bundle(org.id, 2, "complimentary", 30);
    await bundle(org.id, 500, "failed", 3650); // counts for nothing
    await bundle(org.id, 500, "processing", 3650); // nor does a payment not yet through

    const renewal = periodEnd({ starts_on: now, cycle: "monthly" }, now);
    const at = new Date(renewal.getTime() + DAY);
    await runBillingJob(t.db, builtInProvider, at);
    await runBillingJob(t.db, builtInProvider, at);
    const invoices = await invoicesOf(org.id);
    expect(invoices).toHaveLength(2);
    const renewed = invoices[1];
    expect(renewed?.lines.map((line) => [line.code ?? "plan", line.quantity, line.amount_in_cents])).toEqual([
      ["plan", 1, 9900],
      ["device:microservices", 3, 900],
      ["credit:device:microservices", 3, -900],
    ]);
    expect(renewed?.lines[2]?.description).toBe("Credits applied: 3 credits (device-months) from the credit balance");
    expect(renewed).toMatchObject({ total_in_cents: 9900, state: "paid" });
    // The complimentary bundle expires first: both of its credits, then one of the paid ten.
    expect(await balances(org.id)).toEqual([9, 0, 500, 500]);
    const { rows: taken } = await t.db.query<{ quantity: number }>(
      `SELECT c.quantity FROM "credit_consumption" c JOIN "credit_bundle" b ON b.id = c.credit_bundle
        WHERE b.belongs_to__organization = $1 ORDER BY c.quantity`,
      [org.id],
    );
    expect(taken.map((row) => Number(row.quantity))).toEqual([1, 2]);

    // The credits page's balance (the data API) fell by the credits spent.
    const listed = await call(
      t,
      "GET",
      `/v7/credit_bundle?$select=available_balance&$filter=belongs_to__organization eq ${org.id}`,
      admin.token,
    );
    const available = (listed.json.d as Array<{ available_balance: number }>).reduce(
      (sum, row) => sum + row.available_balance,
      0,
    );
    expect(available).toBe(9);
    const usage = await call(t, "GET", `/billing/v1/account/${org.id}/usage`, admin.token);
    expect(usage.json).toMatchObject({
      overage: { "device:microservices": 3 },
      creditConsumption: { "device:microservices": 3 },
    });

    // The next period: 9 credits left pay for 3 device-months again; then 6 are left.
    await runBillingJob(
      t.db,
      builtInProvider,
      new Date(periodEnd({ starts_on: at, cycle: "monthly" }, at).getTime() + DAY),
    );
    expect((await invoicesOf(org.id)).at(-1)?.total_in_cents).toBe(9900);
    expect(await balances(org.id)).toEqual([6, 0, 500, 500]);
  });

  it("charges what the credits do not cover", async () => {
    const { org } = await payingOrganization();
    const now = await billingNow(t.db, builtInProvider);
    await planChange(org.id, "prototype-v2", now);
    const fleet = await t.factories.fleet(org);
    for (let i = 0; i < 24; i++) await t.factories.device(fleet);
    await bundle(org.id, 1, "manually invoiced", 3650);
    await runBillingJob(
      t.db,
      builtInProvider,
      new Date(periodEnd({ starts_on: now, cycle: "monthly" }, now).getTime() + DAY),
    );
    const renewed = (await invoicesOf(org.id)).at(-1);
    expect(renewed?.lines.map((line) => line.amount_in_cents)).toEqual([9900, 1200, -300]);
    expect(renewed?.total_in_cents).toBe(10800);
    expect(await balances(org.id)).toEqual([0]);
  });
});

describe("prorations on the next bill", () => {
  const lineCodes = (lines: Line[]) => lines.map((line) => [line.code ?? "plan", line.amount_in_cents]);

  it("an upgrade mid-period credits the unused days and charges the new plan's for them, on the next invoice", async () => {
    const { admin, org } = await payingOrganization();
    const start = await billingNow(t.db, builtInProvider);
    await planChange(org.id, "pilot-v2", start);
    const end = periodEnd({ starts_on: start, cycle: "monthly" }, start);
    const period = { start, end };
    const changedAt = new Date(start.getTime() + 10 * DAY);
    expect(await planChange(org.id, "production-v2", changedAt)).toBeUndefined();
    expect(await invoicesOf(org.id)).toHaveLength(1);
    const [unused, remaining] = planChangeAdjustments(
      period,
      { title: "Pilot", cycle: "monthly", price: 29900 },
      { title: "Production", cycle: "monthly", price: 139900 },
      changedAt,
    ).map((line) => line.amount_in_cents) as [number, number];
    expect(unused).toBeLessThan(0);
    expect(remaining).toBeGreaterThan(-unused);

    // The next bill (what the billing page shows): the new plan and both adjustments, at the period's end.
    const plan = await call(t, "GET", `/billing/v1/account/${org.id}/plan`, admin.token);
    expect(plan.json.currentPeriodEndDate).toBe(end.toISOString());
    const billing = plan.json.billing as { totalCostCents: string; charges: Array<Record<string, string>> };
    expect(billing.totalCostCents).toBe(String(139900 + unused + remaining));
    expect(billing.charges.slice(1).map((charge) => [charge.itemType, charge.unitCostCents])).toEqual([
      ["adjustment", String(unused)],
      ["adjustment", String(remaining)],
    ]);
    expect(billing.charges[1]?.name).toMatch(/^Unused time on Pilot \(monthly\), \w{3} \d+, \d{4} – \w{3} \d+, \d{4}$/);
    expect(billing.charges[2]?.name).toMatch(/^Remaining time on Production \(monthly\), /);

    // The job invoices the next period from the old period's end, with the adjustments, once.
    await runBillingJob(t.db, builtInProvider, new Date(end.getTime() + DAY));
    await runBillingJob(t.db, builtInProvider, new Date(end.getTime() + DAY));
    let invoices = await invoicesOf(org.id);
    expect(invoices).toHaveLength(2);
    expect(new Date(invoices[1]?.period_start ?? 0).toISOString()).toBe(end.toISOString());
    expect(lineCodes(invoices[1]?.lines ?? [])).toEqual([
      ["plan", 139900],
      ["unused_time", unused],
      ["remaining_time", remaining],
    ]);
    expect(invoices[1]?.total_in_cents).toBe(139900 + unused + remaining);

    // A downgrade on the last days of the next period: the credit is larger than the pilot plan's
    // price, so the invoice after it is paid in full by it and the rest is carried to the one after.
    const next = periodEnd({ starts_on: end, cycle: "monthly" }, end);
    const downAt = new Date(end.getTime() + 2 * DAY);
    await planChange(org.id, "pilot-v2", downAt);
    const down = planChangeAdjustments(
      { start: end, end: next },
      { title: "Production", cycle: "monthly", price: 139900 },
      { title: "Pilot", cycle: "monthly", price: 29900 },
      downAt,
    ).map((line) => line.amount_in_cents) as [number, number];
    await runBillingJob(t.db, builtInProvider, new Date(next.getTime() + DAY));
    invoices = await invoicesOf(org.id);
    const carried = -(29900 + down[0] + down[1]);
    expect(carried).toBeGreaterThan(0);
    expect(lineCodes(invoices[2]?.lines ?? [])).toEqual([
      ["plan", 29900],
      ["unused_time", down[0]],
      ["remaining_time", down[1]],
      ["carried_credit", carried],
    ]);
    expect(invoices[2]).toMatchObject({ total_in_cents: 0, state: "paid" });
    const after = periodEnd({ starts_on: next, cycle: "monthly" }, next);
    await runBillingJob(t.db, builtInProvider, new Date(after.getTime() + DAY));
    const last = (await invoicesOf(org.id))[3];
    // Still more than a month of Pilot: that invoice is paid by it too, and the rest goes on.
    expect(lineCodes(last?.lines ?? [])).toEqual([
      ["plan", 29900],
      ["carried_credit", -carried],
      ["carried_credit", carried - 29900],
    ]);
    expect(last?.total_in_cents).toBe(0);
  });

  it("gives no money away going monthly → annual → free → pilot within a month (the reported case)", async () => {
    const { org } = await payingOrganization();
    const start = await billingNow(t.db, builtInProvider);
    const change = (tier: string, cycle: "monthly" | "annual", at: Date) =>
      t.db.transaction((tx) => changePlan(tx, builtInProvider, org.id, { tier, cycle }, at));
    await change("prototype-v2", "monthly", start);
    await change("prototype-v2", "annual", new Date(start.getTime() + 2 * DAY));
    await change("free", "monthly", new Date(start.getTime() + 5 * DAY));
    const { rows: refunds } = await t.db.query<{ amount_in_cents: number }>(
      `SELECT amount_in_cents FROM "billing_refund" WHERE organization = $1`,
      [org.id],
    );
    await change("pilot-v2", "monthly", new Date(start.getTime() + 6 * DAY));
    const invoices = await invoicesOf(org.id);
    const paid = invoices.reduce((sum, invoice) => sum + invoice.total_in_cents, 0);
    const refunded = refunds.reduce((sum, refund) => sum + Number(refund.amount_in_cents), 0);
    // Prototype monthly for 2 days, Prototype annual for 3 days (its daily price), then Pilot's first month.
    const days = daysBetween(start, periodEnd({ starts_on: start, cycle: "monthly" }, start));
    const year = daysBetween(start, periodEnd({ starts_on: start, cycle: "annual" }, start));
    const owed =
      Math.round((9900 * 2) / days) + (Math.round((106920 * 5) / year) - Math.round((106920 * 2) / year)) + 29900;
    expect(paid - refunded).toBe(owed);
    // The Pilot plan's first invoice is its full price: nothing carried from before.
    expect(invoices.at(-1)).toMatchObject({ total_in_cents: 29900, state: "paid" });
    // Nothing is left pending.
    const { rows: pending } = await t.db.query(
      `SELECT 1 FROM "billing_adjustment" WHERE organization = $1 AND invoice IS NULL AND settled_at IS NULL`,
      [org.id],
    );
    expect(pending).toEqual([]);
  });
});

describe("low credit balance mails", () => {
  it("mails the administrators once when the balance falls below the threshold, again only after it recovered", async () => {
    const { admin, org } = await payingOrganization();
    const job = (at = new Date()) =>
      runBillingJob(t.db, builtInProvider, at, { mailer: t.ctx.mail, publicUrl: "http://dashboard.test" });
    const first = await bundle(org.id, 5, "paid", 3650);
    await t.db.query(
      `INSERT INTO "organization_credit_notification" (organization, owns_credit_notification_for__feature, is_sent_when_below__threshold)
       SELECT $1, id, 10 FROM "feature" WHERE slug = 'device:microservices'`,
      [org.id],
    );
    const email = String(admin.user.email);
    await job();
    const sent = await mail.next(email);
    expect(sent.subject).toBe("Your credit balance is low");
    expect(sent.text).toContain(`The credit balance of the organization ${org.name} is 5 credits`);
    expect(sent.text).toContain("threshold of 10 credits");
    expect(linkIn(sent)).toBe(`http://dashboard.test/orgs/${org.id}/credits`);
    await job();
    expect(mail.to(email)).toHaveLength(1);

    // At the threshold again, then below it: one more mail.
    await bundle(org.id, 5, "complimentary", 3650);
    await job();
    expect(mail.to(email)).toHaveLength(1);
    await t.db.query(`UPDATE "credit_bundle" SET total_balance = 1 WHERE id = $1`, [first]);
    await job();
    expect((await mail.next(email)).text).toContain("is 6 credits");
    await job();
    expect(mail.to(email)).toHaveLength(2);
  });

  it("without a notification, the threshold is twice the device count once the organization holds credits", async () => {
    const { admin, org } = await payingOrganization();
    const email = String(admin.user.email);
    const fleet = await t.factories.fleet(org);
    for (let i = 0; i < 3; i++) await t.factories.device(fleet);
    const job = () =>
      runBillingJob(t.db, builtInProvider, new Date(), { mailer: t.ctx.mail, publicUrl: "http://dashboard.test" });
    await job();
    expect(mail.to(email)).toHaveLength(0);
    await bundle(org.id, 6, "paid", 3650);
    await job();
    expect(mail.to(email)).toHaveLength(0);
    await t.factories.device(fleet);
    await job();
    expect((await mail.next(email)).text).toContain("is 6 credits, below its notification threshold of 8 credits");
  });
});
