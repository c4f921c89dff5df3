/**
 * The billing page's pure rules (spec 3 §4, §5, §9).
 *
 * TODO(domain): packages/domain/src/billing.ts and tax-ids.ts (selfServePlans, pricePerMonth,
 * planChangeType, invoiceStateTone, canDownloadInvoice, cardTypeOf, TAX_ID_TYPES/validateTaxId…)
 * are being written on another branch. These local versions have the same names and meanings, so
 * the page switches to the domain's by changing its imports once they land; then delete them here.
 */

export type BillingCycle = "monthly" | "annual";

/** The free plan's billing code (spec 3 §9) and its device allowance (first 10 devices free). */
export const FREE_PLAN_CODE = "free";
export const FREE_DEVICE_ALLOWANCE = 10;

/** A row of the plan catalogue (data API `plan`): prices in cents, annual per year. */
export interface CataloguePlan {
  id: number;
  title: string;
  billing_code: string;
  monthly_price: number;
  annual_price: number;
  can_self_serve: boolean;
  is_legacy: boolean;
  is_valid_from__date: string | null;
  is_valid_until__date: string | null;
  plan_feature?: Array<{ quantity: number; feature: Array<{ slug: string }> }>;
  plan_addon?: Array<{ base_price: number; bills_dynamically: boolean; feature: Array<{ slug: string }> }>;
}

/**
 * The plans a person may pick themselves (spec 3 §9): self-serve, not legacy, a monthly price
 * above zero, valid now, cheapest first.
 */
export function selfServePlans<P extends CataloguePlan>(plans: readonly P[], now: Date = new Date()): P[] {
  const time = now.getTime();
  return plans
    .filter(
      (plan) =>
        plan.can_self_serve &&
        !plan.is_legacy &&
        plan.monthly_price > 0 &&
        (plan.is_valid_from__date === null || Date.parse(plan.is_valid_from__date) <= time) &&
        (plan.is_valid_until__date === null || Date.parse(plan.is_valid_until__date) > time),
    )
    .sort((a, b) => a.monthly_price - b.monthly_price);
}

/** What a plan costs per month in cents on a cycle: an annual price is shown divided by 12 (spec 3 §9). */
export function pricePerMonth(plan: Pick<CataloguePlan, "monthly_price" | "annual_price">, cycle: BillingCycle) {
  return cycle === "annual" ? plan.annual_price / 12 : plan.monthly_price;
}

/** The billing service's interval length: "1" is monthly, "12" annual (spec 3 §9). */
export function cycleOfInterval(intervalLength: string | number | undefined): BillingCycle {
  return String(intervalLength) === "12" ? "annual" : "monthly";
}

/** Plan codes with an optional version suffix ("pilot-v2") name the same tier as without it. */
export function tierOf(code: string): string {
  return code.replace(/-v\d+$/, "");
}

export type PlanChangeType = "none" | "contact_sales" | "cycle_change" | "upgrade" | "downgrade";

export interface PlanChoice {
  code: string;
  cycle: BillingCycle;
  /** Its monthly price in cents (tier order), and whether it can be self-served. */
  monthlyPrice: number;
  selfServe: boolean;
}

/**
 * The kind of a plan change (spec 3 §4 Plan change): the same plan and cycle is no change (the
 * "Current plan" marker), a plan that is not self-serve on either side goes through sales, the
 * same tier on another cycle is a cycle change, otherwise the tier order decides.
 */
export function planChangeType(current: PlanChoice, target: PlanChoice): PlanChangeType {
  if (current.code === target.code && current.cycle === target.cycle) return "none";
  if (!current.selfServe || !target.selfServe) return "contact_sales";
  if (current.code === target.code) return "cycle_change";
  return target.monthlyPrice > current.monthlyPrice ? "upgrade" : "downgrade";
}

/** A downgrade asks for feedback: the new plan costs less per year (spec 3 §4). */
export function isDowngrade(
  current: Pick<CataloguePlan, "annual_price"> | undefined,
  target: Pick<CataloguePlan, "annual_price">,
) {
  return current !== undefined && target.annual_price < current.annual_price;
}

/** Money held in cents, shown in dollars (spec 3 §9). */
export function formatCents(cents: number | string, currency = "USD"): string {
  const value = typeof cents === "string" ? Number(cents) : cents;
  if (!Number.isFinite(value)) return "–";
  return new Intl.NumberFormat("en-US", { style: "currency", currency }).format(value / 100);
}

export type Tone = "success" | "warning" | "error" | "default";

/** Invoice states (spec 3 §4 Invoices): done green, waiting orange, past due and failed red. */
export function invoiceStateTone(state: string): Tone {
  switch (state) {
    case "paid":
    case "voided":
    case "void":
    case "closed":
      return "success";
    case "pending":
    case "processing":
    case "open":
    case "draft":
      return "warning";
    case "past_due":
    case "failed":
      return "error";
    default:
      return "default";
  }
}

/** Draft invoices cannot be downloaded yet (spec 3 §4 Invoices). */
export const canDownloadInvoice = (invoice: { state: string }) => invoice.state !== "draft";

/** The newest invoices the card shows, and whether "View all" is offered (spec 3 §4). */
export const INVOICES_SHOWN = 6;
export function visibleInvoices<I>(invoices: readonly I[], showAll: boolean): { shown: I[]; more: boolean } {
  return { shown: showAll ? [...invoices] : invoices.slice(0, INVOICES_SHOWN), more: invoices.length > INVOICES_SHOWN };
}

