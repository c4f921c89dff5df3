/**
 * Billing rules (spec 3 §3, §4 Invoices / Past due and frozen / Plan change / Credits, §5, §9;
 * spec 2 §6 member pricing). Pure functions and data: the server's billing engine decides with
 * them and the dashboard shows the same answers. Money is in cents throughout.
 */
import { FREE_PLAN_DEVICE_ALLOWANCE } from "./names.ts";

// ---------------------------------------------------------------------------------------------
// Plans and cycles (spec 3 §9)

/** The free plan's billing code; cancelling a subscription moves to it, billed monthly (spec 3 §4). */
export const FREE_PLAN_CODE = "free";

export const BILLING_CYCLES = ["monthly", "annual"] as const;
export type BillingCycle = (typeof BILLING_CYCLES)[number];

/** The billing service's intervalLength in months: 1 is monthly, 12 annual. */
export const CYCLE_INTERVAL_LENGTH: Record<BillingCycle, number> = { monthly: 1, annual: 12 };

/** The cycle of an intervalLength, undefined for any other length. */
export function cycleOfIntervalLength(intervalLength: number): BillingCycle | undefined {
  return BILLING_CYCLES.find((cycle) => CYCLE_INTERVAL_LENGTH[cycle] === intervalLength);
}

/** Plan codes billed per device (spec 3 §9). */
export const DEVICE_BILLED_PLAN_CODES = ["prototype", "25m", "75m", "150m"] as const;

/** Price of an additional device per month, by tier and fleet type (spec 3 §9). */
export const ADDITIONAL_DEVICE_PRICE_CENTS = {
  prototype: { legacy: 200, microservices: 300 },
  pilot: { legacy: 150, microservices: 200 },
  production: { legacy: 150, microservices: 200 },
} as const;

/** Plan-change confirm clicks are debounced (spec 3 §9). */
export const PLAN_CHANGE_DEBOUNCE_MS = 500;
/** The billing plan is cached this long (spec 3 §9). */
export const BILLING_PLAN_CACHE_MS = 60 * 60 * 1000;

export const TIERS = ["custom", "enterprise", "free", "org", "pilot", "production", "prototype", "solo"] as const;
export type Tier = (typeof TIERS)[number] | "unknown";

/** The tier (and tier image) of a billing code; a version suffix such as "-v2" is ignored (spec 3 §9). */
export function tierOf(billingCode: string | null | undefined): Tier {
  const base = (billingCode ?? "")
    .trim()
    .toLowerCase()
    .replace(/-v\d+$/, "");
  return (TIERS as readonly string[]).includes(base) ? (base as Tier) : "unknown";
}

/** The plan fields the rules read (spec 3 §3 "plan", "Plan tier"); prices in cents. */
export interface BillingPlan {
  billing_code: string;
  title?: string;
  can_self_serve: boolean;
  monthly_price: number;
  annual_price: number;
  is_legacy?: boolean;
  is_valid_from__date?: string | Date | null;
  is_valid_until__date?: string | Date | null;
}

export interface PlanChoice {
  plan: BillingPlan;
  cycle: BillingCycle;
}

export type PlanChangeType = "no_change" | "contact_sales" | "cycle_change" | "upgrade" | "downgrade";

/**
 * What choosing `target` from `current` is (spec 3 §4 "Plan change"). `tierOrder` is the plans
 * from lowest to highest tier (the data API lists them by monthly price); a plan missing from it
 * is placed by annual price. The current plan and cycle is "no change" even when the plan is not
 * self-serve, so an enterprise organization still sees its Current plan marker.
 */
export function planChangeType(
  current: PlanChoice,
  target: PlanChoice,
  tierOrder: readonly Pick<BillingPlan, "billing_code">[],
): PlanChangeType {
  const samePlan = current.plan.billing_code === target.plan.billing_code;
  if (samePlan && current.cycle === target.cycle) return "no_change";
  if (!current.plan.can_self_serve || !target.plan.can_self_serve) return "contact_sales";
  if (samePlan) return "cycle_change";
  const rank = (plan: BillingPlan) => tierOrder.findIndex((tier) => tier.billing_code === plan.billing_code);
  const from = rank(current.plan);
  const to = rank(target.plan);
  if (from >= 0 && to >= 0 && from !== to) return to > from ? "upgrade" : "downgrade";
  return target.plan.annual_price < current.plan.annual_price ? "downgrade" : "upgrade";
}

