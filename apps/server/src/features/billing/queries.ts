import { SEAT_ROLES, type TaxId } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import type { BillingIssuer } from "./issuer.ts";
import type { PaymentMethodDetails } from "./provider.ts";

type Db = Pick<Queryable, "query">;

export type PlanRow = {
  id: number;
  title: string;
  billing_code: string;
  monthly_price: number;
  annual_price: number;
  can_self_serve: boolean;
  is_legacy: boolean;
  is_valid_from__date: string | null;
  is_valid_until__date: string | null;
};

export type Subscription = { id: number; cycle: "monthly" | "annual"; starts_on: Date; plan: PlanRow };

const PLAN_COLUMNS = `p.id, p.title, p.billing_code, p.monthly_price, p.annual_price, p.can_self_serve, p.is_legacy,
  p.is_valid_from__date, p.is_valid_until__date`;

/** The organization's open subscription; an organization without one is on the free plan, monthly. */
export async function currentSubscription(db: Db, organization: number): Promise<Subscription> {
  const { rows } = await db.query<PlanRow & { subscription: number | null; billing_cycle: string; starts: Date }>(
    `SELECT ${PLAN_COLUMNS}, s.id AS subscription, s.billing_cycle, s.starts_on__date AS starts
       FROM "subscription" s JOIN "plan" p ON p.id = s.is_for__plan
      WHERE s.is_for__organization = $1 AND s.ends_on__date IS NULL
     UNION ALL
     SELECT ${PLAN_COLUMNS}, NULL, 'monthly', o.created_at FROM "plan" p, "organization" o
      WHERE p.billing_code = 'free' AND o.id = $1
      ORDER BY subscription NULLS LAST LIMIT 1`,
    [organization],
  );
  const row = rows[0];
  if (!row) throw new Error(`organization ${organization} has no plan (is the catalogue seeded?)`);
  const { subscription, billing_cycle, starts, ...plan } = row;
  return {
    id: Number(subscription ?? 0),
    cycle: billing_cycle === "annual" ? "annual" : "monthly",
    starts_on: new Date(starts),
    plan: {
      ...plan,
      id: Number(plan.id),
      monthly_price: Number(plan.monthly_price),
      annual_price: Number(plan.annual_price),
    },
  };
}

export async function planByCode(db: Db, code: string): Promise<PlanRow | undefined> {
  const { rows } = await db.query<PlanRow>(`SELECT ${PLAN_COLUMNS} FROM "plan" p WHERE p.billing_code = $1`, [code]);
  const row = rows[0];
  return (
    row && {
      ...row,
      id: Number(row.id),
      monthly_price: Number(row.monthly_price),
      annual_price: Number(row.annual_price),
    }
  );
}

/** What a plan includes (`device:microservices` 50, `member:administrator` 2, …), by feature slug. */
export async function planIncludes(db: Db, plan: number): Promise<Map<string, number>> {
  const { rows } = await db.query<{ slug: string; quantity: number }>(
    `SELECT f.slug, pf.quantity FROM "plan_feature" pf JOIN "feature" f ON f.id = pf.feature WHERE pf.plan = $1`,
    [plan],
  );
  return new Map(rows.map((row) => [row.slug, Number(row.quantity)]));
}

/** Add-on prices per unit and month (devices beyond the included ones, member seats), by feature slug. */
export async function planAddonPrices(db: Db, plan: number): Promise<Map<string, number>> {
  const { rows } = await db.query<{ slug: string; base_price: number }>(
    `SELECT f.slug, pa.base_price FROM "plan_addon" pa JOIN "feature" f ON f.id = pa.feature WHERE pa.plan = $1`,
    [plan],
  );
  return new Map(rows.map((row) => [row.slug, Number(row.base_price)]));
}

/**
 * Current usage by billing item (spec 3 §3 "Billing usage"): active devices as
 * `device:microservices`, and members by the seat they take (`member:administrator`, …).
 */
