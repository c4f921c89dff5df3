import Stripe from "stripe";
import type { Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import type { Charge, PaymentMethodDetails, PaymentProvider, Refund } from "./provider.ts";

type Db = Pick<Queryable, "query">;

export type StripeSettings = {
  secretKey: string;
  webhookSecret: string | undefined;
  /** Another API address (stripe-mock, contract tests); Stripe's own by default. */
  apiUrl: string | undefined;
};

/**
 * The Stripe adapter (STRIPE_SECRET_KEY): a Customer per organization, SetupIntents that the
 * dashboard confirms with Stripe.js, the confirmed PaymentMethod as the organization's default,
 * and off-session PaymentIntents for invoices and credits. A bank debit's PaymentIntent is
 * `processing` until Stripe's webhook says how it ended.
 */
export function stripeProvider(settings: StripeSettings): PaymentProvider & { client: Stripe } {
  const api = settings.apiUrl ? new URL(settings.apiUrl) : undefined;
  const client = new Stripe(settings.secretKey, {
    ...(api
      ? { host: api.hostname, port: Number(api.port || 80), protocol: api.protocol === "https:" ? "https" : "http" }
      : {}),
    maxNetworkRetries: 2,
    telemetry: false,
  });

  async function customerOf(db: Db, organization: number): Promise<string> {
    const { rows } = await db.query<{ provider_customer: string | null; name: string; email: string | null }>(
      `SELECT b.provider_customer, o.name, b.email FROM "organization" o
         LEFT JOIN "billing_account" b ON b.organization = o.id WHERE o.id = $1`,
      [organization],
    );
    const row = rows[0];
    if (row?.provider_customer) return row.provider_customer;
    const customer = await client.customers.create({
      name: row?.name ?? `Organization ${organization}`,
      ...(row?.email ? { email: row.email } : {}),
      metadata: { organization: String(organization) },
    });
    await db.query(
      `INSERT INTO "billing_account" (organization, provider_customer) VALUES ($1, $2)
       ON CONFLICT (organization) DO UPDATE SET provider_customer = $2`,
      [organization, customer.id],
    );
    return customer.id;
  }

  return {
    name: "stripe",
    isTest: settings.secretKey.startsWith("sk_test_"),
    client,

    async createSetupIntent(db, organization) {
      const customer = await customerOf(db, organization);
      const intent = await client.setupIntents.create({
        customer,
        usage: "off_session",
        automatic_payment_methods: { enabled: true },
        metadata: { organization: String(organization) },
      });
      if (!intent.client_secret) throw new FlotillaError("service_unavailable", "Stripe gave no client_secret");
      return { id: intent.id, client_secret: intent.client_secret };
    },

    async takeSetupIntent(db, organization, id) {
      const customer = await customerOf(db, organization);
      const intent = await client.setupIntents.retrieve(id, { expand: ["payment_method"] });
      const method = intent.payment_method;
      if (intent.customer !== customer || intent.status !== "succeeded" || !method || typeof method === "string") {
        throw new FlotillaError("bad_request", "token_id: this setup intent is not confirmed (or was already used)");
      }
      await client.customers.update(customer, { invoice_settings: { default_payment_method: method.id } });
      return detailsOf(method);
    },

    async charge(db, organization, paymentMethod, amountInCents, description): Promise<Charge> {
      const customer = await customerOf(db, organization);
      try {
        const intent = await client.paymentIntents.create({
          amount: amountInCents,
          currency: "usd",
          customer,
          payment_method: paymentMethod,
          off_session: true,
          confirm: true,
          description,
          metadata: { organization: String(organization) },
        });
        const status =
          intent.status === "succeeded" ? "paid" : intent.status === "processing" ? "processing" : "failed";
        return {
          status,
          reference: intent.id,
          ...(status === "failed" ? { error: "The payment was not completed." } : {}),
        };
      } catch (error) {
        // A declined card is an outcome, not a fault: the invoice stays unpaid with Stripe's reason.
        if (error instanceof Stripe.errors.StripeCardError) {
          return { status: "failed", reference: error.payment_intent?.id ?? "", error: error.message };
        }
        throw error;
      }
    },

    async refund(_db, paymentReference, amountInCents, reason, idempotencyKey): Promise<Refund> {
      try {
        const refund = await client.refunds.create(
          { payment_intent: paymentReference, amount: amountInCents, metadata: { reason } },
          { idempotencyKey },
        );
        return refund.status === "failed" || refund.status === "canceled"
          ? { status: "failed", reference: refund.id, error: refund.failure_reason ?? "The refund failed." }
          : { status: "refunded", reference: refund.id };
      } catch (error) {
        // A payment that cannot take this refund: the credit stays with the organization instead.
        if (error instanceof Stripe.errors.StripeInvalidRequestError) {
          return { status: "failed", reference: "", error: error.message };
        }
        throw error;
      }
    },
  };
}

function detailsOf(method: Stripe.PaymentMethod): PaymentMethodDetails {
  const name = method.billing_details?.name ?? "";
  if (method.card) {
    return {
      reference: method.id,
      type: "card",
      card_type: method.card.brand,
      first_one: "",
      last_four: method.card.last4,
      month: String(method.card.exp_month).padStart(2, "0"),
      year: String(method.card.exp_year),
      full_name: name,
    };
  }
  const bank = method.us_bank_account ?? method.sepa_debit;
  if (bank) {
    return {
      reference: method.id,
      type: "bank_account",
      last_four: bank.last4 ?? "",
      routing_number: (method.us_bank_account?.routing_number ?? "") || "",
      full_name: name,
    };
  }
  throw new FlotillaError("bad_request", `token_id: payment methods of type ${method.type} are not supported`);
}

/** The invoice states a Stripe PaymentIntent event ends in (webhook), by the intent's id. */
export function outcomeOfEvent(event: Stripe.Event): { reference: string; state: "paid" | "past_due" } | undefined {
  if (event.type === "payment_intent.succeeded") return { reference: event.data.object.id, state: "paid" };
  if (event.type === "payment_intent.payment_failed") return { reference: event.data.object.id, state: "past_due" };
  return undefined;
}