/**
 * Whether the confirm dialog asks for optional feedback (planChangeReason): a self-serve move to
 * a plan with a lower annual price (spec 3 §4 "A downgrade (lower annual price)").
 */
export function needsFeedback(current: PlanChoice, target: PlanChoice): boolean {
  return (
    current.plan.can_self_serve &&
    target.plan.can_self_serve &&
    current.plan.billing_code !== target.plan.billing_code &&
    target.plan.annual_price < current.plan.annual_price
  );
}

const toTime = (date: string | Date | null | undefined): number | undefined => {
  if (date === null || date === undefined || date === "") return undefined;
  const time = new Date(date).getTime();
  return Number.isNaN(time) ? undefined : time;
};

/** Whether `now` is within the plan's validity dates, both ends inclusive; a missing end is open. */
export function isPlanValidAt(plan: BillingPlan, now: Date): boolean {
  const from = toTime(plan.is_valid_from__date);
  const until = toTime(plan.is_valid_until__date);
  const time = now.getTime();
  return (from === undefined || from <= time) && (until === undefined || time <= until);
}

/** The plans offered for self-serve (spec 3 §9): self-serve, not legacy, paid, valid now, cheapest first. */
export function selfServePlans<P extends BillingPlan>(plans: readonly P[], now: Date): P[] {
  return plans
    .filter((plan) => plan.can_self_serve && !plan.is_legacy && plan.monthly_price > 0 && isPlanValidAt(plan, now))
    .sort((a, b) => a.monthly_price - b.monthly_price);
}

/** A plan's price per month in cents on a cycle: the annual price is shown divided by 12 (not rounded). */
export function pricePerMonth(plan: Pick<BillingPlan, "monthly_price" | "annual_price">, cycle: BillingCycle): number {
  return cycle === "annual" ? plan.annual_price / 12 : plan.monthly_price;
}

/**
 * Whether moving to the free plan is refused with the warning and a contact-sales button
 * (spec 3 §4): the organization has frozen free devices or more devices than the free allowance.
 */
export function freePlanBlocked({
  deviceCount,
  freeAllowance = FREE_PLAN_DEVICE_ALLOWANCE,
  hasFrozenFreeDevices,
}: {
  deviceCount: number;
  freeAllowance?: number;
  hasFrozenFreeDevices: boolean;
}): boolean {
  return hasFrozenFreeDevices || deviceCount > freeAllowance;
}

// ---------------------------------------------------------------------------------------------
// Past due and frozen (spec 3 §4, §9)

/** From this many days past due the banner is an error counting down to the freeze. */
export const PAST_DUE_WARNING_DAYS = 30;
/** At this many days past due the organization is frozen. */
export const FREEZE_DAYS = 60;

const DAY_MS = 24 * 60 * 60 * 1000;

export type PastDueState =
  | { state: "none" }
  | { state: "warning"; daysPastDue: number }
  | { state: "error"; daysPastDue: number; daysUntilFreeze: number }
  | { state: "frozen"; daysPastDue: number };

/**
 * The past-due banner for an organization's has_past_due_invoice_since__date (spec 3 §4): whole
 * days elapsed; under 30 a warning, 30 to 59 an error with the days left, 60 or more frozen.
 */
export function pastDueState(pastDueSince: string | Date | null | undefined, now: Date): PastDueState {
  const since = toTime(pastDueSince);
  if (since === undefined) return { state: "none" };
  const daysPastDue = Math.max(0, Math.floor((now.getTime() - since) / DAY_MS));
  if (daysPastDue >= FREEZE_DAYS) return { state: "frozen", daysPastDue };
  if (daysPastDue >= PAST_DUE_WARNING_DAYS)
    return { state: "error", daysPastDue, daysUntilFreeze: FREEZE_DAYS - daysPastDue };
  return { state: "warning", daysPastDue };
}

// ---------------------------------------------------------------------------------------------
// Invoices (spec 3 §3, §4 Invoices)

export const INVOICE_STATES = [
  "paid",
  "voided",
  "void",
  "closed",
  "pending",
  "open",
  "processing",
  "draft",
  "failed",
  "past_due",
] as const;
export type InvoiceState = (typeof INVOICE_STATES)[number];
export type Tone = "success" | "warning" | "error";

