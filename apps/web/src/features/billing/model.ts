import {
  type BillingCycle,
  type BillingPlan,
  creditBalance,
  cycleOfIntervalLength,
  normaliseTaxId,
  PURCHASE_HISTORY_PAGE_SIZE,
  padCardMonth,
  TAX_ID_TYPES,
  type TaxId,
  type TaxIdType,
} from "@flotilla/domain";

/**
 * The billing page's own helpers. The rules themselves (self-serve plans, plan change types,
 * invoice tones, card and tax ID checks) are packages/domain's billing.ts and tax-ids.ts.
 */

/** A row of the plan catalogue (data API `plan`): prices in cents, annual per year. */
export interface CataloguePlan extends BillingPlan {
  id: number;
  title: string;
  is_legacy: boolean;
  is_valid_from__date: string | null;
  is_valid_until__date: string | null;
  plan_feature?: Array<{ quantity: number; feature: Array<{ slug: string }> }>;
  plan_addon?: Array<{ base_price: number; bills_dynamically: boolean; feature: Array<{ slug: string }> }>;
}

/** The billing service's interval length as a cycle: "1" is monthly, "12" annual (spec 3 §9). */
export function cycleOfInterval(intervalLength: string | number | undefined): BillingCycle {
  return cycleOfIntervalLength(Number(intervalLength)) ?? "monthly";
}

/** Money held in cents, shown in its currency (spec 3 §9): "$299.00". */
export function formatCents(cents: number | string, currency = "USD"): string {
  const value = typeof cents === "string" ? Number(cents) : cents;
  if (!Number.isFinite(value)) return "–";
  return new Intl.NumberFormat("en-US", { style: "currency", currency: currency || "USD" }).format(value / 100);
}

/** A card's expiry as MM/YYYY, the month padded to 2 digits (spec 3 §9). */
export function cardExpiry(month: number | string | undefined, year: number | string | undefined): string {
  if (month === undefined || year === undefined || month === "" || year === "") return "";
  return `${padCardMonth(month)}/${year}`;
}

/** "MM/YY" or "MM/YYYY" as typed in the card form; undefined when it is not a month and year. */
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

/** The invoices the card shows: the newest 6 unless "View all" is on (the list comes newest first). */
export function visibleInvoices<I>(invoices: readonly I[], showAll: boolean, shown = 6): I[] {
  return showAll ? [...invoices] : invoices.slice(0, shown);
}

/**
 * The tax ID picker's choices: one per row of the domain's table (eu_vat has one per country),
 * keyed "type|country" so that picking "European VAT Number (Germany)" also says which country.
 */
export const taxIdChoiceKey = (entry: Pick<TaxIdType, "type" | "country">) => `${entry.type}|${entry.country}`;

export function taxIdChoiceOf(taxId: TaxId | null | undefined): string {
  if (!taxId?.type) return "";
  const rows = TAX_ID_TYPES.filter((entry) => entry.type === taxId.type);
  const row =
    (taxId.country ? rows.find((entry) => entry.country === taxId.country?.toUpperCase()) : undefined) ??
    (taxId.type === "eu_vat" ? rows.find((entry) => taxId.value.toUpperCase().startsWith(entry.country)) : undefined) ??
    rows[0];
  return row ? taxIdChoiceKey(row) : "";
}

export const taxIdRowOf = (choice: string) => TAX_ID_TYPES.find((entry) => taxIdChoiceKey(entry) === choice);

/**
 * The tax ID to send for a picker choice and a value: null when either is empty (spec 3 §5); an
 * EU VAT number carries its country (spec 3 §3).
 */
export function taxIdPayload(choice: string, value: string): TaxId | null {
  const row = taxIdRowOf(choice);
  if (!row) return null;
  return normaliseTaxId({ type: row.type, value, ...(row.type === "eu_vat" ? { country: row.country } : {}) });
}

/** A usage key ("member:administrator", "device:microservices") split into kind and item. */
export function usageRows(usage: Record<string, number> | undefined, kind: "device" | "member") {
  return Object.entries(usage ?? {})
    .filter(([key]) => key.startsWith(`${kind}:`))
    .map(([key, count]) => ({ key, item: key.slice(kind.length + 1), count }));
}

/**
 * The credit balance (spec 3 §4 Credits): paid, complimentary and manually invoiced bundles
 * (the domain's creditBalance) that have not expired at `now`.
 */
export function unexpiredCreditBalance(
  bundles: readonly { payment_status: string | null; total_balance: number; expires_on__date?: string | null }[],
  now: Date,
): number {
  return creditBalance(
    bundles.filter((bundle) => !bundle.expires_on__date || new Date(bundle.expires_on__date).getTime() > now.getTime()),
  );
}

/** One page of the purchase history (page size 5, spec 3 §9). */
export function historyPage<B>(bundles: readonly B[], page: number, size = PURCHASE_HISTORY_PAGE_SIZE): B[] {
  return bundles.slice(page * size, page * size + size);
}

/** A plan's included devices and add-on price per device for the microservices feature. */
export function planDevices(plan: CataloguePlan | undefined): { included: number; pricePerDeviceCents?: number } {
  const slug = "device:microservices";
  const included = plan?.plan_feature?.find((row) => row.feature[0]?.slug === slug)?.quantity ?? 0;
  const price = plan?.plan_addon?.find((row) => row.feature[0]?.slug === slug)?.base_price;
  return { included, ...(price !== undefined ? { pricePerDeviceCents: price } : {}) };
}

/**
 * Why the payment form cannot be sent yet, as the catalogue key of its error (spec 3 §5, §8):
 * before the billing provider has initialised (its captcha still loading), or without a
 * verified captcha. Undefined when it can be sent.
 */
export function paymentFormBlocker(captcha: {
  loading: boolean;
  ready: boolean;
}):
  | "billing.errors.submitting_billing_form_before_initialization"
  | "billing.errors.recaptcha_not_verified"
  | undefined {
  if (captcha.loading) return "billing.errors.submitting_billing_form_before_initialization";
  if (!captcha.ready) return "billing.errors.recaptcha_not_verified";
  return undefined;
}

/**
 * A gate for a button whose clicks must be at least `ms` apart (spec 3 §9: the plan-change
 * confirm is debounced 500 ms): `pass()` is true for a click that counts.
 */
export function clickGate(ms: number, now: () => number = Date.now) {
  let last = Number.NEGATIVE_INFINITY;
  return {
    pass(): boolean {
      const at = now();
      if (at - last < ms) return false;
      last = at;
      return true;
    },
  };
}
