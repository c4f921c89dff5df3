import type { TaxId } from "./tax-ids.ts";

/**
 * The tax an invoice states (docs/billing.md "Invoices"), from the seller's country and tax rate
 * (FLOTILLA_BILLING_ISSUER_*) and the buyer's billing country and tax ID:
 * - a seller without a tax rate states no tax;
 * - a buyer in the seller's country (or of unknown country) pays the seller's rate;
 * - an EU seller and a buyer in another member state with an EU VAT ID: no VAT, reverse charge;
 * - an EU seller and a buyer in another member state without one: the seller's rate (B2C);
 * - a buyer outside the seller's country otherwise: no tax, with a note saying why.
 */

export const EU_COUNTRIES = [
  "AT",
  "BE",
  "BG",
  "CY",
  "CZ",
  "DE",
  "DK",
  "EE",
  "ES",
  "FI",
  "FR",
  "GR",
  "HR",
  "HU",
  "IE",
  "IT",
  "LT",
  "LU",
  "LV",
  "MT",
  "NL",
  "PL",
  "PT",
  "RO",
  "SE",
  "SI",
  "SK",
] as const;

const inEu = (country: string | null | undefined) =>
  !!country && (EU_COUNTRIES as readonly string[]).includes(country.toUpperCase());

export const REVERSE_CHARGE_NOTE =
  "Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC).";

export type InvoiceTax = {
  /** Percent applied to the subtotal; 0 when none is due. */
  ratePercent: number;
  /** The tax line's text, e.g. "VAT 19%"; undefined when no tax line is stated. */
  label?: string;
  /** A sentence the invoice prints under its lines (reverse charge, outside the scope). */
  note?: string;
};

export function invoiceTax(
  seller: { country?: string | null; taxRatePercent?: number | null; taxName?: string | null },
  buyer: { country?: string | null; taxId?: TaxId | null },
): InvoiceTax {
  const rate = seller.taxRatePercent ?? 0;
  if (rate <= 0 || !seller.country) return { ratePercent: 0 };
  const name = seller.taxName || (inEu(seller.country) ? "VAT" : "Tax");
  const sellerCountry = seller.country.toUpperCase();
  const buyerCountry = buyer.country?.toUpperCase() || undefined;
  const charged = { ratePercent: rate, label: `${name} ${rate}%` };
  if (!buyerCountry || buyerCountry === sellerCountry) return charged;
  if (inEu(sellerCountry) && inEu(buyerCountry)) {
    return buyer.taxId?.type === "eu_vat"
      ? { ratePercent: 0, label: `${name} 0%`, note: REVERSE_CHARGE_NOTE }
      : charged;
  }
  return { ratePercent: 0, note: `No ${name} charged: the buyer is outside ${sellerCountry}.` };
}

/** The tax of a subtotal at a rate, in whole cents (half a cent rounds up). */
export const taxAmount = (subtotalInCents: number, ratePercent: number) =>
  Math.round((subtotalInCents * ratePercent) / 100);
