import { describe, expect, it } from "vitest";
import {
  type CataloguePlan,
  canDownloadInvoice,
  cardExpiry,
  cardTypeOf,
  cycleOfInterval,
  formatCents,
  INVOICES_SHOWN,
  invoiceStateTone,
  isDowngrade,
  isValidCardNumber,
  parseExpiry,
  planChangeType,
  pricePerMonth,
  selfServePlans,
  taxIdPayload,
  usageRows,
  validateTaxId,
  visibleInvoices,
} from "./model.ts";
import { billingSearch } from "./search.ts";

const plan = (overrides: Partial<CataloguePlan>): CataloguePlan => ({
  id: 1,
  title: "Pilot",
  billing_code: "pilot-v2",
  monthly_price: 29900,
  annual_price: 322920,
  can_self_serve: true,
  is_legacy: false,
  is_valid_from__date: null,
  is_valid_until__date: null,
  ...overrides,
});

describe("self-serve plans (spec 3 §9)", () => {
  const now = new Date("2025-06-01T00:00:00Z");
  it("keeps self-serve, current, non-legacy paid plans, cheapest first", () => {
    const plans = [
      plan({ id: 1, billing_code: "production-v2", monthly_price: 139900 }),
      plan({ id: 2, billing_code: "free", monthly_price: 0, annual_price: 0 }),
      plan({ id: 3, billing_code: "prototype-v2", monthly_price: 9900 }),
      plan({ id: 4, billing_code: "enterprise-v2", can_self_serve: false }),
      plan({ id: 5, billing_code: "solo", is_legacy: true }),
      plan({ id: 6, billing_code: "expired", is_valid_until__date: "2023-01-01T00:00:00Z" }),
      plan({ id: 7, billing_code: "future", is_valid_from__date: "2026-01-01T00:00:00Z" }),
      plan({ id: 8, billing_code: "pilot-v2", monthly_price: 29900 }),
    ];
    expect(selfServePlans(plans, now).map((entry) => entry.billing_code)).toEqual([
      "prototype-v2",
      "pilot-v2",
      "production-v2",
    ]);
  });

  it("shows an annual price per month and reads the interval length", () => {
    expect(pricePerMonth(plan({}), "monthly")).toBe(29900);
    expect(pricePerMonth(plan({}), "annual")).toBe(26910);
    expect(cycleOfInterval("1")).toBe("monthly");
    expect(cycleOfInterval("12")).toBe("annual");
    expect(formatCents("29900")).toBe("$299.00");
    expect(formatCents(26910)).toBe("$269.10");
  });
});

describe("plan change type (spec 3 §4)", () => {
  const free = { code: "free", cycle: "monthly" as const, monthlyPrice: 0, selfServe: true };
  const pilot = { code: "pilot-v2", cycle: "monthly" as const, monthlyPrice: 29900, selfServe: true };
  const enterprise = { code: "enterprise-v2", cycle: "monthly" as const, monthlyPrice: 499900, selfServe: false };
  it("names no change, contact sales, cycle change, upgrade and downgrade", () => {
    expect(planChangeType(pilot, pilot)).toBe("none");
    expect(planChangeType(pilot, enterprise)).toBe("contact_sales");
    expect(planChangeType(enterprise, pilot)).toBe("contact_sales");
    expect(planChangeType(pilot, { ...pilot, cycle: "annual" })).toBe("cycle_change");
    expect(planChangeType(free, pilot)).toBe("upgrade");
    expect(planChangeType(pilot, free)).toBe("downgrade");
  });

  it("asks for feedback when the new plan costs less per year", () => {
    expect(isDowngrade(plan({ annual_price: 322920 }), plan({ annual_price: 106920 }))).toBe(true);
    expect(isDowngrade(plan({ annual_price: 106920 }), plan({ annual_price: 322920 }))).toBe(false);
    expect(isDowngrade(undefined, plan({}))).toBe(false);
  });
});

describe("invoices (spec 3 §4)", () => {
  it("colours states: done green, waiting orange, past due and failed red", () => {
    for (const state of ["paid", "voided", "void", "closed"]) expect(invoiceStateTone(state)).toBe("success");
    for (const state of ["pending", "processing", "open", "draft"]) expect(invoiceStateTone(state)).toBe("warning");
    for (const state of ["past_due", "failed"]) expect(invoiceStateTone(state)).toBe("error");
  });

  it("refuses drafts and shows the newest 6 with view all", () => {
    expect(canDownloadInvoice({ state: "draft" })).toBe(false);
    expect(canDownloadInvoice({ state: "paid" })).toBe(true);
    const list = Array.from({ length: 8 }, (_, i) => i);
    expect(visibleInvoices(list, false)).toEqual({ shown: list.slice(0, INVOICES_SHOWN), more: true });
    expect(visibleInvoices(list, true).shown).toHaveLength(8);
    expect(visibleInvoices(list.slice(0, 6), false).more).toBe(false);
  });
});

describe("cards and tax IDs (spec 3 §3, §5, §9)", () => {
  it("names card types and pads the expiry month", () => {
    expect(cardTypeOf("Visa")).toBe("visa");
    expect(cardTypeOf("American Express")).toBe("amex");
    expect(cardTypeOf("jcb")).toBe("unknown");
    expect(cardExpiry(4, 2030)).toBe("04/2030");
    expect(isValidCardNumber("4242 4242 4242 4242")).toBe(true);
    expect(isValidCardNumber("4242 4242 4242 4241")).toBe(false);
    expect(parseExpiry("04/30")).toEqual({ month: 4, year: 2030 });
    expect(parseExpiry("13/30")).toBeUndefined();
  });

  it("checks tax IDs by type and sends null when type or value is empty", () => {
    expect(validateTaxId("us_ein", "12-3456789")).toBe(true);
    expect(validateTaxId("us_ein", "123456789")).toBe(false);
    expect(validateTaxId("gb_vat", "GB123456789")).toBe(true);
    expect(validateTaxId("gb_vat", "GB12345678")).toBe(false);
    expect(taxIdPayload("", "12-3456789")).toBeNull();
    expect(taxIdPayload("us_ein", "  ")).toBeNull();
    expect(taxIdPayload("eu_vat", "DE123456789")).toEqual({ type: "eu_vat", value: "DE123456789", country: "DE" });
  });

  it("splits usage by kind", () => {
    expect(usageRows({ "device:microservices": 3, "member:administrator": 1 }, "member")).toEqual([
      { key: "member:administrator", item: "administrator", count: 1 },
    ]);
  });
});

describe("billing query (spec 3 §2 Billing)", () => {
  it("keeps valid plan, cycle and set-up resumption parameters only", () => {
    expect(billingSearch({ plan: "pilot-v2", cycle: "annual" })).toEqual({ plan: "pilot-v2", cycle: "annual" });
    expect(billingSearch({ plan: "pilot-v2", cycle: "weekly" })).toEqual({ plan: "pilot-v2" });
    expect(
      billingSearch({
        "setup-intent": "seti_1",
        "then-propose-plan-tier": "pilot-v2",
        "then-propose-plan-cycle": "monthly",
      }),
    ).toEqual({ "setup-intent": "seti_1", "then-propose-plan-tier": "pilot-v2", "then-propose-plan-cycle": "monthly" });
  });
});
