import type { BillingCycle } from "./billing.ts";

/**
 * Billing periods and plan changes within them (docs/billing.md "Prorations"). Money is in whole
 * cents; days are UTC calendar days.
 *
 * A period is invoiced at its start at its plan's price. A change within it credits the unused
 * days of the plan in force (never more than was paid for them) and charges the new plan for the
 * rest of that period only; the new plan's own cycle starts when the period ends.
 *
 * The price of days `a`..`b` of a period for a plan is its share of its cycle price up to day `b`
 * minus its share up to day `a`, each rounded to the cent, where the plan's cycle is counted from
 * the period's start. So the days of a whole cycle add up to exactly its price, and whatever a
 * plan is credited for days is exactly what it was charged for them.
 */

const DAY_MS = 86_400_000;

/** Adds whole months, keeping the day of the month where the target month has it (Jan 31 + 1 month = Feb 28). */
export function addMonths(date: Date, months: number): Date {
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const result = new Date(date);
  result.setUTCFullYear(year, month, Math.min(date.getUTCDate(), lastDay));
  return result;
}

export const cycleMonths = (cycle: BillingCycle) => (cycle === "annual" ? 12 : 1);

/** The end of one cycle starting at `start`. */
export const cycleEnd = (start: Date, cycle: BillingCycle) => addMonths(start, cycleMonths(cycle));

/**
 * The billing period of a subscription anchored at `anchor` (its first period's start) that
 * `at` falls in: the anchor plus whole cycles, counted from the anchor so that month ends do
 * not drift (Jan 31, Feb 28, Mar 31, …).
 */
export function billingPeriodAt(anchor: Date, cycle: BillingCycle, at: Date): { start: Date; end: Date } {
  const step = cycleMonths(cycle);
  let index = 0;
  while (addMonths(anchor, (index + 1) * step) <= at) index += 1;
  return { start: addMonths(anchor, index * step), end: addMonths(anchor, (index + 1) * step) };
}

const utcDay = (date: Date) => Math.floor(date.getTime() / DAY_MS);

/** Calendar days from `from` to `to` (UTC): a change on a period's first day is day 0. */
export const daysBetween = (from: Date, to: Date) => utcDay(to) - utcDay(from);

/** A plan as billed: its name for texts, its cycle and its price per cycle in cents. */
export type PricedPlan = { title: string; cycle: BillingCycle; price: number };

/** What a plan costs for days `fromDay`..`toDay` of a period starting at `periodStart`. */
export function priceOfDays(plan: PricedPlan, periodStart: Date, fromDay: number, toDay: number): number {
  const cycleDays = daysBetween(periodStart, cycleEnd(periodStart, plan.cycle));
  const share = (day: number) => Math.round((plan.price * day) / cycleDays);
  return share(toDay) - share(fromDay);
}

/** One line a plan change adds to the next invoice. */
export type PlanChangeAdjustment = {
  kind: "unused_time" | "remaining_time";
  description: string;
  /** Negative for a credit. */
  amount_in_cents: number;
};

const cycleName = (cycle: BillingCycle) => (cycle === "annual" ? "annual" : "monthly");

/** "Nov 29, 2026": a day in invoice texts, in UTC as billing counts days. */
export function invoiceDay(date: Date): string {
  return new Intl.DateTimeFormat("en-US", { timeZone: "UTC", month: "short", day: "numeric", year: "numeric" }).format(
    date,
  );
}

/** "Nov 29, 2026 – Dec 28, 2026": the days `fromDay`..`toDay` of a period, the last one included. */
export function dayRange(periodStart: Date, fromDay: number, toDay: number): string {
  const first = new Date(periodStart.getTime() + fromDay * DAY_MS);
  const last = new Date(periodStart.getTime() + (toDay - 1) * DAY_MS);
  return fromDay === toDay - 1 ? invoiceDay(first) : `${invoiceDay(first)} – ${invoiceDay(last)}`;
}

/**
 * The adjustments of changing from `from` to `to` at `at` within the paid period `period`: a
 * credit for the unused days of `from` (from the day of the change to the period's end) and a
 * charge for `to` over the same days; none for a free plan's side or a change after the period.
 */
export function planChangeAdjustments(
  period: { start: Date; end: Date },
  from: PricedPlan,
  to: PricedPlan,
  at: Date,
): PlanChangeAdjustment[] {
  const days = daysBetween(period.start, period.end);
  const day = Math.min(days, Math.max(0, daysBetween(period.start, at)));
  if (day >= days) return [];
  const range = dayRange(period.start, day, days);
  const adjustments: PlanChangeAdjustment[] = [];
  const credit = priceOfDays(from, period.start, day, days);
  if (credit > 0) {
    adjustments.push({
      kind: "unused_time",
      description: `Unused time on ${from.title} (${cycleName(from.cycle)}), ${range}`,
      amount_in_cents: -credit,
    });
  }
  const charge = priceOfDays(to, period.start, day, days);
  if (charge > 0) {
    adjustments.push({
      kind: "remaining_time",
      description: `Remaining time on ${to.title} (${cycleName(to.cycle)}), ${range}`,
      amount_in_cents: charge,
    });
  }
  return adjustments;
}
