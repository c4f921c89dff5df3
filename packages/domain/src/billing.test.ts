import { describe, expect, it } from "vitest";
import {
  BILLING_PLAN_CACHE_MS,
  type BillingPlan,
  CREDIT_BILLING_CODES,
  CREDIT_FEATURE_SLUG,
  CREDIT_MONTHS_DEFAULT,
  CREDIT_MONTHS_MAX,
  CREDITS_CONTACT_SALES_ABOVE_CENTS,
  CREDITS_MAX,
  CYCLE_INTERVAL_LENGTH,
  canApplyCreditThreshold,
  canDownloadInvoice,
  canPurchaseCredits,
  cardLastFour,
  cardTypeOf,
  cardTypeOfNumber,
  creditBalance,
  creditBalanceCounts,
  creditExpiry,
  creditPurchaseNeedsContactSales,
  creditsAvailableFor,
  creditsNeeded,
  cycleOfIntervalLength,
  defaultCreditThreshold,
  FREE_PLAN_CODE,
  FREEZE_DAYS,
  formatDollars,
  formatDollarsPerMonth,
  freePlanBlocked,
  INVOICES_SHOWN,
  includedMembers,
  invoiceStateTone,
  isPlanValidAt,
  isValidCardNumber,
  isValidCvc,
  isValidExpiry,
  latestInvoices,
  MEMBER_PRICES_PER_MONTH_CENTS,
  needsFeedback,
  PAST_DUE_WARNING_DAYS,
  PLAN_CHANGE_DEBOUNCE_MS,
  PURCHASE_HISTORY_PAGE_SIZE,
  padCardMonth,
  parseCreditInput,
  pastDueState,
  planChangeType,
  pricePerMonth,
  type SeatOffer,
  type SeatUsage,
  seatOffer,
  seatOfferCents,
  seatPrice,
  selfServePlans,
  tierOf,
  validateCreditMonths,
  validateCreditQuantity,
  validateCreditThreshold,
  validateEstimatedDevices,
} from "./index.ts";

const plan = (billing_code: string, monthly_price: number, extra: Partial<BillingPlan> = {}): BillingPlan => ({
  billing_code,
  can_self_serve: true,
  monthly_price,
  annual_price: monthly_price * 10,
  is_legacy: false,
  is_valid_from__date: null,
  is_valid_until__date: null,
  ...extra,
});

const free = plan("free", 0);
const prototype = plan("prototype-v2", 9900);
const pilot = plan("pilot-v2", 29900);
const production = plan("production-v2", 99900);
const enterprise = plan("enterprise-v2", 0, { can_self_serve: false, annual_price: 0 });
const order = [free, prototype, pilot, production, enterprise];

const DAY = 24 * 60 * 60 * 1000;
const NOW = new Date("2026-06-15T12:00:00Z");
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY);

describe("billing constants (spec 3 §9)", () => {
  it("holds the spec's values", () => {
    expect(FREE_PLAN_CODE).toBe("free");
    expect(CYCLE_INTERVAL_LENGTH).toEqual({ monthly: 1, annual: 12 });
    expect([PAST_DUE_WARNING_DAYS, FREEZE_DAYS]).toEqual([30, 60]);
    expect([CREDITS_MAX, CREDIT_MONTHS_MAX, CREDIT_MONTHS_DEFAULT]).toEqual([1_500_000, 120, 12]);
    expect(CREDITS_CONTACT_SALES_ABOVE_CENTS).toBe(100_000_000);
    expect(CREDIT_FEATURE_SLUG).toBe("device:microservices");
    expect([PURCHASE_HISTORY_PAGE_SIZE, INVOICES_SHOWN, PLAN_CHANGE_DEBOUNCE_MS]).toEqual([5, 6, 500]);
    expect(BILLING_PLAN_CACHE_MS).toBe(3_600_000);
  });

  it("prices members per month: observer free, operators $29, developers and administrators $49 (spec 2 §6)", () => {
    expect(MEMBER_PRICES_PER_MONTH_CENTS).toEqual({
      observer: 0,
      "safe-operator": 2900,
      operator: 2900,
      "safe-developer": 4900,
      developer: 4900,
      administrator: 4900,
    });
  });

  it("maps interval lengths to cycles", () => {
    expect(cycleOfIntervalLength(1)).toBe("monthly");
    expect(cycleOfIntervalLength(12)).toBe("annual");
    expect(cycleOfIntervalLength(3)).toBeUndefined();
  });
});

