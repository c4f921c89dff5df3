import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addMonths,
  billingPeriodAt,
  cycleEnd,
  daysBetween,
  type PricedPlan,
  planChangeAdjustments,
  priceOfDays,
} from "./prorations.ts";

// The catalogue's self-serve plans (migration 0006), in cents per cycle.
const PLANS = {
  free: { monthly: 0, annual: 0 },
  Prototype: { monthly: 9900, annual: 106920 },
  Pilot: { monthly: 29900, annual: 322920 },
  Production: { monthly: 139900, annual: 1510920 },
} as const;
type Name = keyof typeof PLANS;
const plan = (title: Name, cycle: "monthly" | "annual"): PricedPlan => ({ title, cycle, price: PLANS[title][cycle] });
const day = (iso: string) => new Date(`${iso}T00:00:00Z`);
const at = (start: Date, days: number) => new Date(start.getTime() + days * 86_400_000 + 3_600_000);
const net = (lines: { amount_in_cents: number }[]) => lines.reduce((sum, line) => sum + line.amount_in_cents, 0);

describe("billing periods", () => {
  it("adds months keeping the day where the month has it", () => {
    expect(addMonths(day("2026-01-31"), 1)).toEqual(day("2026-02-28"));
    expect(addMonths(day("2028-01-31"), 1)).toEqual(day("2028-02-29"));
    expect(addMonths(day("2026-11-29"), 12)).toEqual(day("2027-11-29"));
    expect(addMonths(day("2026-12-15"), 1)).toEqual(day("2027-01-15"));
  });

  it("counts periods from the anchor so month ends do not drift", () => {
    expect(billingPeriodAt(day("2026-01-31"), "monthly", day("2026-03-30"))).toEqual({
      start: day("2026-02-28"),
      end: day("2026-03-31"),
    });
    expect(billingPeriodAt(day("2026-11-29"), "annual", day("2027-11-29"))).toEqual({
      start: day("2027-11-29"),
      end: day("2028-11-29"),
    });
  });

  it("prices the days of a whole cycle at exactly its price, for any split", () => {
    const start = day("2026-11-29");
    const days = daysBetween(start, cycleEnd(start, "annual"));
    const pilot = plan("Pilot", "annual");
    expect(priceOfDays(pilot, start, 0, days)).toBe(322920);
    expect(priceOfDays(pilot, start, 0, 100) + priceOfDays(pilot, start, 100, days)).toBe(322920);
  });
});

/**
 * Every change type × the period's cycle × the day of the period it happens on. Amounts by hand:
 * the unused share of the old plan's price, and the new plan's share of its own cycle price for
 * the same days (its cycle counted from the period's start).
 */
describe("plan change adjustments", () => {
  // A monthly period of 30 days and an annual one of 365.
  const monthly = { start: day("2026-11-01"), end: day("2026-12-01") };
  const annual = { start: day("2026-11-01"), end: day("2027-11-01") };
  type Row = [string, typeof monthly, PricedPlan, PricedPlan, number, number, number];
  const rows: Row[] = [
    // change, period, from, to, day of the period, credit, charge
    ["upgrade on the first day", monthly, plan("Prototype", "monthly"), plan("Pilot", "monthly"), 0, -9900, 29900],
    ["upgrade mid-period", monthly, plan("Prototype", "monthly"), plan("Pilot", "monthly"), 15, -4950, 14950],
    ["upgrade on the last day", monthly, plan("Prototype", "monthly"), plan("Pilot", "monthly"), 29, -330, 997],
    ["downgrade mid-period", monthly, plan("Pilot", "monthly"), plan("Prototype", "monthly"), 10, -19933, 6600],
    ["upgrade of an annual plan", annual, plan("Pilot", "annual"), plan("Production", "annual"), 73, -258336, 1208736],
    ["downgrade of an annual plan", annual, plan("Production", "annual"), plan("Pilot", "annual"), 300, -269068, 57506],
    // monthly → annual: the rest of the month at the annual plan's daily price (Nov 2026 + 12 months = 365 days).
    [
      "monthly to annual, first day",
      monthly,
      plan("Prototype", "monthly"),
      plan("Prototype", "annual"),
      0,
      -9900,
      8788,
    ],
    [
      "monthly to annual, mid-period",
      monthly,
      plan("Prototype", "monthly"),
      plan("Prototype", "annual"),
      20,
      -3300,
      2929,
    ],
    // annual → monthly: the rest of the year at the monthly plan's daily price (30 days from Nov 1).
    ["annual to monthly, mid-period", annual, plan("Pilot", "annual"), plan("Pilot", "monthly"), 200, -145978, 164450],
    ["cancel to free, monthly", monthly, plan("Pilot", "monthly"), plan("free", "monthly"), 12, -17940, 0],
    ["cancel to free, annual", annual, plan("Prototype", "annual"), plan("free", "monthly"), 100, -77627, 0],
  ];

  it.each(rows)("%s", (_name, period, from, to, dayOfPeriod, credit, charge) => {
    const lines = planChangeAdjustments(period, from, to, at(period.start, dayOfPeriod));
    expect(lines.find((line) => line.kind === "unused_time")?.amount_in_cents ?? 0).toBe(credit);
    expect(lines.find((line) => line.kind === "remaining_time")?.amount_in_cents ?? 0).toBe(charge);
  });

  it("changes twice in one period: the second credits only what the first charged for the days left", () => {
    const first = planChangeAdjustments(
      monthly,
      plan("Prototype", "monthly"),
      plan("Production", "monthly"),
      at(monthly.start, 5),
    );
    const second = planChangeAdjustments(
      monthly,
      plan("Production", "monthly"),
      plan("Pilot", "monthly"),
      at(monthly.start, 20),
    );
    const charged = first.find((line) => line.kind === "remaining_time")?.amount_in_cents ?? 0;
    const credited = -(second.find((line) => line.kind === "unused_time")?.amount_in_cents ?? 0);
    expect(credited).toBeLessThanOrEqual(charged);
    // Prototype 5 days + Production 15 days + Pilot 10 days, each at its share.
    expect(9900 + net(first) + net(second)).toBe(1650 + 69950 + 9967);
  });

  it("says what each line is for and which days, with no internal codes", () => {
    const lines = planChangeAdjustments(
      monthly,
      plan("Prototype", "monthly"),
      plan("Pilot", "annual"),
      at(monthly.start, 28),
    );
    expect(lines.map((line) => line.description)).toEqual([
      "Unused time on Prototype (monthly), Nov 29, 2026 – Nov 30, 2026",
      "Remaining time on Pilot (annual), Nov 29, 2026 – Nov 30, 2026",
    ]);
    expect(
      planChangeAdjustments(monthly, plan("Pilot", "monthly"), plan("free", "monthly"), at(monthly.start, 29))[0]
        ?.description,
    ).toBe("Unused time on Pilot (monthly), Nov 30, 2026");
  });

  it("adds nothing for a change after the period", () => {
    expect(planChangeAdjustments(monthly, plan("Pilot", "monthly"), plan("Prototype", "monthly"), monthly.end)).toEqual(
      [],
    );
  });
});

