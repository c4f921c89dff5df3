import crypto from "node:crypto";
import { cardTypeOf, isValidCardNumber, isValidCvc, isValidExpiry } from "@flotilla/domain";
import type { Config } from "../../config.ts";
import type { Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { stripeProvider } from "./stripe-provider.ts";

type Db = Pick<Queryable, "query">;

/** A payment method as the provider confirmed it: what the billing info shows, never a full number. */
export type PaymentMethodDetails = {
  reference: string;
  type: "card" | "bank_account";
  card_type?: string;
  first_one?: string;
  last_four: string;
  month?: string;
  year?: string;
  routing_number?: string;
  full_name: string;
};

/** A charge's outcome: `processing` when the money arrives later (a bank debit; a webhook ends it). */
export type Charge = { status: "paid" | "failed" | "processing"; reference: string; error?: string };

/**
 * The payment provider behind the billing service (docs/billing.md): it sets up payment methods
 * (a setup intent the client confirms with the provider, then hands back) and charges invoices.
 */
export interface PaymentProvider {
  readonly name: string;
  /** True for the built-in provider: the dashboard labels its payments as test payments. */
  readonly isTest: boolean;
  createSetupIntent(db: Db, organization: number): Promise<{ id: string; client_secret: string }>;
  /** The payment method a confirmed setup intent of this organization set up; it can be used once. */
  takeSetupIntent(db: Db, organization: number, id: string): Promise<PaymentMethodDetails>;
  /** Charges the organization's payment method (its provider reference). */
  charge(
    db: Db,
    organization: number,
    paymentMethod: string,
    amountInCents: number,
    description: string,
  ): Promise<Charge>;
  /**
   * Sends back part of a payment (the reference `charge` answered) to the method it came from.
   * `idempotencyKey` names this refund: sent again (a retried request, another instance), the
   * provider answers the first refund instead of making a second one.
   */
  refund(
    db: Db,
    paymentReference: string,
    amountInCents: number,
    reason: string,
    idempotencyKey: string,
  ): Promise<Refund>;
}

/** A refund's outcome; `failed` with the provider's reason. */
export type Refund = { status: "refunded" | "failed"; reference: string; error?: string };

/** A card that is accepted as a payment method but whose every charge is declined. */
export const DECLINING_TEST_CARD = "4000000000000341";
const DECLINING = "pm_declining_";

export type CardInput = { number: string; exp_month: string; exp_year: string; cvc: string; name: string };
export type BankAccountInput = {
  routing_number: string;
  account_number: string;
  name: string;
  mandate_accepted: boolean;
};

/**
 * The built-in provider (the embedded default): setup intents live in the database and are
 * confirmed by the dashboard's own card or bank-debit form, which this server validates (Luhn,
 * expiry, CVC; a routing number and an accepted debit mandate). Nothing leaves the server and
 * no money moves: charges succeed — except with DECLINING_TEST_CARD, which attaches but whose
 * charges fail (as Stripe's test card 4000 0000 0000 0341) — and the dashboard says these are
 * test payments.
 */
export const builtInProvider: PaymentProvider & {
  confirm(
    db: Db,
    id: string,
    clientSecret: string,
    input: { card?: CardInput; bank_account?: BankAccountInput },
  ): Promise<PaymentMethodDetails>;
} = {
  name: "built-in",
  isTest: true,

  async createSetupIntent(db, organization) {
    const id = `seti_${crypto.randomBytes(12).toString("hex")}`;
    const clientSecret = `${id}_secret_${crypto.randomBytes(16).toString("hex")}`;
    await db.query(
      `INSERT INTO "setup_intent" (id, organization, provider, client_secret) VALUES ($1, $2, 'built-in', $3)`,
      [id, organization, clientSecret],
    );
    return { id, client_secret: clientSecret };
  },

  async confirm(db, id, clientSecret, input) {
    const details = input.card
      ? cardDetails(input.card)
      : input.bank_account
        ? bankDetails(input.bank_account)
        : undefined;
    if (!details) throw new FlotillaError("bad_request", "Give a card or a bank account to confirm the setup intent");
    const { rows } = await db.query(
      `UPDATE "setup_intent" SET status = 'succeeded', payment_method = $3::jsonb
        WHERE id = $1 AND client_secret = $2 AND status = 'requires_payment_method' RETURNING id`,
      [id, clientSecret, JSON.stringify(details)],
    );
    if (rows.length === 0) throw new FlotillaError("not_found", "This setup intent does not exist or was already used");
    return details;
  },

  async takeSetupIntent(db, organization, id) {
    const { rows } = await db.query<{ payment_method: PaymentMethodDetails }>(
      `UPDATE "setup_intent" SET status = 'used' WHERE id = $1 AND organization = $2 AND status = 'succeeded'
       RETURNING payment_method`,
      [id, organization],
    );
    const details = rows[0]?.payment_method;
    if (!details)
      throw new FlotillaError("bad_request", "token_id: this setup intent is not confirmed (or was already used)");
    return details;
  },

  async charge(_db, _organization, paymentMethod) {
    const reference = `ch_${crypto.randomBytes(12).toString("hex")}`;
    if (paymentMethod.startsWith(DECLINING)) return { status: "failed", reference, error: "Your card was declined." };
    return { status: "paid", reference };
  },

  async refund() {
    // No money moved, so none moves back: the refund is recorded as the test payment was.
    return { status: "refunded", reference: `re_${crypto.randomBytes(12).toString("hex")}` };
  },
};

const providers = new WeakMap<Config, PaymentProvider>();

/** The deployment's payment provider: Stripe when STRIPE_SECRET_KEY is set, else the built-in one (one per configuration). */
export function paymentProviderFor(config: Config): PaymentProvider {
  let provider = providers.get(config);
  if (!provider) {
    provider = config.stripe ? stripeProvider(config.stripe) : builtInProvider;
    providers.set(config, provider);
  }
  return provider;
}

function cardDetails(card: CardInput): PaymentMethodDetails {
  const number = card.number.replace(/[\s-]/g, "");
  const brand = cardTypeOf(brandOf(number));
  const problems = [
    isValidCardNumber(number) ? undefined : "card number: not a valid card number",
    isValidExpiry(card.exp_month, card.exp_year, new Date()) ? undefined : "expiry: not a valid date in the future",
    isValidCvc(card.cvc, brand) ? undefined : `CVC: must be ${brand === "amex" ? 4 : 3} digits`,
    card.name.trim() ? undefined : "name on card: is required",
  ].filter(Boolean);
  if (problems.length > 0) throw new FlotillaError("bad_request", problems.join("; "));
  const year = card.exp_year.length === 2 ? `20${card.exp_year}` : card.exp_year;
  return {
    reference: `${number === DECLINING_TEST_CARD ? DECLINING : "pm_"}${crypto.randomBytes(12).toString("hex")}`,
    type: "card",
    card_type: brand,
    first_one: number.slice(0, 1),
    last_four: number.slice(-4),
    month: card.exp_month.padStart(2, "0"),
    year,
    full_name: card.name.trim(),
  };
}

function bankDetails(account: BankAccountInput): PaymentMethodDetails {
  const problems = [
    /^\d{9}$/.test(account.routing_number) ? undefined : "routing number: must be 9 digits",
    /^\d{4,17}$/.test(account.account_number) ? undefined : "account number: must be 4 to 17 digits",
    account.name.trim() ? undefined : "name on account: is required",
    account.mandate_accepted ? undefined : "the recurring debit terms must be accepted",
  ].filter(Boolean);
  if (problems.length > 0) throw new FlotillaError("bad_request", problems.join("; "));
  return {
    reference: `pm_${crypto.randomBytes(12).toString("hex")}`,
    type: "bank_account",
    last_four: account.account_number.slice(-4),
    routing_number: account.routing_number,
    full_name: account.name.trim(),
  };
}

/** The card network from the number's prefix (IIN ranges of the four networks the spec names). */
function brandOf(number: string): string {
  if (/^3[47]/.test(number)) return "amex";
  if (/^4/.test(number)) return "visa";
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(number)) return "mastercard";
  if (/^(6011|65|64[4-9])/.test(number)) return "discover";
  return "unknown";
}