describe("tierOf (spec 3 §9)", () => {
  it.each([
    ["free", "free"],
    ["prototype-v2", "prototype"],
    ["pilot-v2", "pilot"],
    ["production-v10", "production"],
    ["enterprise", "enterprise"],
    ["solo-v1", "solo"],
    ["org", "org"],
    ["custom-v3", "custom"],
    ["Pilot-V2", "pilot"],
    ["25m", "unknown"],
    ["pilot-beta", "unknown"],
    ["", "unknown"],
    [null, "unknown"],
  ])("%j is %s", (code, tier) => {
    expect(tierOf(code)).toBe(tier);
  });
});

describe("planChangeType (spec 3 §4 Plan change)", () => {
  const at = (p: BillingPlan, cycle: "monthly" | "annual" = "monthly") => ({ plan: p, cycle });

  it("is no change for the current plan and cycle, even when it is not self-serve", () => {
    expect(planChangeType(at(pilot), at(pilot), order)).toBe("no_change");
    expect(planChangeType(at(enterprise, "annual"), at(enterprise, "annual"), order)).toBe("no_change");
  });

  it("is contact sales when either plan is not self-serve", () => {
    expect(planChangeType(at(pilot), at(enterprise), order)).toBe("contact_sales");
    expect(planChangeType(at(enterprise), at(pilot), order)).toBe("contact_sales");
    expect(planChangeType(at(enterprise), at(enterprise, "annual"), order)).toBe("contact_sales");
  });

  it("is a cycle change for the same plan on the other cycle", () => {
    expect(planChangeType(at(pilot), at(pilot, "annual"), order)).toBe("cycle_change");
    expect(planChangeType(at(pilot, "annual"), at(pilot), order)).toBe("cycle_change");
  });

  it("is an upgrade to a higher tier and a downgrade to a lower one, whatever the cycles", () => {
    expect(planChangeType(at(prototype), at(pilot), order)).toBe("upgrade");
    expect(planChangeType(at(free), at(prototype, "annual"), order)).toBe("upgrade");
    expect(planChangeType(at(production, "annual"), at(pilot), order)).toBe("downgrade");
    expect(planChangeType(at(pilot), at(free), order)).toBe("downgrade");
  });

  it("places plans missing from the tier order by annual price", () => {
    const legacy = plan("solo-v1", 4900);
    expect(planChangeType(at(legacy), at(pilot), order)).toBe("upgrade");
    expect(planChangeType(at(pilot), at(legacy), order)).toBe("downgrade");
  });

  it("asks for feedback on a move to a lower annual price only", () => {
    expect(needsFeedback(at(production), at(pilot))).toBe(true);
    expect(needsFeedback(at(pilot), at(free))).toBe(true);
    expect(needsFeedback(at(pilot), at(production))).toBe(false);
    expect(needsFeedback(at(pilot, "annual"), at(pilot))).toBe(false);
    expect(needsFeedback(at(production), at(enterprise))).toBe(false);
  });
});

describe("selfServePlans (spec 3 §9)", () => {
  it("keeps self-serve, non-legacy, paid plans, cheapest first", () => {
    const plans = [
      production,
      plan("hidden", 5000, { can_self_serve: false }),
      plan("old-v1", 5000, { is_legacy: true }),
      free,
      pilot,
      prototype,
    ];
    expect(selfServePlans(plans, NOW).map((p) => p.billing_code)).toEqual([
      "prototype-v2",
      "pilot-v2",
      "production-v2",
    ]);
  });

  it("keeps plans within their validity dates, both ends included", () => {
    const from = plan("from", 100, { is_valid_from__date: NOW.toISOString() });
    const until = plan("until", 200, { is_valid_until__date: NOW });
    const future = plan("future", 300, { is_valid_from__date: new Date(NOW.getTime() + 1).toISOString() });
    const past = plan("past", 400, { is_valid_until__date: new Date(NOW.getTime() - 1).toISOString() });
    expect(selfServePlans([future, past, until, from], NOW).map((p) => p.billing_code)).toEqual(["from", "until"]);
    expect(isPlanValidAt(plan("open", 1), NOW)).toBe(true);
  });

  it("shows an annual price divided by 12 per month", () => {
    const p = plan("p", 1000, { annual_price: 9000 });
    expect(pricePerMonth(p, "monthly")).toBe(1000);
    expect(pricePerMonth(p, "annual")).toBe(750);
  });
});