export async function usageOf(db: Db, organization: number): Promise<Record<string, number>> {
  const { rows: devices } = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM "device" d JOIN "application" a ON a.id = d.belongs_to__application
      WHERE a.organization = $1 AND d.is_active`,
    [organization],
  );
  const { rows: seats } = await db.query<{ seat: string; count: number }>(
    `SELECT seat, count(*)::int AS count FROM (
       SELECT CASE WHEN r.name = 'administrator' THEN 'administrator' ELSE coalesce((
                SELECT fa.role FROM "fleet_access" fa JOIN "application" a ON a.id = fa.application
                  JOIN "user" u ON u.actor = fa.actor
                 WHERE u.id = m."user" AND a.organization = m.is_member_of__organization
                 ORDER BY array_position($2::text[], fa.role) LIMIT 1), 'member') END AS seat
         FROM "organization_membership" m JOIN "organization_membership_role" r ON r.id = m.organization_membership_role
        WHERE m.is_member_of__organization = $1) seats
      GROUP BY seat`,
    [organization, [...SEAT_ROLES]],
  );
  const usage: Record<string, number> = { "device:microservices": Number(devices[0]?.count ?? 0) };
  for (const row of seats) usage[`member:${row.seat}`] = Number(row.count);
  return usage;
}

export type AccountRow = {
  email: string | null;
  company_name: string | null;
  address: Record<string, string>;
  tax_id: TaxId | null;
  account_state: string;
};

export async function accountOf(db: Db, organization: number): Promise<AccountRow> {
  const { rows } = await db.query<AccountRow>(
    `SELECT email, company_name, address, tax_id, account_state FROM "billing_account" WHERE organization = $1`,
    [organization],
  );
  return rows[0] ?? { email: null, company_name: null, address: {}, tax_id: null, account_state: "active" };
}

export async function saveAccount(db: Db, organization: number, account: Omit<AccountRow, "account_state">) {
  await db.query(
    `INSERT INTO "billing_account" (organization, email, company_name, address, tax_id)
     VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)
     ON CONFLICT (organization) DO UPDATE SET email = $2, company_name = $3, address = $4::jsonb, tax_id = $5::jsonb,
       modified_at = now()`,
    [
      organization,
      account.email,
      account.company_name,
      JSON.stringify(account.address),
      JSON.stringify(account.tax_id),
    ],
  );
}

export type PaymentMethodRow = PaymentMethodDetails & { provider: string };

export async function paymentMethodOf(db: Db, organization: number): Promise<PaymentMethodRow | undefined> {
  const { rows } = await db.query<PaymentMethodRow & { provider_reference: string }>(
    `SELECT provider, provider_reference, type, card_type, first_one, last_four, month, year, routing_number, full_name
       FROM "payment_method" WHERE organization = $1`,
    [organization],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { provider_reference, ...rest } = row;
  return { ...rest, reference: provider_reference };
}

export async function savePaymentMethod(db: Db, organization: number, provider: string, method: PaymentMethodDetails) {
  await db.query(
    `INSERT INTO "payment_method" (organization, provider, provider_reference, type, card_type, first_one, last_four,
                                   month, year, routing_number, full_name)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (organization) DO UPDATE SET provider = $2, provider_reference = $3, type = $4, card_type = $5,
       first_one = $6, last_four = $7, month = $8, year = $9, routing_number = $10, full_name = $11, created_at = now()`,
    [
      organization,
      provider,
      method.reference,
      method.type,
      method.card_type ?? null,
      method.first_one ?? null,
      method.last_four,
      method.month ?? null,
      method.year ?? null,
      method.routing_number ?? null,
      method.full_name,
    ],
  );
}

export async function removePaymentMethod(db: Db, organization: number) {
  await db.query(`DELETE FROM "payment_method" WHERE organization = $1`, [organization]);
}

/** Ends the open subscription now (with the reason given) and opens one on `plan`. */
export async function switchPlan(
  db: Db,
  organization: number,
  plan: number,
  cycle: "monthly" | "annual",
  reason: string | undefined,
) {
  await db.query(
    `UPDATE "subscription" SET ends_on__date = now(), change_reason = $2
      WHERE is_for__organization = $1 AND ends_on__date IS NULL`,
    [organization, reason ?? null],
  );
  await db.query(
    `INSERT INTO "subscription" (is_for__organization, is_for__plan, billing_cycle, origin) VALUES ($1, $2, $3, 'self-serve')`,
    [organization, plan, cycle],
  );
}

export type InvoiceLine = {
  description: string;
  quantity: number;
  unit_cost_in_cents: number;
  amount_in_cents: number;
  /**
   * The billing item (`device:microservices`, `member:developer`) of a usage line; `credit:<item>`
   * for credits paying for it; `proration` and `carried_credit` for adjustments.
   */
  code?: string;
};

export type InvoiceRow = {
  id: number;
  uuid: string;
  invoice_number: string;
  state: string;
  currency: string;
  subtotal_in_cents: number;
  total_in_cents: number;
  lines: InvoiceLine[];
  period_start: Date | null;
  period_end: Date | null;
  created_at: Date;
  due_on: Date | null;
  closed_at: Date | null;
  billed_to: BilledTo | null;
  seller: Omit<BillingIssuer, "logo"> | null;
  paid_with: string | null;
  tax_note: string | null;
};

/** Who an invoice bills, as copied onto it when it was issued. */
export type BilledTo = {
  name: string;
  email: string | null;
  address: Record<string, string | undefined>;
  tax_id: TaxId | null;
};

const INVOICE_COLUMNS = `id, uuid, invoice_number, state, currency, subtotal_in_cents, total_in_cents, lines, period_start,
  period_end, created_at, due_on, closed_at, billed_to, seller, paid_with, tax_note`;

/**
 * A new invoice, numbered `INV-000042` from a gapless counter (invoicing law wants no gaps); undefined
 * when its period was invoiced already. What it bills is fixed now: the billing account's details
 * as they are, the seller, how it was paid and its tax note are copied onto it. Runs in the
 * caller's transaction: the counter's row lock orders invoices across instances.
 */
export async function createInvoice(
  db: Db,
  organization: number,
  values: {
    state: string;
    lines: InvoiceLine[];
    periodStart: Date;
    periodEnd: Date;
    dueOn: Date;
    issuedAt: Date;
    seller: BillingIssuer;
    paidWith: string | null;
    taxNote: string | undefined;
    paymentReference?: string | undefined;
    paymentError?: string | undefined;
  },
): Promise<InvoiceRow | undefined> {
  const { rows: counter } = await db.query<{ last_number: number }>(
    `SELECT last_number FROM "invoice_number_counter" WHERE series = 'INV' FOR UPDATE`,
  );
  if (await isInvoiced(db, organization, values.periodStart)) return undefined;
  const number = Number(counter[0]?.last_number ?? 0) + 1;
  const total = values.lines.reduce((sum, line) => sum + line.amount_in_cents, 0);
  const { rows } = await db.query<InvoiceRow>(
    `INSERT INTO "invoice" (uuid, organization, invoice_number, state, subtotal_in_cents, total_in_cents, lines,
                            period_start, period_end, due_on, closed_at, payment_reference, created_at,
                            billed_to, seller, paid_with, tax_note, payment_error)
     SELECT gen_random_uuid()::text, o.id, $2, $3, $4, $4, $5::jsonb, $6, $7, $8, CASE WHEN $3 = 'paid' THEN $10::timestamptz END, $9, $10,
            jsonb_build_object('name', COALESCE(NULLIF(b.company_name, ''), o.name), 'email', b.email,
                               'address', COALESCE(b.address, '{}'::jsonb), 'tax_id', b.tax_id),
            $11::jsonb, $12, $13, $14
       FROM "organization" o LEFT JOIN "billing_account" b ON b.organization = o.id
      WHERE o.id = $1
     RETURNING ${INVOICE_COLUMNS}`,
    [
      organization,
      `INV-${String(number).padStart(6, "0")}`,
      values.state,
      total,
      JSON.stringify(values.lines),
      values.periodStart,
      values.periodEnd,
      values.dueOn,
      values.paymentReference ?? null,
      values.issuedAt,
      JSON.stringify({ ...values.seller, logo: undefined }),
      values.paidWith,
      values.taxNote ?? null,
      values.paymentError ?? null,
    ],
  );
  await db.query(
    `INSERT INTO "invoice_number_counter" (series, last_number) VALUES ('INV', $1)
     ON CONFLICT (series) DO UPDATE SET last_number = $1`,
    [number],
  );
  return rows[0];
}

/** Invoices not paid when charged (past due since their due date). */
export async function unpaidInvoices(db: Db, organization: number): Promise<InvoiceRow[]> {
  const { rows } = await db.query<InvoiceRow>(
    `SELECT ${INVOICE_COLUMNS} FROM "invoice" WHERE organization = $1 AND state IN ('past_due', 'failed') ORDER BY due_on`,
    [organization],
  );
  return rows;
}

export async function markInvoicePaid(db: Db, organization: number, number: string, reference: string, at: Date) {
  await db.query(
    `UPDATE "invoice" SET state = 'paid', closed_at = $4, payment_reference = $3, payment_error = NULL
      WHERE organization = $1 AND invoice_number = $2`,
    [organization, number, reference, at],
  );
}

/** A charge of an unpaid invoice failed again: its payment and the provider's reason. */
export async function recordFailedCharge(db: Db, invoice: number, reference: string, error: string) {
  await db.query(`UPDATE "invoice" SET payment_reference = $2, payment_error = $3 WHERE id = $1`, [
    invoice,
    reference || null,
    error,
  ]);
}

/**
 * Paid subscriptions open now, with the end of the last period invoiced since they started. A
 * plan changed mid-period keeps the period invoiced before the change (its proration goes on the
 * next invoice), so that period counts too.
 */
export async function paidSubscriptions(db: Db) {
  const { rows } = await db.query<{
    organization: number;
    starts_on: Date;
    billing_cycle: string;
    invoiced_until: Date | null;
    plan: number;
    title: string;
    monthly_price: number;
    annual_price: number;
  }>(
    `SELECT s.is_for__organization AS organization, p.id AS plan, s.starts_on__date AS starts_on, s.billing_cycle,
            (SELECT max(i.period_end) FROM "invoice" i
              WHERE i.organization = s.is_for__organization AND i.period_end > s.starts_on__date) AS invoiced_until,
            p.title, p.monthly_price, p.annual_price
       FROM "subscription" s JOIN "plan" p ON p.id = s.is_for__plan
      WHERE s.ends_on__date IS NULL AND p.billing_code <> 'free'`,
  );
  return rows;
}

/**
 * Past due since the oldest unpaid invoice's due date (none: not past due); frozen from
 * `freezeDays` after it (spec 3 §4 "Past due and frozen"), unfrozen once nothing is unpaid.
 */
export async function updatePastDue(db: Db, now: Date, freezeDays: number, organization?: number) {
  await db.query(
    `UPDATE "organization" o SET has_past_due_invoice_since__date = due.since,
            is_frozen = due.since IS NOT NULL AND due.since <= $1::timestamptz - make_interval(days => $2)
       FROM (SELECT o2.id, (SELECT min(i.due_on) FROM "invoice" i
                             WHERE i.organization = o2.id AND i.state IN ('past_due', 'failed')) AS since
               FROM "organization" o2 WHERE $3::int IS NULL OR o2.id = $3) due
      WHERE o.id = due.id
        AND (o.has_past_due_invoice_since__date IS DISTINCT FROM due.since
             OR o.is_frozen IS DISTINCT FROM (due.since IS NOT NULL AND due.since <= $1::timestamptz - make_interval(days => $2)))`,
    [now, freezeDays, organization ?? null],
  );
}

export async function invoicesOf(db: Db, organization: number): Promise<InvoiceRow[]> {
  const { rows } = await db.query<InvoiceRow>(
    `SELECT ${INVOICE_COLUMNS} FROM "invoice" WHERE organization = $1 ORDER BY created_at DESC, id DESC`,
    [organization],
  );
  return rows;
}

export async function invoiceByNumber(db: Db, organization: number, number: string): Promise<InvoiceRow | undefined> {
  const { rows } = await db.query<InvoiceRow>(
    `SELECT ${INVOICE_COLUMNS} FROM "invoice" WHERE organization = $1 AND invoice_number = $2`,
    [organization, number],
  );
  return rows[0];
}

/** Whether the organization's period starting at `start` was invoiced (before charging it again). */
export async function isInvoiced(db: Db, organization: number, start: Date): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM "invoice" WHERE organization = $1 AND period_start = $2`, [
    organization,
    start,
  ]);
  return rows.length > 0;
}