/**
 * Over any sequence of changes, what the organization paid (each period's invoice at its plan's
 * price, plus every change's adjustments, with a move to free refunding the credit) equals, to
 * the cent, the sum over the days each plan was in force of its daily price — each plan's share
 * of its cycle price over the days it ran in each period.
 */
describe("what an organization pays over any sequence of plan changes", () => {
  const paid = Object.keys(PLANS).filter((name) => name !== "free") as Name[];
  const choice = fc.record({
    title: fc.constantFrom(...paid, "free" as Name),
    cycle: fc.constantFrom("monthly" as const, "annual" as const),
  });
  const change = fc.record({ afterDays: fc.integer({ min: 0, max: 400 }), to: choice });

  it("equals the days each plan was in force times its daily price", () => {
    fc.assert(
      fc.property(
        fc.record({
          startDay: fc.integer({ min: 0, max: 1500 }),
          first: choice,
          changes: fc.array(change, { maxLength: 8 }),
        }),
        ({ startDay, first, changes }) => {
          const origin = new Date(Date.UTC(2025, 0, 1) + startDay * 86_400_000);
          let now = origin;
          let inForce: PricedPlan = plan(first.title, first.cycle);
          // The paid period in force, and when the plan in force began within it.
          let period: { start: Date; end: Date } | undefined;
          let since = 0;
          let payments = 0;
          let expected = 0;
          // The same days at the exact daily price (no rounding), and how many shares were taken.
          let exact = 0;
          let segments = 0;
          const ran = (p: PricedPlan, start: Date, from: number, to: number) => {
            expected += priceOfDays(p, start, from, to);
            exact += (p.price * (to - from)) / daysBetween(start, cycleEnd(start, p.cycle));
            segments += 1;
          };
          const billUntil = (until: Date) => {
            // Periods that end before `until`: the plan in force ran to their end.
            while (period && period.end <= until) {
              ran(inForce, period.start, since, daysBetween(period.start, period.end));
              period = { start: period.end, end: cycleEnd(period.end, inForce.cycle) };
              since = 0;
              payments += inForce.price; // the next period's invoice
            }
          };
          if (inForce.price > 0) {
            period = { start: now, end: cycleEnd(now, inForce.cycle) };
            payments += inForce.price;
          }
          for (const step of changes) {
            now = new Date(now.getTime() + step.afterDays * 86_400_000);
            billUntil(now);
            const next = plan(step.to.title, step.to.cycle);
            if (next.title === inForce.title && next.cycle === inForce.cycle) continue;
            if (!period) {
              // From free: the new plan is invoiced at once for its first period.
              if (next.price > 0) {
                period = { start: now, end: cycleEnd(now, next.cycle) };
                since = 0;
                payments += next.price;
              }
              inForce = next;
              continue;
            }
            const dayOfPeriod = daysBetween(period.start, now);
            ran(inForce, period.start, since, dayOfPeriod);
            payments += net(planChangeAdjustments(period, inForce, next, now));
            since = dayOfPeriod;
            inForce = next;
            if (next.price === 0) {
              // To free: the period ends here, its credit refunded.
              period = undefined;
            }
          }
          // Close the books at the end of the period in force.
          if (period) ran(inForce, period.start, since, daysBetween(period.start, period.end));
          expect(payments).toBe(expected);
          // Each share is the exact daily price times the days, rounded once at each end.
          expect(Math.abs(payments - exact)).toBeLessThanOrEqual(segments);
        },
      ),
      { numRuns: 500 },
    );
  });
});