describe("freePlanBlocked (spec 3 §4)", () => {
  it("refuses the free plan above the allowance or with frozen free devices", () => {
    expect(freePlanBlocked({ deviceCount: 10, freeAllowance: 10, hasFrozenFreeDevices: false })).toBe(false);
    expect(freePlanBlocked({ deviceCount: 11, freeAllowance: 10, hasFrozenFreeDevices: false })).toBe(true);
    expect(freePlanBlocked({ deviceCount: 2, freeAllowance: 10, hasFrozenFreeDevices: true })).toBe(true);
    expect(freePlanBlocked({ deviceCount: 11, hasFrozenFreeDevices: false })).toBe(true);
  });
});

describe("pastDueState (spec 3 §4 Past due and frozen)", () => {
  it("is none without a past-due date", () => {
    expect(pastDueState(null, NOW)).toEqual({ state: "none" });
    expect(pastDueState(undefined, NOW)).toEqual({ state: "none" });
  });

  it.each([
    [0, { state: "warning", daysPastDue: 0 }],
    [29, { state: "warning", daysPastDue: 29 }],
    [30, { state: "error", daysPastDue: 30, daysUntilFreeze: 30 }],
    [59, { state: "error", daysPastDue: 59, daysUntilFreeze: 1 }],
    [60, { state: "frozen", daysPastDue: 60 }],
    [400, { state: "frozen", daysPastDue: 400 }],
  ])("%i days past due", (days, expected) => {
    expect(pastDueState(daysAgo(days), NOW)).toEqual(expected);
    expect(pastDueState(daysAgo(days).toISOString(), NOW)).toEqual(expected);
  });

  it("counts whole days: a minute short of 30 days is still a warning", () => {
    expect(pastDueState(new Date(daysAgo(30).getTime() + 60_000), NOW).state).toBe("warning");
    expect(pastDueState(new Date(daysAgo(60).getTime() + 60_000), NOW).state).toBe("error");
    expect(pastDueState(new Date(NOW.getTime() + DAY), NOW)).toEqual({ state: "warning", daysPastDue: 0 });
  });
});