/** The invoiced billing period `at` falls in, if any: what the organization has paid up to. */
export async function invoicedPeriodAt(
  db: Db,
  organization: number,
  at: Date,
): Promise<{ start: Date; end: Date } | undefined> {
  const { rows } = await db.query<{ period_start: Date; period_end: Date }>(
    `SELECT period_start, period_end FROM "invoice"
      WHERE organization = $1 AND period_start <= $2 AND period_end > $2 ORDER BY period_start DESC LIMIT 1`,
    [organization, at],
  );
  const row = rows[0];
  return row && { start: new Date(row.period_start), end: new Date(row.period_end) };
}

// Credits (spec 3 §4 Credits). A bundle's `total_balance` is what is left of it: the single
// source of the balance; `credit_consumption` records which invoice took what.

const COUNTED_CREDITS = `b.belongs_to__organization = $1 AND b.payment_status IN ('paid', 'complimentary', 'manually invoiced')
  AND b.expires_on__date > $2 AND b.is_for__feature = (SELECT id FROM "feature" WHERE slug = $3)`;

/**
 * The bundles whose credits can be spent at `at`, oldest-expiring first, locked until the
 * transaction ends (a purchase or another job cannot change them meanwhile).
 */
export async function spendableCreditBundles(
  db: Db,
  organization: number,
  feature: string,
  at: Date,
): Promise<Array<{ id: number; total_balance: number }>> {
  const { rows } = await db.query<{ id: number; total_balance: number }>(
    `SELECT b.id, b.total_balance FROM "credit_bundle" b
      WHERE ${COUNTED_CREDITS} AND b.total_balance > 0 ORDER BY b.expires_on__date, b.id FOR UPDATE`,
    [organization, at, feature],
  );
  return rows.map((row) => ({ id: Number(row.id), total_balance: Number(row.total_balance) }));
}