/** The invoice list shows the newest 6, with "view all" when there are more. */
export const INVOICES_SHOWN = 6;

const INVOICE_TONES: Record<InvoiceState, Tone> = {
  paid: "success",
  voided: "success",
  void: "success",
  closed: "success",
  pending: "warning",
  processing: "warning",
  open: "warning",
  draft: "warning",
  past_due: "error",
  failed: "error",
};

/** Done is green, waiting orange, past due and failed red; a state we do not know shows as waiting. */
export function invoiceStateTone(state: string): Tone {
  return INVOICE_TONES[state as InvoiceState] ?? "warning";
}

/** Draft invoices cannot be downloaded yet (tooltip: not yet available). */
export function canDownloadInvoice(state: string): boolean {
  return state !== "draft";
}

/** The newest INVOICES_SHOWN invoices, and whether "view all" is offered. */
export function latestInvoices<I extends { created_at: string | Date }>(
  invoices: readonly I[],
): { shown: I[]; hasMore: boolean } {
  const newestFirst = [...invoices].sort((a, b) => (toTime(b.created_at) ?? 0) - (toTime(a.created_at) ?? 0));
  return { shown: newestFirst.slice(0, INVOICES_SHOWN), hasMore: invoices.length > INVOICES_SHOWN };
}

// ---------------------------------------------------------------------------------------------
// Credits (spec 3 §4 Credits, §5, §9)

export const CREDIT_FEATURE_SLUG = "device:microservices";
/** Credits are sold only on these plans (spec 3 §5). */
export const CREDIT_BILLING_CODES = ["pilot-v2", "production-v2", "enterprise-v2"] as const;
/** Largest quantity, threshold and estimated device count the credit inputs take. */
export const CREDITS_MAX = 1_500_000;
export const CREDIT_MONTHS_MAX = 120;
export const CREDIT_MONTHS_DEFAULT = 12;
export const CREDIT_EXPIRY_YEARS = 10;
/** A purchase total above this shows Contact sales instead of the buy button. */
export const CREDITS_CONTACT_SALES_ABOVE_CENTS = 100_000_000;
export const PURCHASE_HISTORY_PAGE_SIZE = 5;

export const CREDIT_PAYMENT_STATUSES = ["paid", "complimentary", "manually invoiced", "failed"] as const;
export type CreditPaymentStatus = (typeof CREDIT_PAYMENT_STATUSES)[number];

export function creditsAvailableFor(billingCode: string | null | undefined): boolean {
  return (CREDIT_BILLING_CODES as readonly string[]).includes(billingCode ?? "");
}

/**
 * Credits to buy for the calculator (spec 3 §9): ceil((current + estimated − included) × months / 2)
 * minus the balance, never below 0.
 */
export function creditsNeeded({
  currentDevices,
  estimatedDevices,
  includedDevices,
  months,
  balance,
}: {
  currentDevices: number;
  estimatedDevices: number;
  includedDevices: number;
  months: number;
  balance: number;
}): number {
  return Math.max(0, Math.ceil(((currentDevices + estimatedDevices - includedDevices) * months) / 2) - balance);
}

/** The low-balance notification threshold offered by default: twice the device count. */
export function defaultCreditThreshold(deviceCount: number): number {
  return 2 * deviceCount;
}

/** Paid, complimentary and manually invoiced bundles count toward the balance; "manually_invoiced" is read the same. */
export function creditBalanceCounts(paymentStatus: string | null | undefined): boolean {
  const status = (paymentStatus ?? "").replace(/_/g, " ");
  return status === "paid" || status === "complimentary" || status === "manually invoiced";
}

/** The balance: the total_balance of the bundles that count. */
export function creditBalance(bundles: readonly { payment_status: string | null; total_balance: number }[]): number {
  return bundles.reduce(
    (sum, bundle) => (creditBalanceCounts(bundle.payment_status) ? sum + bundle.total_balance : sum),
    0,
  );
}

/** When credits bought at `purchasedAt` expire (10 years later, same calendar day, UTC). */
export function creditExpiry(purchasedAt: Date): Date {
  const expiry = new Date(purchasedAt.getTime());
  expiry.setUTCFullYear(expiry.getUTCFullYear() + CREDIT_EXPIRY_YEARS);
  return expiry;
}

