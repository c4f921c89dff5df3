import {
  billingPeriodAt,
  CREDIT_FEATURE_SLUG,
  defaultCreditThreshold,
  FREE_PLAN_DEVICE_ALLOWANCE,
  FREEZE_DAYS,
  formatDollars,
  invoiceDay,
  invoiceTax,
  planChangeAdjustments,
  planChangeType,
  taxAmount,
  tierOf,
} from "@flotilla/domain";
import type { Database, Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import type { Mailer } from "../mail/mailer.ts";
import { creditLowMail } from "../mail/templates.ts";
import { invoicePdf } from "./invoice-pdf.ts";
import { type BillingIssuer, DEFAULT_ISSUER } from "./issuer.ts";
import { type BillingNotice, billingRecipients, claimDueNotices, noticeMail } from "./notices.ts";
import type { PaymentProvider } from "./provider.ts";
import {
  type Adjustment,
  accountOf,
  addAdjustment,
  administratorEmails,
  consumeCredits,
  createInvoice,
  creditThresholds,
  currentSubscription,
  type InvoiceLine,
  type InvoiceRow,
  invoiceByNumber,
  invoicedPeriodAt,
  isInvoiced,
  latestCreditConsumption,
  markAdjustmentsInvoiced,
  markInvoicePaid,
  type PaymentMethodRow,
  paidSubscriptions,
  paymentMethodOf,
  pendingAdjustments,
  planAddonPrices,
  planByCode,
  planIncludes,
  recordFailedCharge,
  recordRefund,
  refundableInvoices,
  type Subscription,
  setCreditLowNotified,
  settleAdjustments,
  spendableCreditBundles,
  switchPlan,
  unpaidInvoices,
  updatePastDue,
  usageOf,
} from "./queries.ts";

type Db = Pick<Queryable, "query">;

const priceOf = (subscription: Pick<Subscription, "plan" | "cycle">) =>
  subscription.cycle === "annual" ? subscription.plan.annual_price : subscription.plan.monthly_price;

/** The end of the subscription's current billing period: whole months or years from its start. */
export function periodEnd(subscription: Pick<Subscription, "starts_on" | "cycle">, now = new Date()): Date {
  return billingPeriodAt(subscription.starts_on, subscription.cycle, now).end;
}

/**
 * The plan as balena-sdk's `billing.getPlan` answers it: the plan, its cycle, the current
 * period's end (the next bill's date), and the next bill's charges: the plan's price, this
 * month's usage beyond the plan, the credits that will pay for extra devices, and the
 * adjustments (prorations) it will carry.
 */
export async function planInfo(db: Db, organization: number, now = new Date()) {
  const subscription = await currentSubscription(db, organization);
  const { plan } = subscription;
  const planLine: InvoiceLine = {
    code: plan.billing_code,
    description: plan.title,
    quantity: 1,
    unit_cost_in_cents: priceOf(subscription),
    amount_in_cents: priceOf(subscription),
  };
  const usage = await usageLines(db, organization, plan.id, 1);
  const bill = await completeBill(db, organization, [planLine, ...usage], { months: 1, at: now, lock: false });
  const itemType = (line: InvoiceLine) =>
    line === planLine
      ? "plan"
      : line.code?.startsWith("credit:")
        ? "credit"
        : usage.includes(line)
          ? "addon"
          : line.code === "tax"
            ? "tax"
            : "adjustment";
  const charges = bill.lines.map((line, index) => ({
    itemType: itemType(line),
    name: line.description,
    // Adjustments are one row each (the dashboard keys rows by item type and code).
    code: itemType(line) === "adjustment" ? `${line.code}-${index}` : (line.code ?? ""),
    unitCostCents: String(line.unit_cost_in_cents),
    quantity: String(line.quantity),
  }));
  // The add-on plan (spec 3 §3 "addonPlan (with addOns and its own billing)"): what is billed on
  // top of the plan this period (devices and seats beyond what it includes), with its own total.
  const addOns = charges.filter((charge) => charge.itemType === "addon");
  const addonPlan = {
    code: `${plan.billing_code}-addons`,
    title: `${plan.title} add-ons`,
    addOns: addOns.map(({ name, code, quantity, unitCostCents }) => ({ name, code, quantity, unitCostCents })),
    billing: {
      currency: "USD",
      totalCostCents: String(
        addOns.reduce((sum, charge) => sum + Number(charge.unitCostCents) * Number(charge.quantity), 0),
      ),
      charges: addOns,
    },
  };
  const support = await supportOf(db, plan.id);
  // A plan changed mid-period keeps the period already invoiced: the next bill is at its end.
  const invoiced = plan.billing_code === "free" ? undefined : await invoicedPeriodAt(db, organization, now);
  return {
    name: plan.title,
    title: plan.title,
    code: plan.billing_code,
    tier: tierOf(plan.billing_code),
    intervalUnit: "month",
    intervalLength: subscription.cycle === "annual" ? "12" : "1",
    currentPeriodEndDate: (invoiced?.end ?? periodEnd(subscription, now)).toISOString(),
    billing: { currency: "USD", totalCostCents: String(bill.total), charges },
    addonPlan,
    support: { name: support.slug, title: support.title },
  };
}

export type SupportTier = {
  slug: string;
  title: string;
  includes_private_support: boolean;
  includes__SLA: string | null;
};

async function supportOf(db: Db, plan: number): Promise<SupportTier> {
  const { rows } = await db.query<SupportTier>(
    `SELECT t.slug, t.title, t.includes_private_support, t."includes__SLA" FROM "plan_feature" pf
       JOIN "support_feature" sf ON sf.feature = pf.feature JOIN "support_tier" t ON t.id = sf.support_tier
      WHERE pf.plan = $1 ORDER BY t.includes_private_support DESC LIMIT 1`,
    [plan],
  );
  return rows[0] ?? { slug: "community", title: "Community", includes_private_support: false, includes__SLA: null };
}

/**
 * `GET /billing/v1/account/{org}/usage` (spec 3 §3 "Billing usage"): current and peak counts by
 * item (peak is the current count: usage is not sampled over the period yet), the overage beyond
 * the plan, this month's charges for it, and the credits the current period's invoice (the latest)
 * spent on it, by item.
 */
export async function usageReport(db: Db, organization: number) {
  const { plan } = await currentSubscription(db, organization);
  const [usage, lines, creditConsumption, includes, prices] = await Promise.all([
    usageOf(db, organization),
    usageLines(db, organization, plan.id, 1),
    latestCreditConsumption(db, organization),
    planIncludes(db, plan.id),
    planAddonPrices(db, plan.id),
  ]);
  // What is billed beyond the plan: the items of the usage lines, by quantity and by amount.
  const overage = Object.fromEntries(lines.map((line) => [line.code ?? "", line.quantity]));
  const charges = Object.fromEntries(lines.map((line) => [line.code ?? "", line.amount_in_cents]));
  // The plan's add-ons (devices beyond the plan, seats per paid role): price, included, used, billed.
  const addons = [...prices].map(([item, price]) => {
    const included = includes.get(item) ?? 0;
    const used = usage[item] ?? 0;
    const billed = Math.max(0, used - included);
    return { item, unit_price_cents: price, included, used, billed, amount_cents: billed * price };
  });
  return { currentUsage: usage, peakUsage: usage, overage, charges, creditConsumption, addons };
}

/** `GET /billing/v1/account/{org}/can-access-support`: the plan's support tier includes private support. */
export async function canAccessSupport(db: Db, organization: number): Promise<boolean> {
  return (await supportTierOf(db, organization)).includes_private_support;
}

/** The support tier of the organization's plan (spec 3 §3 support_feature); community when it has none. */
export async function supportTierOf(db: Db, organization: number): Promise<SupportTier> {
  const { plan } = await currentSubscription(db, organization);
  return supportOf(db, plan.id);
}

export type PlanChange = { tier: string; cycle: "monthly" | "annual"; planChangeReason?: string | undefined };

/**
 * Changes the organization's plan (spec 3 §4 "Plan change"): to a self-serve plan only, a paid
 * one only with a payment method, the free plan only within its device allowance.
 *
 * From the free plan, the paid plan is invoiced at once for its first period and charged with the
 * provider; the invoice is returned. A change within a period already paid (upgrade, downgrade,
 * cycle change, or cancelling to free) keeps that period's dates and bills nothing now: the
 * difference for the rest of the period, (new price − old price) × the fraction left, is recorded
 * as a proration and stated on the next invoice. This is the simplest design that is correct for
 * every kind of change, with one invoice per period and no refunds through the provider.
 */
export async function changePlan(
  db: Db,
  provider: PaymentProvider,
  organization: number,
  change: PlanChange,
  now = new Date(),
  issuer: BillingIssuer = DEFAULT_ISSUER,
): Promise<InvoiceRow | undefined> {
  const current = await currentSubscription(db, organization);
  const target = await planByCode(db, change.tier);
  if (!target || target.is_legacy) throw new FlotillaError("bad_request", `tier: there is no plan "${change.tier}"`);
  // Tiers rank by price (the catalogue's order): no list needed.
  const type = planChangeType({ plan: current.plan, cycle: current.cycle }, { plan: target, cycle: change.cycle }, []);
  if (type === "no_change") throw new FlotillaError("bad_request", "This is already the organization's plan.");
  if (type === "contact_sales") {
    throw new FlotillaError("bad_request", "This plan change needs our sales team: contact sales to change it.");
  }
  const paid = target.billing_code !== "free";
  const method = await paymentMethodOf(db, organization);
  if (paid && !method) {
    throw new FlotillaError("bad_request", "Add a payment method before moving to a paid plan.");
  }
  if (!paid) {
    const devices = (await usageOf(db, organization))["device:microservices"] ?? 0;
    if (devices > FREE_PLAN_DEVICE_ALLOWANCE) {
      throw new FlotillaError(
        "bad_request",
        `The free plan allows ${FREE_PLAN_DEVICE_ALLOWANCE} devices and this organization has ${devices}: remove devices or contact sales.`,
      );
    }
  }
  const paidUpTo = current.plan.billing_code === "free" ? undefined : await invoicedPeriodAt(db, organization, now);
  await switchPlan(db, organization, target.id, change.cycle, change.planChangeReason);
  if (paidUpTo) {
    // Within a paid period: the unused days of the plan in force are credited and the new plan
    // charged for the same days, on the next invoice (packages/domain prorations.ts).
    const to = {
      title: target.title,
      cycle: change.cycle,
      price: paid ? priceOf({ plan: target, cycle: change.cycle }) : 0,
    };
    for (const adjustment of planChangeAdjustments(paidUpTo, pricedPlan(current), to, now)) {
      await addAdjustment(db, organization, adjustment);
    }
    // On the free plan there is no next invoice: what is owed is invoiced now, a credit refunded.
    if (!paid) return settleOnLeaving(db, provider, issuer, organization, now);
    return undefined;
  }
  if (!paid || !method) return undefined;
  const price = change.cycle === "annual" ? target.annual_price : target.monthly_price;
  return issueInvoice(db, provider, issuer, organization, method, {
    title: target.title,
    cycle: change.cycle,
    price,
    start: now,
    issuedAt: now,
  });
}

const pricedPlan = (subscription: Pick<Subscription, "plan" | "cycle">) => ({
  title: subscription.plan.title,
  cycle: subscription.cycle,
  price: priceOf(subscription),
});

/**
 * Leaving for the free plan: the pending adjustments are settled at once. A credit (the unused
 * part of what was paid, net of anything still owed) is refunded to the payment method through
 * the provider, from the latest paid invoices; an amount still owed is invoiced and charged now.
 */
async function settleOnLeaving(
  db: Db,
  provider: PaymentProvider,
  issuer: BillingIssuer,
  organization: number,
  now: Date,
): Promise<InvoiceRow | undefined> {
  const pending = await pendingAdjustments(db, organization, true);
  const net = pending.reduce((sum, adjustment) => sum + adjustment.amount_in_cents, 0);
  const method = await paymentMethodOf(db, organization);
  if (net > 0 && method) {
    return issueInvoice(db, provider, issuer, organization, method, {
      title: "Final",
      cycle: "monthly",
      price: 0,
      start: now,
      issuedAt: now,
      description: `Final invoice on leaving for the free plan (${invoiceDay(now)})`,
    });
  }
  if (net < 0) await refundCredit(db, provider, organization, -net, pending, now);
  return undefined;
}

/** Refunds `amount` from the organization's latest paid invoices, and marks the adjustments it settles. */
async function refundCredit(
  db: Db,
  provider: PaymentProvider,
  organization: number,
  amount: number,
  settles: readonly Adjustment[],
  now: Date,
) {
  let left = amount;
  let refund: number | null = null;
  for (const invoice of await refundableInvoices(db, organization)) {
    if (left === 0) break;
    const part = Math.min(left, invoice.refundable_in_cents);
    // Named by what it settles: a retry of this change refunds nothing twice.
    const key = `refund-${organization}-${invoice.id}-${settles.map((adjustment) => adjustment.id).join(".")}`;
    const outcome = await provider.refund(
      db,
      invoice.payment_reference,
      part,
      "Unused time on leaving for the free plan",
      key,
    );
    if (outcome.status !== "refunded") continue;
    refund = await recordRefund(db, organization, {
      invoice: invoice.id,
      amount: part,
      reference: outcome.reference,
      at: now,
    });
    left -= part;
  }
  await settleAdjustments(
    db,
    settles.map((adjustment) => adjustment.id),
    refund,
    now,
  );
  if (left > 0) {
    // What could not be refunded stays a credit for a later paid plan, and the plan page says so.
    await addAdjustment(db, organization, {
      kind: "carried_credit",
      description: `Credit kept for a later paid plan (could not be refunded: ${formatDollars(left)})`,
      amount_in_cents: -left,
    });
  }
}

/** How an invoice was paid, as it prints it: "Visa ending in 4242", a test payment said so. */
function paidWith(method: PaymentMethodRow, isTest: boolean): string {
  const what =
    method.type === "card"
      ? `${method.card_type ? method.card_type[0]?.toUpperCase() + method.card_type.slice(1) : "Card"} ending in ${method.last_four}`
      : `Bank account ending in ${method.last_four}`;
  return isTest ? `${what} (a test payment: no money moved)` : what;
}

/**
 * A bill's lines: its charges, then the credits that pay for extra devices (1 credit = 1
 * device-month at the add-on price; oldest-expiring bundles first), then the adjustments not yet
 * billed. A credit larger than the charges is carried to the next bill rather than charged back.
 * Nothing is written: `issueInvoice` records the credits and adjustments it took.
 */
async function completeBill(
  db: Db,
  organization: number,
  charges: InvoiceLine[],
  options: { months: number; at: Date; lock: boolean },
) {
  const lines = [...charges];
  const credits: Array<{ bundle: number; quantity: number }> = [];
  const devices = charges.find((line) => line.code === CREDIT_FEATURE_SLUG);
  if (devices) {
    const needed = devices.quantity * options.months;
    const pricePerCredit = devices.unit_cost_in_cents / options.months;
    let left = needed;
    for (const bundle of await spendableCreditBundles(db, organization, CREDIT_FEATURE_SLUG, options.at)) {
      if (left === 0) break;
      const quantity = Math.min(left, bundle.total_balance);
      credits.push({ bundle: bundle.id, quantity });
      left -= quantity;
    }
    const used = needed - left;
    if (used > 0) {
      lines.push({
        code: `credit:${CREDIT_FEATURE_SLUG}`,
        description: `Credits applied: ${used} ${used === 1 ? "credit" : "credits"} (device-months) from the credit balance`,
        quantity: used,
        unit_cost_in_cents: -pricePerCredit,
        amount_in_cents: -used * pricePerCredit,
      });
    }
  }
  const adjustments = await pendingAdjustments(db, organization, options.lock);
  for (const adjustment of adjustments) {
    lines.push({
      code: adjustment.kind,
      description: adjustment.description,
      quantity: 1,
      unit_cost_in_cents: adjustment.amount_in_cents,
      amount_in_cents: adjustment.amount_in_cents,
    });
  }
  let total = lines.reduce((sum, line) => sum + line.amount_in_cents, 0);
  const carried = total < 0 ? -total : 0;
  if (carried > 0) {
    lines.push({
      code: "carried_credit",
      description: "Credit carried to the next invoice",
      quantity: 1,
      unit_cost_in_cents: carried,
      amount_in_cents: carried,
    });
    total = 0;
  }
  return { lines, total, credits, adjustments: adjustments.map((adjustment) => adjustment.id), carried };
}

/**
 * Invoices one billing period of a plan and charges it: paid, or past due from the period's
 * start when the charge fails. Undefined when the period was invoiced already. Credits it spends
 * and adjustments it carries are recorded with it, in the caller's transaction.
 */
async function issueInvoice(
  db: Db,
  provider: PaymentProvider,
  issuer: BillingIssuer,
  organization: number,
  method: PaymentMethodRow,
  period: {
    title: string;
    cycle: "monthly" | "annual";
    price: number;
    start: Date;
    /** Billing time when it is issued (the test clock's): the invoice's date. */
    issuedAt: Date;
    usage?: InvoiceLine[];
    /** An invoice of adjustments only (leaving for the free plan): its text, no plan line and no period. */
    description?: string;
  },
): Promise<InvoiceRow | undefined> {
  // Checked before charging; the unique (organization, period_start) index stays the guard.
  if (await isInvoiced(db, organization, period.start)) return undefined;
  const end = period.description
    ? period.start
    : periodEnd({ starts_on: period.start, cycle: period.cycle }, period.start);
  const description =
    period.description ??
    `${period.title} plan, ${period.cycle} (${invoiceDay(period.start)} – ${invoiceDay(new Date(end.getTime() - 86_400_000))})`;
  const planLine: InvoiceLine[] = period.description
    ? []
    : [{ description, quantity: 1, unit_cost_in_cents: period.price, amount_in_cents: period.price }];
  const bill = await completeBill(db, organization, [...planLine, ...(period.usage ?? [])], {
    months: period.cycle === "annual" ? 12 : 1,
    at: period.start,
    lock: true,
  });
  const account = await accountOf(db, organization);
  const tax = invoiceTax(
    { country: issuer.country, taxRatePercent: issuer.tax_rate_percent, taxName: issuer.tax_name },
    { country: account.address.country, taxId: account.tax_id },
  );
  const lines = [...bill.lines];
  let total = bill.total;
  if (tax.label) {
    const amount = taxAmount(total, tax.ratePercent);
    lines.push({
      code: "tax",
      description: tax.label,
      quantity: 1,
      unit_cost_in_cents: amount,
      amount_in_cents: amount,
    });
    total += amount;
  }
  // Nothing to charge (credits and adjustments cover it): paid as it is.
  const charge =
    total > 0
      ? await provider.charge(db, organization, method.reference, total, description)
      : { status: "paid" as const, reference: undefined };
  const invoice = await createInvoice(db, organization, {
    state: charge.status === "failed" ? "past_due" : charge.status,
    paymentReference: charge.reference,
    lines,
    periodStart: period.start,
    periodEnd: end,
    dueOn: period.start,
    issuedAt: period.issuedAt,
    seller: issuer,
    paidWith: total > 0 ? paidWith(method, provider.isTest) : null,
    taxNote: tax.note,
    paymentError: charge.status === "failed" ? (charge.error ?? "The payment was declined.") : undefined,
  });
  if (!invoice) return undefined;
  await consumeCredits(db, invoice.id, bill.credits);
  await markAdjustmentsInvoiced(db, bill.adjustments, invoice.id);
  if (bill.carried > 0) {
    await addAdjustment(db, organization, {
      kind: "carried_credit",
      description: `Credit carried over from ${invoice.invoice_number}`,
      amount_in_cents: -bill.carried,
    });
  }
  return invoice;
}

/**
 * What the organization uses beyond its plan, as invoice lines for a period of `months`: devices
 * beyond those included, and member seats of each paid role beyond those included, at the plan's
 * add-on prices per month.
 */
export async function usageLines(db: Db, organization: number, plan: number, months: number): Promise<InvoiceLine[]> {
  const [includes, prices, usage] = await Promise.all([
    planIncludes(db, plan),
    planAddonPrices(db, plan),
    usageOf(db, organization),
  ]);
  const lines: InvoiceLine[] = [];
  for (const [item, used] of Object.entries(usage)) {
    const price = prices.get(item);
    const extra = used - (includes.get(item) ?? 0);
    if (!price || extra <= 0) continue;
    const what =
      item === "device:microservices" ? "Additional devices" : `Additional ${item.slice("member:".length)} seats`;
    lines.push({
      code: item,
      description: `${what}, ${months === 1 ? "1 month" : `${months} months`}`,
      quantity: extra,
      unit_cost_in_cents: price * months,
      amount_in_cents: extra * price * months,
    });
  }
  return lines;
}

/**
 * After a new payment method, or "Pay now": charges the unpaid invoices again, and unfreezes what
 * is paid up. A charge that fails again keeps the invoice past due with the provider's reason
 * (and its own failed-payment mail).
 */
export async function retryUnpaidInvoices(db: Db, provider: PaymentProvider, organization: number, now = new Date()) {
  const method = await paymentMethodOf(db, organization);
  const failed: Array<{ invoice: string; error: string }> = [];
  let paid = 0;
  if (!method) return { paid, failed };
  for (const invoice of await unpaidInvoices(db, organization)) {
    const charge = await provider.charge(
      db,
      organization,
      method.reference,
      invoice.total_in_cents,
      `Invoice ${invoice.invoice_number}`,
    );
    if (charge.status === "paid") {
      await markInvoicePaid(db, organization, invoice.invoice_number, charge.reference, now);
      paid += 1;
    } else if (charge.status === "failed") {
      const error = charge.error ?? "The payment was declined.";
      await recordFailedCharge(db, invoice.id, charge.reference, error);
      failed.push({ invoice: invoice.invoice_number, error });
    }
  }
  await updatePastDue(db, now, FREEZE_DAYS, organization);
  return { paid, failed };
}

/**
 * A payment that ended later (a Stripe webhook): its invoice is paid or past due, its credit
 * bundle paid or failed, and the organization's past-due state follows.
 */
export async function settlePayment(db: Db, reference: string, state: "paid" | "past_due", now = new Date()) {
  const { rows } = await db.query<{ organization: number }>(
    `UPDATE "invoice" SET state = $2, closed_at = CASE WHEN $2 = 'paid' THEN now() END
      WHERE payment_reference = $1 AND state IN ('processing', 'past_due', 'failed', 'open') RETURNING organization`,
    [reference, state],
  );
  await db.query(
    `UPDATE "credit_bundle" SET payment_status = $2 WHERE is_associated_with__invoice_id = $1 AND payment_status = 'processing'`,
    [reference, state === "paid" ? "paid" : "failed"],
  );
  for (const row of rows) await updatePastDue(db, now, FREEZE_DAYS, Number(row.organization));
}

/** Billing time: the wall clock, plus what the test clock was advanced by (built-in provider only). */
export async function billingNow(db: Db, provider: PaymentProvider): Promise<Date> {
  if (!provider.isTest || provider.name !== "built-in") return new Date();
  const { rows } = await db.query<{ seconds: number }>(
    `SELECT advanced_by_seconds AS seconds FROM "billing_test_clock" WHERE id = 1`,
  );
  return new Date(Date.now() + Number(rows[0]?.seconds ?? 0) * 1000);
}

export async function advanceTestClock(db: Db, days: number) {
  await db.query(
    `INSERT INTO "billing_test_clock" (id, advanced_by_seconds) VALUES (1, $1)
     ON CONFLICT (id) DO UPDATE SET advanced_by_seconds = "billing_test_clock".advanced_by_seconds + $1, modified_at = now()`,
    [Math.round(days * 86_400)],
  );
}

/** Any instance may run the billing job; this lock lets one at a time do it. */
const BILLING_JOB_LOCK = 0x62696c6c; // "bill"

/** Where the billing job's e-mails go: the mailer and the dashboard's address for links. */
export type BillingMail = { mailer: Pick<Mailer, "send">; publicUrl: string };

/**
 * The billing job (every minute on every instance, one at a time): invoices each paid
 * subscription's periods as they begin, charging the payment method, then marks organizations
 * past due and frozen by their oldest unpaid invoice, and (given `mail`) tells administrators
 * when a credit balance falls below its threshold. Invoices are unique per period, so a job
 * that runs twice issues nothing twice. `now` is a parameter: tests move this clock.
 */
export async function runBillingJob(
  db: Database,
  provider: PaymentProvider,
  now = new Date(),
  mail?: BillingMail,
  issuer: BillingIssuer = DEFAULT_ISSUER,
) {
  const outgoing: Array<{ to: string; content: ReturnType<typeof creditLowMail> }> = [];
  const result = await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [
      BILLING_JOB_LOCK,
    ]);
    if (!rows[0]?.locked) return { ran: false, invoiced: 0, notices: [] as BillingNotice[] };
    let invoiced = 0;
    for (const subscription of await paidSubscriptions(tx)) {
      const method = await paymentMethodOf(tx, subscription.organization);
      if (!method) continue;
      const cycle = subscription.billing_cycle === "annual" ? "annual" : "monthly";
      let start = new Date(subscription.invoiced_until ?? subscription.starts_on);
      // Catch up on missed periods, a bounded number at a time.
      for (let periods = 0; start <= now && periods < 24; periods += 1) {
        const invoice = await issueInvoice(tx, provider, issuer, subscription.organization, method, {
          title: subscription.title,
          cycle,
          price: Number(cycle === "annual" ? subscription.annual_price : subscription.monthly_price),
          start,
          // Dated when its period began (billing time: the test clock's days when it moved).
          issuedAt: start,
          usage: await usageLines(
            tx,
            subscription.organization,
            Number(subscription.plan),
            cycle === "annual" ? 12 : 1,
          ),
        });
        if (invoice) invoiced += 1;
        start = periodEnd({ starts_on: start, cycle }, start);
      }
    }
    await updatePastDue(tx, now, FREEZE_DAYS);
    if (mail) outgoing.push(...(await lowCreditMails(tx, mail.publicUrl, now)));
    const notices = mail ? await claimDueNotices(tx, now) : [];
    return { ran: true, invoiced, notices };
  });
  // Sent once the state that says so is committed: a job that fails sends nothing.
  if (mail) {
    for (const { to, content } of outgoing) await mail.mailer.send(to, content);
    await sendNotices(db, mail, result.notices, issuer);
  }
  return { ran: result.ran, invoiced: result.invoiced };
}