/** Spends credits of bundles on an invoice: lowers their balance and records each take. */
export async function consumeCredits(
  db: Db,
  invoice: number,
  takes: ReadonlyArray<{ bundle: number; quantity: number }>,
) {
  for (const take of takes) {
    await db.query(`UPDATE "credit_bundle" SET total_balance = total_balance - $2, modified_at = now() WHERE id = $1`, [
      take.bundle,
      take.quantity,
    ]);
    await db.query(`INSERT INTO "credit_consumption" (credit_bundle, invoice, quantity) VALUES ($1, $2, $3)`, [
      take.bundle,
      invoice,
      take.quantity,
    ]);
  }
}

/** Credits spent on the organization's latest invoice (its current period), by feature slug. */
export async function latestCreditConsumption(db: Db, organization: number): Promise<Record<string, number>> {
  const { rows } = await db.query<{ slug: string; quantity: number }>(
    `SELECT f.slug, sum(c.quantity)::int AS quantity FROM "credit_consumption" c
       JOIN "credit_bundle" b ON b.id = c.credit_bundle JOIN "feature" f ON f.id = b.is_for__feature
      WHERE c.invoice = (SELECT id FROM "invoice" WHERE organization = $1 ORDER BY period_start DESC NULLS LAST, id DESC LIMIT 1)
      GROUP BY f.slug`,
    [organization],
  );
  return Object.fromEntries(rows.map((row) => [row.slug, Number(row.quantity)]));
}

