import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtInProvider, DECLINING_TEST_CARD } from "../src/features/billing/provider.ts";
import { billingNow, runBillingJob } from "../src/features/billing/service.ts";
import { grantGlobalRole } from "../src/features/users/service.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { call } from "./support/devices.ts";

/**
 * The billing job with a moved clock (spec 3 §4): each paid period is invoiced once, however
 * often and on however many instances the job runs; a declined charge makes the organization
 * past due from the invoice's due date, frozen 60 days later, and a new card pays and unfreezes it.
 */

let t: TestApp;
let admin: { token: string };
let org: number;
const DAY = 24 * 3600_000;

async function addCard(number: string) {
  const intent = await call(t, "POST", `/billing/v1/account/${org}/setup-intent`, admin.token, {});
  const { id, client_secret } = intent.json as { id: string; client_secret: string };
  const confirmed = await call(t, "POST", `/billing/v1/test-payments/setup-intents/${id}/confirm`, admin.token, {
    client_secret,
    card: { number, exp_month: "12", exp_year: String(new Date().getFullYear() + 3), cvc: "123", name: "Ada" },
  });
  expect(confirmed.status).toBe(200);
  const saved = await call(t, "PATCH", `/billing/v1/account/${org}/info`, admin.token, { token_id: id });
  expect(saved.status).toBe(200);
}

const invoices = async () =>
  (await call(t, "GET", `/billing/v1/account/${org}/invoices`, admin.token)).json as unknown as Array<{
    state: string;
    due_on: string;
    invoice_number: string;
  }>;
const organization = async () =>
  (
    await t.db.query<{ is_frozen: boolean; since: Date | null }>(
      `SELECT is_frozen, has_past_due_invoice_since__date AS since FROM "organization" WHERE id = $1`,
      [org],
    )
  ).rows[0];

beforeAll(async () => {
  t = await createTestApp();
  const a = await t.factories.user();
  admin = a;
  org = (await t.factories.organization({ admins: [a.user] })).id;
});
afterAll(() => t.close());

