import { describe, expect, it } from "vitest";
import {
  type CataloguePlan,
  cardExpiry,
  cycleOfInterval,
  formatCents,
  groupCardNumber,
  historyPage,
  parseExpiry,
  planDevices,
  taxIdChoiceOf,
  taxIdPayload,
  taxIdRowOf,
  unexpiredCreditBalance,
  usageRows,
  visibleInvoices,
} from "./model.ts";
import { billingSearch } from "./search.ts";

/** The page's own helpers; the billing rules are packages/domain's (and tested there). */
describe("billing page helpers (spec 3 §9)", () => {
  it("reads the interval length as a cycle and shows cents as dollars", () => {
    expect(cycleOfInterval("1")).toBe("monthly");
    expect(cycleOfInterval("12")).toBe("annual");
    expect(cycleOfInterval(undefined)).toBe("monthly");
    expect(formatCents("29900")).toBe("$299.00");
    expect(formatCents(322920 / 12)).toBe("$269.10");
    expect(formatCents("x")).toBe("–");
  });

  it("shows a card's expiry as MM/YYYY and reads what the form types", () => {
    expect(cardExpiry(4, 2030)).toBe("04/2030");
    expect(cardExpiry(undefined, 2030)).toBe("");
    expect(parseExpiry("04/30")).toEqual({ month: 4, year: 2030 });
    expect(parseExpiry("4 / 2031")).toEqual({ month: 4, year: 2031 });
    expect(parseExpiry("13/30")).toBeUndefined();
    expect(groupCardNumber("4242424242424242")).toBe("4242 4242 4242 4242");
  });

  it("shows the newest 6 invoices unless all are asked for", () => {
    const list = Array.from({ length: 8 }, (_, i) => i);
    expect(visibleInvoices(list, false)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(visibleInvoices(list, true)).toHaveLength(8);
  });

  it("splits usage by kind", () => {
    expect(usageRows({ "device:microservices": 3, "member:administrator": 1 }, "member")).toEqual([
      { key: "member:administrator", item: "administrator", count: 1 },
    ]);
  });
});

describe("tax ID picker (spec 3 §3, §5)", () => {
  it("sends null when type or value is empty, and an EU VAT number with its country", () => {
    expect(taxIdPayload("", "12-3456789")).toBeNull();
    expect(taxIdPayload("us_ein|US", "  ")).toBeNull();
    expect(taxIdPayload("us_ein|US", " 12-3456789 ")).toEqual({ type: "us_ein", value: "12-3456789" });
    expect(taxIdPayload("eu_vat|DE", "de123456789")).toEqual({ type: "eu_vat", value: "DE123456789", country: "DE" });
  });

  it("finds the picker's row of a stored tax ID", () => {
    expect(taxIdChoiceOf(null)).toBe("");
    expect(taxIdChoiceOf({ type: "gb_vat", value: "GB123456789" })).toBe("gb_vat|GB");
    expect(taxIdChoiceOf({ type: "eu_vat", value: "FR12345678901", country: "FR" })).toBe("eu_vat|FR");
    expect(taxIdRowOf("eu_vat|DE")?.label).toMatch(/Germany/);
  });
});

describe("billing query (spec 3 §2 Billing)", () => {
  it("keeps valid plan, cycle and set-up resumption parameters only", () => {
    expect(billingSearch({ plan: "pilot-v2", cycle: "annual" })).toEqual({ plan: "pilot-v2", cycle: "annual" });
    expect(billingSearch({ plan: "pilot-v2", cycle: "weekly" })).toEqual({ plan: "pilot-v2" });
    const resume = {
      "setup-intent": "seti_1",
      "then-propose-plan-tier": "pilot-v2",
      "then-propose-plan-cycle": "monthly",
    };
    expect(billingSearch(resume)).toEqual(resume);
  });
});

describe("credits", () => {
  const now = new Date("2030-01-01T00:00:00Z");
  it("counts paid, complimentary and manually invoiced bundles that have not expired", () => {
    const bundles = [
      { payment_status: "paid", total_balance: 100, expires_on__date: "2035-01-01" },
      { payment_status: "complimentary", total_balance: 10, expires_on__date: null },
      { payment_status: "manually invoiced", total_balance: 5, expires_on__date: "2031-01-01" },
      { payment_status: "failed", total_balance: 1000, expires_on__date: "2035-01-01" },
      { payment_status: "processing", total_balance: 7, expires_on__date: "2035-01-01" },
      { payment_status: "paid", total_balance: 50, expires_on__date: "2029-12-31" },
    ];
    expect(unexpiredCreditBalance(bundles, now)).toBe(115);
  });
  it("pages the purchase history by 5", () => {
    const rows = Array.from({ length: 12 }, (_, index) => index);
    expect(historyPage(rows, 0)).toEqual([0, 1, 2, 3, 4]);
    expect(historyPage(rows, 2)).toEqual([10, 11]);
  });
  it("reads a plan's included devices and per-device price", () => {
    const feature = [{ slug: "device:microservices" }];
    const plan = {
      plan_feature: [{ quantity: 20, feature }],
      plan_addon: [{ base_price: 200, bills_dynamically: true, feature }],
    } as unknown as CataloguePlan;
    expect(planDevices(plan)).toEqual({ included: 20, pricePerDeviceCents: 200 });
    expect(planDevices(undefined)).toEqual({ included: 0 });
  });
});