describe("invoices (spec 3 §4 Invoices)", () => {
  it.each([
    ["paid", "success"],
    ["voided", "success"],
    ["void", "success"],
    ["closed", "success"],
    ["pending", "warning"],
    ["processing", "warning"],
    ["open", "warning"],
    ["draft", "warning"],
    ["past_due", "error"],
    ["failed", "error"],
    ["mystery", "warning"],
  ])("%s is %s", (state, tone) => {
    expect(invoiceStateTone(state)).toBe(tone);
  });

  it("cannot download drafts", () => {
    expect(canDownloadInvoice("draft")).toBe(false);
    expect(canDownloadInvoice("paid")).toBe(true);
    expect(canDownloadInvoice("past_due")).toBe(true);
  });

  it("shows the newest 6 and offers view all beyond", () => {
    const invoices = Array.from({ length: 7 }, (_, i) => ({ n: i, created_at: `2026-0${i + 1}-01T00:00:00Z` }));
    const { shown, hasMore } = latestInvoices(invoices);
    expect(shown.map((invoice) => invoice.n)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(hasMore).toBe(true);
    expect(latestInvoices(invoices.slice(0, 6)).hasMore).toBe(false);
  });
});

describe("credits (spec 3 §4 Credits, §5, §9)", () => {
  it("are available only on pilot-v2, production-v2 and enterprise-v2", () => {
    for (const code of CREDIT_BILLING_CODES) expect(creditsAvailableFor(code)).toBe(true);
    for (const code of ["pilot", "prototype-v2", "free", "enterprise-v1", "", null]) {
      expect(creditsAvailableFor(code)).toBe(false);
    }
  });

  it("computes credits needed as ceil((current + estimated − included) × months / 2) − balance, at least 0", () => {
    const base = { currentDevices: 10, estimatedDevices: 5, includedDevices: 2, months: 12, balance: 0 };
    expect(creditsNeeded(base)).toBe(78);
    expect(creditsNeeded({ ...base, months: 1 })).toBe(7); // 13 / 2 = 6.5 → 7
    expect(creditsNeeded({ ...base, balance: 70 })).toBe(8);
    expect(creditsNeeded({ ...base, balance: 78 })).toBe(0);
    expect(creditsNeeded({ ...base, balance: 1000 })).toBe(0);
    expect(creditsNeeded({ ...base, includedDevices: 50 })).toBe(0);
  });

  it("defaults the threshold to twice the device count", () => {
    expect(defaultCreditThreshold(0)).toBe(0);
    expect(defaultCreditThreshold(17)).toBe(34);
  });

  it("counts paid, complimentary and manually invoiced bundles toward the balance", () => {
    for (const status of ["paid", "complimentary", "manually invoiced", "manually_invoiced"]) {
      expect(creditBalanceCounts(status)).toBe(true);
    }
    for (const status of ["failed", "processing", "", null]) expect(creditBalanceCounts(status)).toBe(false);
    const bundles = [
      { payment_status: "paid", total_balance: 100 },
      { payment_status: "failed", total_balance: 50 },
      { payment_status: "complimentary", total_balance: 7 },
    ];
    expect(creditBalance(bundles)).toBe(107);
  });

  it("expire 10 years after purchase", () => {
    expect(creditExpiry(new Date("2026-03-01T10:00:00Z")).toISOString()).toBe("2036-03-01T10:00:00.000Z");
  });

  it("shows Contact sales above 100,000,000 cents", () => {
    expect(creditPurchaseNeedsContactSales(100_000_000)).toBe(false);
    expect(creditPurchaseNeedsContactSales(100_000_001)).toBe(true);
  });

  it("validates the quantity: digits only, at most 1,500,000; buying needs more than 0", () => {
    expect(validateCreditQuantity("0")).toBeUndefined();
    expect(validateCreditQuantity("1500000")).toBeUndefined();
    expect(validateCreditQuantity("")).toBeUndefined();
    expect(validateCreditQuantity("1500001")).toBe("The value must be at most 1,500,000");
    for (const input of ["-1", "1.5", "1e3", "12a", "1 000"]) {
      expect(validateCreditQuantity(input), input).toBe("Only digits are allowed");
    }
    expect(canPurchaseCredits("0")).toBe(false);
    expect(canPurchaseCredits("")).toBe(false);
    expect(canPurchaseCredits("1")).toBe(true);
    expect(canPurchaseCredits("1500001")).toBe(false);
    expect(parseCreditInput(" 42 ")).toBe(42);
    expect(parseCreditInput("x")).toBeNull();
  });

  it("validates the threshold and enables Apply only for a changed, valid value", () => {
    expect(validateCreditThreshold("1500000")).toBeUndefined();
    expect(validateCreditThreshold("1500001")).toBe("The value must be at most 1,500,000");
    expect(validateCreditThreshold("ten")).toBe("Only digits are allowed");
    expect(canApplyCreditThreshold("20", 20)).toBe(false);
    expect(canApplyCreditThreshold("21", 20)).toBe(true);
    expect(canApplyCreditThreshold("20", null)).toBe(true);
    expect(canApplyCreditThreshold("", 20)).toBe(false);
    expect(canApplyCreditThreshold("1500001", 20)).toBe(false);
  });

  it("validates the calculator: estimated devices at most 1,500,000, months at most 120", () => {
    expect(validateEstimatedDevices("1500000")).toBeUndefined();
    expect(validateEstimatedDevices("1500001")).toBe("The value must be at most 1,500,000");
    expect(validateCreditMonths("120")).toBeUndefined();
    expect(validateCreditMonths("121")).toBe("The value must be at most 120");
    expect(validateCreditMonths("1.5")).toBe("Only digits are allowed");
  });
});

describe("member seats (spec 3 §9)", () => {
  it("prices a seat as base × discount / 100, full price without a discount", () => {
    expect(seatPrice(4900, 100)).toBe(4900);
    expect(seatPrice(4900, 80)).toBe(3920);
    expect(seatPrice(4900, 0)).toBe(0);
    expect(seatPrice(2900, 50)).toBe(1450);
    expect(seatPrice(4900)).toBe(4900);
  });

  it.each<[string, number, SeatUsage | undefined, SeatOffer, number]>([
    // What one more member at a role costs, from its list price and its seats on the plan (spec 3 §6).
    ["a free role", 0, undefined, { kind: "free" }, 0],
    ["usage unknown: the list price", 4900, undefined, { kind: "priced", priceCents: 4900 }, 4900],
    [
      "no seat included: the plan's price",
      4900,
      { included: 0, used: 3, unitPriceCents: 3920 },
      { kind: "priced", priceCents: 3920 },
      3920,
    ],
    [
      "included seats left",
      4900,
      { included: 2, used: 1, unitPriceCents: 4900 },
      { kind: "included", used: 1, included: 2 },
      0,
    ],
    [
      "none of the included seats used yet",
      4900,
      { included: 5, used: 0, unitPriceCents: 4900 },
      { kind: "included", used: 0, included: 5 },
      0,
    ],
    [
      "every included seat used: the extra-seat price",
      4900,
      { included: 2, used: 2, unitPriceCents: 4900 },
      { kind: "extra", used: 2, included: 2, priceCents: 4900 },
      4900,
    ],
    [
      "more used than included (seats already billed)",
      2900,
      { included: 1, used: 4, unitPriceCents: 2900 },
      { kind: "extra", used: 4, included: 1, priceCents: 2900 },
      2900,
    ],
    ["extra seats that the plan gives away", 0, { included: 3, used: 3, unitPriceCents: 0 }, { kind: "free" }, 0],
    ["a free seat the plan sells", 0, { included: 0, used: 7, unitPriceCents: 0 }, { kind: "free" }, 0],
  ])("seatOffer: %s", (_case, listPrice, usage, offer, cents) => {
    expect(seatOffer(listPrice, usage)).toEqual(offer);
    expect(seatOfferCents(seatOffer(listPrice, usage))).toBe(cents);
  });

  it("includes at least one member", () => {
    expect(includedMembers(0)).toBe(1);
    expect(includedMembers(null)).toBe(1);
    expect(includedMembers(undefined)).toBe(1);
    expect(includedMembers(5)).toBe(5);
  });

  it("shows dollars per month with 2 decimals", () => {
    expect(formatDollarsPerMonth(4900)).toBe("$49.00/month");
    expect(formatDollarsPerMonth(0)).toBe("$0.00/month");
    expect(formatDollars(123456)).toBe("$1,234.56");
    expect(formatDollars(1450.5)).toBe("$14.51");
    expect(formatDollars(9900 / 12)).toBe("$8.25");
  });
});

describe("payment cards (spec 3 §3, §9)", () => {
  it("shows the last four digits and a 2-digit month", () => {
    expect(cardLastFour("4242 4242 4242 4242")).toBe("4242");
    expect(cardLastFour("378282246310005")).toBe("0005");
    expect(cardLastFour(null)).toBe("");
    expect(padCardMonth(3)).toBe("03");
    expect(padCardMonth("12")).toBe("12");
  });

  it.each([
    ["amex", "amex"],
    ["American Express", "amex"],
    ["Discover", "discover"],
    ["MasterCard", "mastercard"],
    ["visa", "visa"],
    ["Visa", "visa"],
    ["jcb", "unknown"],
    ["diners", "unknown"],
    ["", "unknown"],
    [null, "unknown"],
  ])("brand %j is %s", (brand, type) => {
    expect(cardTypeOf(brand)).toBe(type);
  });

  it.each([
    ["4242424242424242", "visa"],
    ["5555555555554444", "mastercard"],
    ["2223003122003222", "mastercard"],
    ["378282246310005", "amex"],
    ["6011111111111117", "discover"],
    ["3056930009020004", "unknown"],
  ])("number %s is %s", (number, type) => {
    expect(cardTypeOfNumber(number)).toBe(type);
  });

  it("checks card numbers with Luhn", () => {
    for (const number of ["4242424242424242", "4242 4242 4242 4242", "5555-5555-5555-4444", "378282246310005"]) {
      expect(isValidCardNumber(number), number).toBe(true);
    }
    for (const number of ["4242424242424241", "1234567890123456", "42424242", "4242x42424242424", "", "0".repeat(20)]) {
      expect(isValidCardNumber(number), number).toBe(false);
    }
  });

  it("accepts an expiry through the end of its month", () => {
    expect(isValidExpiry(6, 2026, NOW)).toBe(true);
    expect(isValidExpiry("06", "26", NOW)).toBe(true);
    expect(isValidExpiry(5, 2026, NOW)).toBe(false);
    expect(isValidExpiry(12, 2025, NOW)).toBe(false);
    expect(isValidExpiry(1, 2027, NOW)).toBe(true);
    expect(isValidExpiry(0, 2030, NOW)).toBe(false);
    expect(isValidExpiry(13, 2030, NOW)).toBe(false);
    expect(isValidExpiry(6, 226, NOW)).toBe(false);
    expect(isValidExpiry("x", 2030, NOW)).toBe(false);
  });

  it("wants a 3-digit CVC, 4 for American Express", () => {
    expect(isValidCvc("123", "visa")).toBe(true);
    expect(isValidCvc("1234", "visa")).toBe(false);
    expect(isValidCvc("1234", "amex")).toBe(true);
    expect(isValidCvc("123", "American Express")).toBe(false);
    expect(isValidCvc("12a", "mastercard")).toBe(false);
    expect(isValidCvc("123", null)).toBe(true);
  });
});