/**
 * Organizations to check for a low credit balance at `at`: those with a notification for the
 * feature, or holding credits of it (then the threshold is the default, twice the device count);
 * with their balance and whether their administrators were told already.
 */
export async function creditThresholds(db: Db, feature: string, at: Date) {
  const { rows } = await db.query<{
    organization: number;
    name: string;
    handle: string;
    balance: number;
    threshold: number | null;
    devices: number;
    notified_at: Date | null;
  }>(
    `WITH f AS (SELECT id FROM "feature" WHERE slug = $1)
     SELECT o.id AS organization, o.name, o.handle,
            (SELECT coalesce(sum(b.total_balance), 0)::int FROM "credit_bundle" b
              WHERE b.belongs_to__organization = o.id AND b.is_for__feature = (SELECT id FROM f)
                AND b.payment_status IN ('paid', 'complimentary', 'manually invoiced') AND b.expires_on__date > $2) AS balance,
            n.is_sent_when_below__threshold AS threshold,
            (SELECT count(*)::int FROM "device" d JOIN "application" a ON a.id = d.belongs_to__application
              WHERE a.organization = o.id AND d.is_active) AS devices,
            ba.credit_low_notified_at AS notified_at
       FROM "organization" o
       LEFT JOIN "organization_credit_notification" n
              ON n.organization = o.id AND n.owns_credit_notification_for__feature = (SELECT id FROM f)
       LEFT JOIN "billing_account" ba ON ba.organization = o.id
      WHERE n.id IS NOT NULL OR EXISTS (
              SELECT 1 FROM "credit_bundle" b WHERE b.belongs_to__organization = o.id AND b.is_for__feature = (SELECT id FROM f)
                 AND b.payment_status IN ('paid', 'complimentary', 'manually invoiced'))`,
    [feature, at],
  );
  return rows.map((row) => ({
    ...row,
    organization: Number(row.organization),
    balance: Number(row.balance),
    threshold: row.threshold === null ? null : Number(row.threshold),
    devices: Number(row.devices),
  }));
}

/** Records (a date) or clears (null) that the administrators were told the balance is low. */
export async function setCreditLowNotified(db: Db, organization: number, at: Date | null) {
  await db.query(
    `INSERT INTO "billing_account" (organization, credit_low_notified_at) VALUES ($1, $2)
     ON CONFLICT (organization) DO UPDATE SET credit_low_notified_at = $2`,
    [organization, at],
  );
}