/** Whether a purchase total shows Contact sales instead of the buy button. */
export function creditPurchaseNeedsContactSales(totalCents: number): boolean {
  return totalCents > CREDITS_CONTACT_SALES_ABOVE_CENTS;
}

/** The texts of the credit inputs (spec 3 §5 gives the rules, not the words). */
export const CREDIT_INPUT_TEXTS = {
  digitsOnly: "Only digits are allowed",
  maximum: "The value must be at most {max}",
  noCreditsNeeded: "No credits needed",
} as const;

/** undefined, or the text of the first rule a digits-only input with a maximum breaks; empty is not an error. */
function digitsProblem(input: string, max: number): string | undefined {
  const text = input.trim();
  if (text === "") return undefined;
  if (!/^\d+$/.test(text)) return CREDIT_INPUT_TEXTS.digitsOnly;
  if (Number(text) > max) return CREDIT_INPUT_TEXTS.maximum.replace("{max}", max.toLocaleString("en-US"));
  return undefined;
}

/** A value that passed its check, as a number; null when empty. */
export function parseCreditInput(input: string): number | null {
  const text = input.trim();
  return /^\d+$/.test(text) ? Number(text) : null;
}

/** Credit quantity: digits only, 0 to 1,500,000. */
export const validateCreditQuantity = (input: string) => digitsProblem(input, CREDITS_MAX);
/** Buying needs a valid, non-zero quantity. */
export function canPurchaseCredits(input: string): boolean {
  return validateCreditQuantity(input) === undefined && (parseCreditInput(input) ?? 0) > 0;
}

/** Low-balance threshold: digits only, at most 1,500,000. */
export const validateCreditThreshold = (input: string) => digitsProblem(input, CREDITS_MAX);
/** Apply is enabled for a valid threshold that differs from the saved one. */
export function canApplyCreditThreshold(input: string, saved: number | null | undefined): boolean {
  const value = parseCreditInput(input);
  return validateCreditThreshold(input) === undefined && value !== null && value !== (saved ?? null);
}

/** Calculator: estimated devices, digits only, at most 1,500,000. */
export const validateEstimatedDevices = (input: string) => digitsProblem(input, CREDITS_MAX);
/** Calculator: months, digits only, at most 120 (default 12). */
export const validateCreditMonths = (input: string) => digitsProblem(input, CREDIT_MONTHS_MAX);

// ---------------------------------------------------------------------------------------------
// Member seats (spec 2 §6, spec 3 §6, §9)

/** Price per member per month in cents, by seat role; observers are free and unlimited. */
export const MEMBER_PRICES_PER_MONTH_CENTS = {
  observer: 0,
  "safe-operator": 2900,
  operator: 2900,
  "safe-developer": 4900,
  developer: 4900,
  administrator: 4900,
} as const;
export type PricedSeatRole = keyof typeof MEMBER_PRICES_PER_MONTH_CENTS;

/**
 * A member seat's price: "base price times discount divided by 100" (spec 3 §9), implemented
 * literally. Read that way the discount is the percentage of the base price that is charged
 * (100 = full price, 80 = 20 % off, 0 = free), so a subscription without a discount row passes
 * 100, the default. Not rounded: totals are rounded when shown.
 */
export function seatPrice(basePriceCents: number, discountPercentage = 100): number {
  return (basePriceCents * discountPercentage) / 100;
}

/** Members included in a tier: the plan's number, at least 1 (spec 3 §9). */
export function includedMembers(count: number | null | undefined): number {
  return Math.max(1, Math.floor(count ?? 0));
}

/** One role's seats on the organization's plan (the billing usage's add-on row `member:{role}`). */
export interface SeatUsage {
  /** Seats of the role the plan includes. */
  included: number;
  /** Members who hold a seat of the role now. */
  used: number;
  /** What a seat beyond the included ones costs per month, in cents. */
  unitPriceCents: number;
}

/**
 * What one more member at a role costs (spec 3 §6: role options depend on pricing and usage):
 * - free: the role costs nothing;
 * - included: the plan includes seats of the role and some are still unused: nothing more to pay;
 * - extra: every included seat is used: one more costs the extra-seat price;
 * - priced: the plan includes none: the seat's price.
 */
export type SeatOffer =
  | { kind: "free" }
  | { kind: "included"; used: number; included: number }
  | { kind: "extra"; used: number; included: number; priceCents: number }
  | { kind: "priced"; priceCents: number };

