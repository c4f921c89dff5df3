import { describe, expect, it } from "vitest";
import { invoiceTax, REVERSE_CHARGE_NOTE, taxAmount } from "./invoice-tax.ts";

const germanSeller = { country: "DE", taxRatePercent: 19 };
const vat = (country: string) => ({ type: "eu_vat", value: `${country}123456789`, country });

describe("the tax an invoice states", () => {
  it.each([
    ["no tax rate configured", { country: "DE" }, { country: "DE" }, { ratePercent: 0 }],
    [
      "a buyer in the seller's country",
      germanSeller,
      { country: "DE", taxId: vat("DE") },
      { ratePercent: 19, label: "VAT 19%" },
    ],
    ["a buyer of unknown country", germanSeller, {}, { ratePercent: 19, label: "VAT 19%" }],
    [
      "an EU business in another member state (reverse charge)",
      germanSeller,
      { country: "fr", taxId: vat("FR") },
      { ratePercent: 0, label: "VAT 0%", note: REVERSE_CHARGE_NOTE },
    ],
    ["an EU consumer in another member state", germanSeller, { country: "FR" }, { ratePercent: 19, label: "VAT 19%" }],
    [
      "a buyer outside the EU",
      germanSeller,
      { country: "US", taxId: { type: "us_ein", value: "12-3456789" } },
      { ratePercent: 0, note: "No VAT charged: the buyer is outside DE." },
    ],
    [
      "a non-EU seller and a foreign buyer",
      { country: "US", taxRatePercent: 7, taxName: "Sales tax" },
      { country: "DE" },
      { ratePercent: 0, note: "No Sales tax charged: the buyer is outside US." },
    ],
  ])("%s", (_name, seller, buyer, expected) => {
    expect(invoiceTax(seller, buyer)).toEqual(expected);
  });

  it("rounds the tax to the cent", () => {
    expect(taxAmount(29900, 19)).toBe(5681);
    expect(taxAmount(9950, 19)).toBe(1891);
    expect(taxAmount(0, 19)).toBe(0);
  });
});