/** The e-mail addresses of the organization's administrators. */
export async function administratorEmails(db: Db, organization: number): Promise<string[]> {
  const { rows } = await db.query<{ email: string }>(
    `SELECT u.email FROM "organization_membership" m JOIN "organization_membership_role" r ON r.id = m.organization_membership_role
       JOIN "user" u ON u.id = m."user"
      WHERE m.is_member_of__organization = $1 AND r.name = 'administrator' AND u.email IS NOT NULL ORDER BY u.id`,
    [organization],
  );
  return rows.map((row) => row.email);
}

// Adjustments: amounts the next invoice states as lines (prorations, credit carried over).

export type Adjustment = { id: number; kind: string; description: string; amount_in_cents: number };

/** Adjustments no invoice carries and no refund settled yet, oldest first, locked until the transaction ends. */
export async function pendingAdjustments(db: Db, organization: number, lock = false): Promise<Adjustment[]> {
  const { rows } = await db.query<Adjustment>(
    `SELECT id, kind, description, amount_in_cents FROM "billing_adjustment"
      WHERE organization = $1 AND invoice IS NULL AND settled_at IS NULL ORDER BY id${lock ? " FOR UPDATE" : ""}`,
    [organization],
  );
  return rows.map((row) => ({ ...row, id: Number(row.id), amount_in_cents: Number(row.amount_in_cents) }));
}

export async function addAdjustment(
  db: Db,
  organization: number,
  adjustment: Pick<Adjustment, "kind" | "description" | "amount_in_cents">,
) {
  await db.query(
    `INSERT INTO "billing_adjustment" (organization, kind, description, amount_in_cents) VALUES ($1, $2, $3, $4)`,
    [organization, adjustment.kind, adjustment.description, adjustment.amount_in_cents],
  );
}

export async function markAdjustmentsInvoiced(db: Db, ids: readonly number[], invoice: number) {
  if (ids.length === 0) return;
  await db.query(`UPDATE "billing_adjustment" SET invoice = $2 WHERE id = ANY($1::int[])`, [[...ids], invoice]);
}

/** Adjustments settled without an invoice (leaving for the free plan), by the refund when there was one. */
export async function settleAdjustments(db: Db, ids: readonly number[], refund: number | null, at: Date) {
  if (ids.length === 0) return;
  await db.query(`UPDATE "billing_adjustment" SET settled_at = $2, refund = $3 WHERE id = ANY($1::int[])`, [
    [...ids],
    at,
    refund,
  ]);
}

// Refunds: money sent back through the provider, each against the paid invoice it comes from.

/** Paid invoices with a provider payment, newest first, with what is left to refund of each. */
export async function refundableInvoices(db: Db, organization: number) {
  const { rows } = await db.query<{ id: number; payment_reference: string; refundable_in_cents: number }>(
    `SELECT i.id, i.payment_reference,
            i.total_in_cents - COALESCE((SELECT sum(r.amount_in_cents) FROM "billing_refund" r WHERE r.invoice = i.id), 0)
              AS refundable_in_cents
       FROM "invoice" i
      WHERE i.organization = $1 AND i.state = 'paid' AND i.payment_reference IS NOT NULL AND i.total_in_cents > 0
      ORDER BY i.id DESC`,
    [organization],
  );
  return rows
    .map((row) => ({ ...row, id: Number(row.id), refundable_in_cents: Number(row.refundable_in_cents) }))
    .filter((row) => row.refundable_in_cents > 0);
}

export async function recordRefund(
  db: Db,
  organization: number,
  refund: { invoice: number; amount: number; reference: string; at: Date },
): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO "billing_refund" (organization, invoice, amount_in_cents, reference, created_at)
     VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [organization, refund.invoice, refund.amount, refund.reference, refund.at],
  );
  return Number(rows[0]?.id);
}

/** Refunds of the organization, newest first (the billing page lists them with the invoices). */
export async function refundsOf(db: Db, organization: number) {
  const { rows } = await db.query<{ amount_in_cents: number; created_at: Date; invoice_number: string }>(
    `SELECT r.amount_in_cents, r.created_at, i.invoice_number FROM "billing_refund" r
       JOIN "invoice" i ON i.id = r.invoice WHERE r.organization = $1 ORDER BY r.id DESC`,
    [organization],
  );
  return rows.map((row) => ({ ...row, amount_in_cents: Number(row.amount_in_cents) }));
}
