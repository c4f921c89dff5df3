import { SEAT_ROLES, type TaxId } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
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
};

export type InvoiceRow = {
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
};

const INVOICE_COLUMNS = `uuid, invoice_number, state, currency, subtotal_in_cents, total_in_cents, lines, period_start,
  period_end, created_at, due_on, closed_at`;

/** A new invoice, numbered `INV-000042` from its id; undefined when its period was already invoiced. */
export async function createInvoice(
  db: Db,
  organization: number,
  values: { state: string; lines: InvoiceLine[]; periodStart: Date; periodEnd: Date; dueOn: Date },
): Promise<InvoiceRow | undefined> {
  const total = values.lines.reduce((sum, line) => sum + line.amount_in_cents, 0);
  const { rows } = await db.query<InvoiceRow>(
    `WITH n AS (SELECT nextval(pg_get_serial_sequence('"invoice"', 'id')) AS id)
     INSERT INTO "invoice" (id, uuid, organization, invoice_number, state, subtotal_in_cents, total_in_cents, lines,
                            period_start, period_end, due_on, closed_at)
     SELECT n.id, gen_random_uuid()::text, $1, 'INV-' || lpad(n.id::text, 6, '0'), $2, $3, $3, $4::jsonb, $5, $6, $7,
            CASE WHEN $2 = 'paid' THEN now() END
       FROM n
     ON CONFLICT (organization, period_start) DO NOTHING
     RETURNING ${INVOICE_COLUMNS}`,
    [
      organization,
      values.state,
      total,
      JSON.stringify(values.lines),
      values.periodStart,
      values.periodEnd,
      values.dueOn,
    ],
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

export async function markInvoicePaid(db: Db, organization: number, number: string) {
  await db.query(
    `UPDATE "invoice" SET state = 'paid', closed_at = now() WHERE organization = $1 AND invoice_number = $2`,
    [organization, number],
  );
}

/** Paid subscriptions open now, with the end of the last period invoiced since they started. */
export async function paidSubscriptions(db: Db) {
  const { rows } = await db.query<{
    organization: number;
    starts_on: Date;
    billing_cycle: string;
    invoiced_until: Date | null;
    title: string;
    monthly_price: number;
    annual_price: number;
  }>(
    `SELECT s.is_for__organization AS organization, s.starts_on__date AS starts_on, s.billing_cycle,
            (SELECT max(i.period_end) FROM "invoice" i
              WHERE i.organization = s.is_for__organization AND i.period_start >= s.starts_on__date) AS invoiced_until,
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
