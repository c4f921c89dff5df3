import type { UseQueryResult } from "@tanstack/react-query";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it, vi } from "vitest";
import { t } from "../../lib/i18n.ts";
import { billingErrorText, billingPlanQuery, type Invoice, planCatalogueQuery, requireClientSecret } from "./api.ts";
import { InvoicesCard } from "./billing-page.tsx";
import { clickGate, paymentFormBlocker } from "./model.ts";
import { TierImage } from "./tier-image.tsx";

/** Spec 3 §4 Invoices, §5, §8, §9: the billing page's rules that a browser run cannot reach. */

const invoice = (n: number, state = "paid"): Invoice => ({
  uuid: `uuid-${n}`,
  invoice_number: `INV-${String(n).padStart(6, "0")}`,
  state,
  currency: "USD",
  total_in_cents: 29_900,
  created_at: new Date(Date.UTC(2026, 0, n)).toISOString(),
});

const loaded = (list: Invoice[]) =>
  ({ data: list, isPending: false, isError: false, refetch: () => undefined }) as unknown as UseQueryResult<Invoice[]>;

/** The card's markup, without the style sheets emotion puts in between. */
const render = (list: Invoice[]) =>
  renderToStaticMarkup(
    createElement(InvoicesCard, { invoices: loaded(list), onDownload: async () => undefined }),
  ).replace(/<style[^>]*>.*?<\/style>/g, "");
const downloadButtons = (html: string) => html.match(/<button[^>]*aria-label="Download invoice INV-/g) ?? [];

describe("the invoices card", () => {
  it("shows the newest 6 invoices and a 'View all' button when there are more (BIL-088, BIL-089)", () => {
    const html = render(Array.from({ length: 7 }, (_, i) => invoice(7 - i)));
    expect(downloadButtons(html)).toHaveLength(6);
    expect(html).toContain("INV-000007");
    expect(html).not.toContain("INV-000001");
    expect(html).toContain(">View all (7)<");
  });

  it("has no 'View all' with 6 invoices or fewer", () => {
    const html = render(Array.from({ length: 6 }, (_, i) => invoice(6 - i)));
    expect(downloadButtons(html)).toHaveLength(6);
    expect(html).not.toContain("View all");
  });

  it("disables a draft invoice's download, saying it is not yet available (BIL-086)", () => {
    const html = render([invoice(2, "draft"), invoice(1, "paid")]);
    const draft = /<span[^>]*aria-label="([^"]*)"[^>]*><button([^>]*)aria-label="Download invoice INV-000002"/.exec(
      html,
    );
    expect(draft?.[1]).toBe("Not yet available");
    expect(draft?.[2]).toMatch(/disabled/);
    const paid = /<button([^>]*)aria-label="Download invoice INV-000001"/.exec(html);
    expect(paid?.[1]).not.toMatch(/disabled/);
  });
});

describe("the billing plan's cache", () => {
  it("keeps the organization's plan and the catalogue for one hour (BIL-018)", () => {
    const api = { getPlan: vi.fn(), getCatalogue: vi.fn() };
    expect(billingPlanQuery(api, 7)).toMatchObject({ queryKey: ["billing", 7, "plan"], staleTime: 3_600_000 });
    expect(planCatalogueQuery(api).staleTime).toBe(3_600_000);
  });
});

describe("the payment form", () => {
  it("refuses a submit before the billing provider has initialised (BIL-062), then without a captcha (BIL-061)", () => {
    const before = paymentFormBlocker({ loading: true, ready: false });
    expect(before).toBe("billing.errors.submitting_billing_form_before_initialization");
    expect(before && t(before)).toBe("The payment form is not ready yet: try again in a moment.");
    const unverified = paymentFormBlocker({ loading: false, ready: false });
    expect(unverified && t(unverified)).toBe("Please complete the captcha first.");
    expect(paymentFormBlocker({ loading: false, ready: true })).toBeUndefined();
  });

  it("raises the missing-client_secret error for a setup intent without one (BIL-064)", () => {
    const text = t("billing.errors.missing_client_secret");
    expect(text).toMatch(/client secret/);
    expect(() => requireClientSecret({ id: "seti_1", provider: "test" }, text)).toThrow(text);
    expect(requireClientSecret({ id: "seti_1", provider: "test", client_secret: "s" }, text).client_secret).toBe("s");
  });
});

describe("the plan-change confirm button", () => {
  it("ignores clicks closer than 500 ms to the last one that counted (BIL-043)", () => {
    let now = 10_000;
    const gate = clickGate(500, () => now);
    expect(gate.pass()).toBe(true);
    now += 100;
    expect(gate.pass()).toBe(false);
    now += 399;
    expect(gate.pass()).toBe(false);
    now += 1;
    expect(gate.pass()).toBe(true);
    now += 499;
    expect(gate.pass()).toBe(false);
  });
});

describe("billing request failures (spec 3 §8)", () => {
  it('say errors.error_request when no answer came, never the browser\'s "Failed to fetch"', () => {
    const text = billingErrorText(new TypeError("Failed to fetch"));
    expect(text).toBe(t("billing.errors.error_request"));
    expect(text).not.toMatch(/failed to fetch/i);
    // A refusal keeps the server's own words.
    expect(billingErrorText({ statusCode: 400, body: { message: "Add a payment method first." } })).toBe(
      "Add a payment method first.",
    );
  });
});

describe("tier images (spec 3 §9)", () => {
  it("map billing codes, version suffix ignored, to their tier's image; anything else to unknown", () => {
    const tierOfMarkup = (code: string) =>
      /data-tier="([a-z]+)"/.exec(renderToStaticMarkup(createElement(TierImage, { billingCode: code })))?.[1];
    const codes = ["custom", "enterprise-v2", "free", "org", "pilot-v2", "production-v2", "prototype-v3", "solo"];
    expect(codes.map(tierOfMarkup)).toEqual([
      "custom",
      "enterprise",
      "free",
      "org",
      "pilot",
      "production",
      "prototype",
      "solo",
    ]);
    expect(tierOfMarkup("150m")).toBe("unknown");
    expect(renderToStaticMarkup(createElement(TierImage, { billingCode: "pilot-v2" }))).toContain(
      'aria-label="Pilot tier"',
    );
  });
});