describe("the billing job", () => {
  it("invoices each new period once; a declined card leaves it past due, frozen from 60 days; a new card pays and unfreezes", async () => {
    await addCard(DECLINING_TEST_CARD);
    const changed = await call(t, "PATCH", `/billing/v1/account/${org}/plan`, admin.token, {
      tier: "pilot-v2",
      annual: false,
    });
    expect(changed.status).toBe(200);
    // The change is in the audit log.
    const { rows: audited } = await t.db.query<{ action: string; details: { tier: string } }>(
      `SELECT action, details FROM "audit_event" WHERE organization = $1 AND action = 'billing.plan_changed'`,
      [org],
    );
    expect(audited).toEqual([
      { action: "billing.plan_changed", details: expect.objectContaining({ tier: "pilot-v2" }) },
    ]);
    // The first period is invoiced with the change; its charge was declined.
    expect((await invoices()).map((i) => i.state)).toEqual(["past_due"]);
    const start = Date.now();

    // Nothing new within the period, however often the job runs (two at once: one waits its turn or skips).
    const [a, b] = await Promise.all([
      runBillingJob(t.db, builtInProvider, new Date(start + DAY)),
      runBillingJob(t.db, builtInProvider, new Date(start + DAY)),
    ]);
    expect((a?.invoiced ?? 0) + (b?.invoiced ?? 0)).toBe(0);
    expect(await organization()).toMatchObject({ is_frozen: false, since: expect.any(Date) });

    // 65 days on: two more monthly periods began, both invoiced once and declined; frozen.
    await runBillingJob(t.db, builtInProvider, new Date(start + 65 * DAY));
    await runBillingJob(t.db, builtInProvider, new Date(start + 65 * DAY));
    const listed = await invoices();
    expect(listed.map((i) => i.state)).toEqual(["past_due", "past_due", "past_due"]);
    expect(new Set(listed.map((i) => i.invoice_number)).size).toBe(3);
    expect((await organization())?.is_frozen).toBe(true);

    // 59 days after the first due date is not yet frozen (the boundary), 60 is.
    await runBillingJob(t.db, builtInProvider, new Date(start + 59 * DAY));
    expect((await organization())?.is_frozen).toBe(false);
    await runBillingJob(t.db, builtInProvider, new Date(start + 60 * DAY + 60_000));
    expect((await organization())?.is_frozen).toBe(true);

    // A working card pays every unpaid invoice and unfreezes the organization.
    await addCard("4242424242424242");
    expect((await invoices()).map((i) => i.state)).toEqual(["paid", "paid", "paid"]);
    expect(await organization()).toMatchObject({ is_frozen: false, since: null });
  });

  it("the test clock: a platform administrator advances billing time and the job runs; nobody else may", async () => {
    const other = await t.factories.user();
    const otherOrg = (await t.factories.organization({ admins: [other.user] })).id;
    const refused = await call(t, "POST", "/billing/v1/test-clock/advance", other.token, { days: 65 });
    expect(refused.status).toBe(403);
    expect(refused.json.message).toBe("Only platform administrators move the billing test clock.");

    // An organization on pilot with a declining card: moved 65 days, it is frozen.
    org = otherOrg;
    admin = other;
    await addCard(DECLINING_TEST_CARD);
    expect((await call(t, "PATCH", `/billing/v1/account/${org}/plan`, admin.token, { tier: "pilot-v2" })).status).toBe(
      200,
    );
    const staff = await t.factories.user();
    await grantGlobalRole(t.db.orm, staff.user.id, "balena_admin");
    // Global roles are read when the session starts.
    const staffToken = await t.ctx.tokens.start(staff.user);
    const moved = await call(t, "POST", "/billing/v1/test-clock/advance", staffToken, { days: 65 });
    expect(moved.status).toBe(200);
    expect(Date.parse(String(moved.json.now)) - Date.now()).toBeGreaterThan(64 * DAY);
    expect((await organization())?.is_frozen).toBe(true);
    // 0 days only runs the job; backwards is refused.
    const still = await call(t, "POST", "/billing/v1/test-clock/advance", staffToken, { days: 0 });
    expect(Date.parse(String(still.json.now)) - Date.parse(String(moved.json.now))).toBeLessThan(DAY);
    expect((await call(t, "POST", "/billing/v1/test-clock/advance", staffToken, { days: -1 })).status).toBe(400);
  });

  it("bills usage beyond the plan on each new period: seats of paid roles beyond those included", async () => {
    const first = await t.factories.user();
    const second = await t.factories.user();
    org = (await t.factories.organization({ admins: [first.user, second.user] })).id;
    admin = first;
    await addCard("4242424242424242");
    // Prototype includes one administrator seat; the second costs $49 a month.
    expect(
      (await call(t, "PATCH", `/billing/v1/account/${org}/plan`, admin.token, { tier: "prototype-v2" })).status,
    ).toBe(200);
    const plan = await call(t, "GET", `/billing/v1/account/${org}/plan`, admin.token);
    expect(plan.json.billing).toMatchObject({
      totalCostCents: "14800",
      charges: [
        expect.objectContaining({ itemType: "plan", unitCostCents: "9900" }),
        expect.objectContaining({
          itemType: "addon",
          code: "member:administrator",
          quantity: "1",
          unitCostCents: "4900",
        }),
      ],
    });
    const usage = await call(t, "GET", `/billing/v1/account/${org}/usage`, admin.token);
    expect(usage.json).toMatchObject({
      currentUsage: { "member:administrator": 2 },
      overage: { "member:administrator": 1 },
      charges: { "member:administrator": 4900 },
    });
    // Billing time: the test clock was moved by the test before (plan changes are dated by it).
    const now = await billingNow(t.db, builtInProvider);
    await runBillingJob(t.db, builtInProvider, new Date(now.getTime() + 32 * DAY));
    const { rows } = await t.db.query<{
      total_in_cents: number;
      lines: Array<{ code?: string; amount_in_cents: number }>;
    }>(`SELECT total_in_cents, lines FROM "invoice" WHERE organization = $1 ORDER BY period_start DESC LIMIT 1`, [org]);
    expect(rows[0]?.total_in_cents).toBe(14800);
    expect(rows[0]?.lines.map((line) => line.code ?? "plan")).toEqual(["plan", "member:administrator"]);
  });
});