export type CardType = "amex" | "discover" | "mastercard" | "visa" | "unknown";

/** Card types the page names; anything else is "unknown" (spec 3 §3). */
export function cardTypeOf(value: string | undefined | null): CardType {
  const type = (value ?? "").toLowerCase().replace(/[\s_-]/g, "");
  if (type === "amex" || type === "americanexpress") return "amex";
  if (type === "discover") return "discover";
  if (type === "mastercard") return "mastercard";
  if (type === "visa") return "visa";
  return "unknown";
}

/** A card's expiry as MM/YYYY, the month padded to 2 digits (spec 3 §9). */
export function cardExpiry(month: number | string | undefined, year: number | string | undefined): string {
  if (month === undefined || year === undefined || month === "" || year === "") return "";
  return `${String(month).padStart(2, "0")}/${year}`;
}

/** Luhn check of a card number (spaces and dashes ignored). */
export function isValidCardNumber(value: string): boolean {
  const digits = value.replace(/[\s-]/g, "");
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** "MM/YY" or "MM/YYYY" typed in the card form, as month and four-digit year; undefined when not a date. */
export function parseExpiry(value: string): { month: number; year: number } | undefined {
  const match = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(value);
  if (!match) return undefined;
  const month = Number(match[1]);
  const year = match[2]?.length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
  if (month < 1 || month > 12) return undefined;
  return { month, year };
}

/** The card number as typed, grouped by four for reading. */
export function groupCardNumber(value: string): string {
  return value
    .replace(/\D/g, "")
    .slice(0, 19)
    .replace(/(\d{4})(?=\d)/g, "$1 ");
}

export interface TaxIdType {
  type: string;
  label: string;
  country: string;
  pattern: RegExp;
  example: string;
}

/**
 * Tax ID types (spec 3 §3, §5). TODO(domain): the full table (about 130 types) is
 * TAX_ID_TYPES in packages/domain/src/tax-ids.ts; these are the common ones until it lands.
 */
export const TAX_ID_TYPES: readonly TaxIdType[] = [
  {
    type: "au_abn",
    label: "Australian Business Number (AU ABN)",
    country: "AU",
    pattern: /^\d{11}$/,
    example: "12345678912",
  },
  {
    type: "br_cnpj",
    label: "Brazilian CNPJ number",
    country: "BR",
    pattern: /^\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2}$/,
    example: "01.234.456/5432-10",
  },
  { type: "ca_bn", label: "Canadian BN", country: "CA", pattern: /^\d{9}$/, example: "123456789" },
  {
    type: "ch_vat",
    label: "Switzerland VAT number",
    country: "CH",
    pattern: /^CHE-\d{3}\.\d{3}\.\d{3} (MWST|TVA|IVA)$/,
    example: "CHE-123.456.789 MWST",
  },
  {
    type: "eu_vat",
    label: "European VAT number",
    country: "EU",
    pattern: /^[A-Z]{2}[0-9A-Z+*]{2,13}$/,
    example: "DE123456789",
  },
  { type: "gb_vat", label: "United Kingdom VAT number", country: "GB", pattern: /^GB\d{9}$/, example: "GB123456789" },
  {
    type: "in_gst",
    label: "Indian GST number",
    country: "IN",
    pattern: /^\d{2}[A-Z]{5}\d{4}[A-Z][A-Z\d]Z[A-Z\d]$/,
    example: "12ABCDE3456FGZH",
  },
  {
    type: "jp_cn",
    label: "Japanese Corporate Number (Hōjin Bangō)",
    country: "JP",
    pattern: /^\d{13}$/,
    example: "1234567891234",
  },
  { type: "no_vat", label: "Norwegian VAT number", country: "NO", pattern: /^\d{9}MVA$/, example: "123456789MVA" },
  { type: "us_ein", label: "United States EIN", country: "US", pattern: /^\d{2}-\d{7}$/, example: "12-3456789" },
];

export const taxIdTypeOf = (type: string) => TAX_ID_TYPES.find((entry) => entry.type === type);

/** Does a tax ID match its type's pattern? Unknown types are the server's to check. */
export function validateTaxId(type: string, value: string): boolean {
  const entry = taxIdTypeOf(type);
  return entry ? entry.pattern.test(value.trim()) : true;
}

export interface TaxId {
  type: string;
  value: string;
  country?: string;
}

/**
 * The tax ID to send: null when type or value is empty (spec 3 §5); an EU VAT number carries its
 * country, the two letters it starts with (spec 3 §3).
 */
export function taxIdPayload(type: string, value: string): TaxId | null {
  const trimmed = value.trim();
  if (!type || !trimmed) return null;
  if (type === "eu_vat") return { type, value: trimmed, country: trimmed.slice(0, 2).toUpperCase() };
  return { type, value: trimmed };
}

/** A usage key ("member:administrator", "device:microservices") split into kind and item. */
export function usageRows(usage: Record<string, number> | undefined, kind: "device" | "member") {
  return Object.entries(usage ?? {})
    .filter(([key]) => key.startsWith(`${kind}:`))
    .map(([key, count]) => ({ key, item: key.slice(kind.length + 1), count }));
}
