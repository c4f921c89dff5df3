import { FREE_PLAN_DEVICE_ALLOWANCE, planChangeType, tierOf } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import type { PaymentProvider } from "./provider.ts";
import {
  createInvoice,
  currentSubscription,
  type InvoiceLine,
  type InvoiceRow,
  paymentMethodOf,
  planAddonPrices,
  planByCode,
  planIncludes,
  type Subscription,
  switchPlan,
  usageOf,
} from "./queries.ts";

type Db = Pick<Queryable, "query">;

const priceOf = (subscription: Pick<Subscription, "plan" | "cycle">) =>
  subscription.cycle === "annual" ? subscription.plan.annual_price : subscription.plan.monthly_price;

/** The end of the subscription's current billing period: whole months or years from its start. */
export function periodEnd(subscription: Pick<Subscription, "starts_on" | "cycle">, now = new Date()): Date {
  const step = subscription.cycle === "annual" ? 12 : 1;
  const end = new Date(subscription.starts_on);
  while (end <= now) end.setUTCMonth(end.getUTCMonth() + step);
  return end;
}

/**
 * The plan as balena-sdk's `billing.getPlan` answers it: the plan, its cycle, the current
 * period's end, and the charges (the plan's price, and devices beyond those it includes at the
 * add-on's price, per month).
 */
export async function planInfo(db: Db, organization: number, now = new Date()) {
  const subscription = await currentSubscription(db, organization);
  const { plan } = subscription;
  const [includes, prices, usage] = await Promise.all([
    planIncludes(db, plan.id),
    planAddonPrices(db, plan.id),
    usageOf(db, organization),
  ]);
  const charges = [
    {
      itemType: "plan",
      name: plan.title,
      code: plan.billing_code,
      unitCostCents: String(priceOf(subscription)),
      quantity: "1",
    },
  ];
  const extraDevices = Math.max(0, (usage["device:microservices"] ?? 0) - (includes.get("device:microservices") ?? 0));
  const devicePrice = prices.get("device:microservices");
  if (extraDevices > 0 && devicePrice !== undefined) {
    charges.push({
      itemType: "addon",
      name: "Additional devices",
      code: "device:microservices",
      unitCostCents: String(devicePrice),
      quantity: String(extraDevices),
    });
  }
  const total = charges.reduce((sum, charge) => sum + Number(charge.unitCostCents) * Number(charge.quantity), 0);
  const support = await supportOf(db, plan.id);
  return {
    name: plan.title,
    title: plan.title,
    code: plan.billing_code,
    tier: tierOf(plan.billing_code),
    intervalUnit: "month",
    intervalLength: subscription.cycle === "annual" ? "12" : "1",
    currentPeriodEndDate: periodEnd(subscription, now).toISOString(),
    billing: { currency: "USD", totalCostCents: String(total), charges },
    support: { name: support.slug, title: support.title },
  };
}

async function supportOf(db: Db, plan: number) {
  const { rows } = await db.query<{ slug: string; title: string; includes_private_support: boolean }>(
    `SELECT t.slug, t.title, t.includes_private_support FROM "plan_feature" pf
       JOIN "support_feature" sf ON sf.feature = pf.feature JOIN "support_tier" t ON t.id = sf.support_tier
      WHERE pf.plan = $1 ORDER BY t.includes_private_support DESC LIMIT 1`,
    [plan],
  );
  return rows[0] ?? { slug: "community", title: "Community", includes_private_support: false };
}

/** `GET /billing/v1/account/{org}/can-access-support`: the plan's support tier includes private support. */
export async function canAccessSupport(db: Db, organization: number): Promise<boolean> {
  const { plan } = await currentSubscription(db, organization);
  return (await supportOf(db, plan.id)).includes_private_support;
}

export type PlanChange = { tier: string; cycle: "monthly" | "annual"; planChangeReason?: string | undefined };

/**
 * Changes the organization's plan (spec 3 §4 "Plan change"): to a self-serve plan only, a paid
 * one only with a payment method, the free plan only within its device allowance. A paid plan is
 * invoiced at once for its first period and charged with the provider; the invoice is returned.
 */
export async function changePlan(
  db: Db,
  provider: PaymentProvider,
  organization: number,
  change: PlanChange,
  now = new Date(),
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
  if (paid && !(await paymentMethodOf(db, organization))) {
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
  await switchPlan(db, organization, target.id, change.cycle, change.planChangeReason);
  if (!paid) return undefined;
  const price = change.cycle === "annual" ? target.annual_price : target.monthly_price;
  const end = periodEnd({ starts_on: now, cycle: change.cycle }, now);
  const lines: InvoiceLine[] = [
    {
      description: `${target.title} plan, ${change.cycle === "annual" ? "annual" : "monthly"} (${now.toISOString().slice(0, 10)} – ${end.toISOString().slice(0, 10)})`,
      quantity: 1,
      unit_cost_in_cents: price,
      amount_in_cents: price,
    },
  ];
  const charge = await provider.charge(organization, price, lines[0]?.description ?? "");
  return createInvoice(db, organization, {
    state: charge.status === "paid" ? "paid" : "failed",
    lines,
    periodStart: now,
    periodEnd: end,
    dueOn: now,
  });
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