/**
 * The offer for a role from its list price and, when known, its seats on the plan. Without usage
 * (the viewer may not read billing, or the plan sells no such seat) the list price stands; with
 * it, the plan's own seat price does.
 */
export function seatOffer(listPriceCents: number, usage?: SeatUsage): SeatOffer {
  const priceCents = usage ? usage.unitPriceCents : listPriceCents;
  if (usage && usage.included > 0) {
    const { used, included } = usage;
    if (used < included) return { kind: "included", used, included };
    return priceCents === 0 ? { kind: "free" } : { kind: "extra", used, included, priceCents };
  }
  return priceCents === 0 ? { kind: "free" } : { kind: "priced", priceCents };
}

/** What the offer adds to the monthly bill, in cents. */
export function seatOfferCents(offer: SeatOffer): number {
  return offer.kind === "extra" || offer.kind === "priced" ? offer.priceCents : 0;
}

/** Cents as dollars with 2 decimals and thousands separators: 123456 → "$1,234.56". */
export function formatDollars(cents: number): string {
  const dollars = Math.round(cents) / 100;
  return `$${dollars.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** The add-members dialog's total: "$49.00/month" (spec 3 §9). */
export function formatDollarsPerMonth(cents: number): string {
  return `${formatDollars(cents)}/month`;
}

// ---------------------------------------------------------------------------------------------
// Payment method (spec 3 §3, §9) and the built-in test payment provider's card checks

export const CARD_TYPES = ["amex", "discover", "mastercard", "visa"] as const;
export type CardType = (typeof CARD_TYPES)[number] | "unknown";

const digitsOf = (text: string | number | null | undefined) => String(text ?? "").replace(/\D/g, "");

/** The last four digits a card is shown by. */
export function cardLastFour(cardNumber: string | null | undefined): string {
  return digitsOf(cardNumber).slice(-4);
}

/** A card's expiry month padded to 2 digits: 3 → "03". */
export function padCardMonth(month: number | string): string {
  return String(month).trim().padStart(2, "0");
}

/** The card type of a brand name ("Visa", "American Express", "MasterCard", "amex"…); unknown otherwise. */
export function cardTypeOf(brand: string | null | undefined): CardType {
  const name = (brand ?? "").toLowerCase().replace(/[\s_-]/g, "");
  if (name === "amex" || name === "americanexpress") return "amex";
  if (name === "mastercard" || name === "discover" || name === "visa") return name;
  return "unknown";
}

/** The card type a number's prefix belongs to (for the test provider, which has no brand to ask). */
export function cardTypeOfNumber(cardNumber: string): CardType {
  const digits = digitsOf(cardNumber);
  if (/^3[47]/.test(digits)) return "amex";
  if (/^4/.test(digits)) return "visa";
  if (/^(5[1-5]|2(22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720))/.test(digits)) return "mastercard";
  if (/^(6011|65|64[4-9])/.test(digits)) return "discover";
  return "unknown";
}

/** 12 to 19 digits (spaces and dashes ignored) passing the Luhn check. */
export function isValidCardNumber(cardNumber: string): boolean {
  if (!/^[\d\s-]+$/.test(cardNumber)) return false;
  const digits = digitsOf(cardNumber);
  if (digits.length < 12 || digits.length > 19) return false;
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

/**
 * Whether a card with this expiry can still be used at `now`: month 1–12, a 2- or 4-digit year
 * (2-digit years are 20xx), valid through the end of its month (compared in UTC).
 */
export function isValidExpiry(month: number | string, year: number | string, now: Date): boolean {
  const monthText = String(month).trim();
  const yearText = String(year).trim();
  if (!/^\d{1,2}$/.test(monthText) || !/^(\d{2}|\d{4})$/.test(yearText)) return false;
  const m = Number(monthText);
  const y = yearText.length === 2 ? 2000 + Number(yearText) : Number(yearText);
  if (m < 1 || m > 12) return false;
  return y * 12 + m >= now.getUTCFullYear() * 12 + now.getUTCMonth() + 1;
}

/** 3 digits, or 4 for American Express. */
export function isValidCvc(cvc: string, brand: string | null | undefined): boolean {
  return (cardTypeOf(brand) === "amex" ? /^\d{4}$/ : /^\d{3}$/).test(cvc.trim());
}