/** The billing mails claimed by a job, to each recipient; a receipt carries its invoice's PDF. */
async function sendNotices(db: Db, mail: BillingMail, notices: BillingNotice[], issuer: BillingIssuer) {
  for (const notice of notices) {
    const content = noticeMail(mail.publicUrl, notice);
    if (notice.kind === "receipt") {
      const invoice = await invoiceByNumber(db, notice.organization, notice.invoice);
      const { logo, ...seller } = issuer;
      if (invoice?.billed_to) {
        const pdf = await invoicePdf(invoice, { billedTo: invoice.billed_to, seller }, logo);
        content.attachments = [{ filename: `${notice.invoice}.pdf`, content: pdf, contentType: "application/pdf" }];
      }
    }
    for (const to of await billingRecipients(db, notice.organization)) await mail.mailer.send(to, content);
  }
}

/**
 * Low credit balances (spec 3 §4 Credits, §9): an organization whose balance is below its
 * notification threshold (default: twice its device count, when it holds credits) gets one mail
 * to its administrators, and no other until the balance has been at or above the threshold.
 */
async function lowCreditMails(db: Db, publicUrl: string, now: Date) {
  const mails: Array<{ to: string; content: ReturnType<typeof creditLowMail> }> = [];
  for (const org of await creditThresholds(db, CREDIT_FEATURE_SLUG, now)) {
    const threshold = org.threshold ?? defaultCreditThreshold(org.devices);
    const low = org.balance < threshold;
    if (low && !org.notified_at) {
      await setCreditLowNotified(db, org.organization, now);
      const content = creditLowMail(
        publicUrl,
        { id: org.organization, name: org.name },
        { balance: org.balance, threshold },
      );
      for (const to of await administratorEmails(db, org.organization)) mails.push({ to, content });
    } else if (!low && org.notified_at) {
      await setCreditLowNotified(db, org.organization, null);
    }
  }
  return mails;
}

/** An invoice as balena-sdk's `billing.getInvoices` lists it. */
export function invoiceInfo(invoice: InvoiceRow) {
  const date = (value: Date | null) => (value ? new Date(value).toISOString() : "");
  return {
    uuid: invoice.uuid,
    invoice_number: invoice.invoice_number,
    state: invoice.state,
    currency: invoice.currency.toUpperCase(),
    subtotal_in_cents: String(invoice.subtotal_in_cents),
    total_in_cents: String(invoice.total_in_cents),
    created_at: date(invoice.created_at),
    closed_at: date(invoice.closed_at),
    due_on: date(invoice.due_on),
  };
}
