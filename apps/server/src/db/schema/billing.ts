import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { user } from "./accounts.ts";
import { createdAt, date, id, modifiedAt, optional, ownedBy, requires, shortText } from "./columns.ts";
import { organization } from "./organizations.ts";

// Plans, features, subscriptions, credits and support tiers (spec 3 §3, §9). The catalogue
// (features, plans and what they include or offer, support tiers) is seeded by a migration and
// public; subscriptions and credits belong to an organization. Money is held in cents.

/** Something a plan provides or sells: devices of a fleet type (`device:microservices`), seats (`member:developer`), SAML, support. */
export const feature = pgTable("feature", {
  id: id(),
  created_at: createdAt(),
  title: shortText(),
  slug: text().notNull().unique(),
  billing_code: text(),
});

export const plan = pgTable(
  "plan",
  {
    id: id(),
    created_at: createdAt(),
    title: shortText(),
    billing_code: text().unique(),
    monthly_price: integer().notNull().default(0),
    annual_price: integer().notNull().default(0),
    can_self_serve: boolean().notNull().default(false),
    is_legacy: boolean().notNull().default(false),
    is_valid_from__date: date(),
    is_valid_until__date: date(),
  },
  (t) => [
    check("plan_price_check", sql`${t.monthly_price} >= 0 AND ${t.annual_price} >= 0`),
    check(
      "plan_validity_check",
      sql`${t.is_valid_from__date} IS NULL OR ${t.is_valid_until__date} IS NULL OR ${t.is_valid_from__date} < ${t.is_valid_until__date}`,
    ),
  ],
);

/** `plan__provides__feature`: what a plan includes, e.g. 10 devices, 1 administrator seat. */
export const plan_feature = pgTable(
  "plan_feature",
  {
    id: id(),
    created_at: createdAt(),
    plan: ownedBy(() => plan.id),
    feature: ownedBy(() => feature.id),
    quantity: integer().notNull().default(1),
  },
  (t) => [
    uniqueIndex("plan_feature_plan_feature_key").on(t.plan, t.feature),
    check("plan_feature_quantity_check", sql`${t.quantity} >= 0`),
  ],
);

/** `plan__offers__feature`: what a plan sells on top, at `base_price` cents per unit and month. */
export const plan_addon = pgTable(
  "plan_addon",
  {
    id: id(),
    created_at: createdAt(),
    plan: ownedBy(() => plan.id),
    feature: ownedBy(() => feature.id),
    base_price: integer().notNull().default(0),
    can_self_serve: boolean().notNull().default(false),
    bills_dynamically: boolean().notNull().default(false),
  },
  (t) => [
    uniqueIndex("plan_addon_plan_feature_key").on(t.plan, t.feature),
    check("plan_addon_base_price_check", sql`${t.base_price} >= 0`),
  ],
);

export const plan_has_discount_code = pgTable(
  "plan_has_discount_code",
  {
    id: id(),
    created_at: createdAt(),
    plan: ownedBy(() => plan.id),
    discount_code: shortText(),
  },
  (t) => [uniqueIndex("plan_has_discount_code_key").on(t.plan, t.discount_code)],
);

/**
 * An organization's plan over a period. `is_active` is computed by the model from the dates; an
 * organization has at most one subscription without an end (its current one).
 */
export const subscription = pgTable(
  "subscription",
  {
    id: id(),
    created_at: createdAt(),
    is_for__organization: ownedBy(() => organization.id),
    is_for__plan: requires(() => plan.id),
    billing_cycle: text().notNull().default("monthly"),
    starts_on__date: date().notNull().defaultNow(),
    ends_on__date: date(),
    discount_percentage: real().notNull().default(0),
    origin: text().notNull().default("self-serve"),
    /** Why the organization moved away from this plan, when it said (downgrade feedback). */
    change_reason: text(),
  },
  (t) => [
    index("subscription_organization_idx").on(t.is_for__organization),
    uniqueIndex("subscription_open_key").on(t.is_for__organization).where(sql`${t.ends_on__date} IS NULL`),
    check("subscription_billing_cycle_check", sql`${t.billing_cycle} IN ('monthly', 'annual')`),
    check("subscription_discount_check", sql`${t.discount_percentage} >= 0 AND ${t.discount_percentage} <= 100`),
    check("subscription_period_check", sql`${t.ends_on__date} IS NULL OR ${t.starts_on__date} <= ${t.ends_on__date}`),
  ],
);

/** Add-on units bought in advance for a subscription. */
export const subscription_prepaid_addon = pgTable(
  "subscription_prepaid_addon",
  {
    id: id(),
    created_at: createdAt(),
    is_for__subscription: ownedBy(() => subscription.id),
    is_for__plan_addon: requires(() => plan_addon.id),
    discount_percentage: real().notNull().default(0),
    quantity: integer().notNull(),
    starts_on__date: date().notNull().defaultNow(),
    expires_on__date: date(),
  },
  (t) => [
    index("subscription_prepaid_addon_subscription_idx").on(t.is_for__subscription),
    check("subscription_prepaid_addon_quantity_check", sql`${t.quantity} > 0`),
    check(
      "subscription_prepaid_addon_discount_check",
      sql`${t.discount_percentage} >= 0 AND ${t.discount_percentage} <= 100`,
    ),
  ],
);

/** `subscription__discounts__plan__offers__feature` (`subscription_addon_discount`): a discount on one add-on. */
export const subscription_discounts_plan_addon = pgTable(
  "subscription_discounts_plan_addon",
  {
    id: id(),
    created_at: createdAt(),
    subscription: ownedBy(() => subscription.id),
    discounts__plan_addon: requires(() => plan_addon.id),
    discount_percentage: real().notNull(),
  },
  (t) => [
    uniqueIndex("subscription_discounts_plan_addon_key").on(t.subscription, t.discounts__plan_addon),
    check(
      "subscription_discounts_plan_addon_discount_check",
      sql`${t.discount_percentage} >= 0 AND ${t.discount_percentage} <= 100`,
    ),
  ],
);

/**
 * Credits bought by an organization for a feature (spec 3 §4 Credits). `total_balance` is what is
 * left of the bundle; the model's `available_balance` is the part that can be spent: paid,
 * complimentary and manually invoiced bundles count until they expire, 10 years after purchase.
 */
export const credit_bundle = pgTable(
  "credit_bundle",
  {
    id: id(),
    created_at: createdAt(),
    modified_at: modifiedAt(),
    belongs_to__organization: ownedBy(() => organization.id),
    is_for__feature: requires(() => feature.id),
    is_created_by__user: optional(() => user.id),
    original_quantity: integer().notNull(),
    total_balance: integer().notNull(),
    unit_cost: integer().notNull(),
    total_cost: integer().notNull(),
    payment_status: text().notNull().default("processing"),
    expires_on__date: timestamp({ withTimezone: true }).notNull().default(sql`now() + interval '10 years'`),
    is_associated_with__invoice_id: text(),
    error_message: text(),
  },
  (t) => [
    index("credit_bundle_organization_idx").on(t.belongs_to__organization, t.is_for__feature),
    check(
      "credit_bundle_payment_status_check",
      sql`${t.payment_status} IN ('processing', 'paid', 'failed', 'complimentary', 'cancelled', 'refunded', 'manually invoiced')`,
    ),
    check(
      "credit_bundle_quantity_check",
      sql`${t.original_quantity} > 0 AND ${t.total_balance} >= 0 AND ${t.total_balance} <= ${t.original_quantity}`,
    ),
    check("credit_bundle_cost_check", sql`${t.unit_cost} >= 0 AND ${t.total_cost} >= 0`),
  ],
);

/** `organization__owns_credit_notification_for__feature`: warn when the balance falls below a threshold. */
export const organization_credit_notification = pgTable(
  "organization_credit_notification",
  {
    id: id(),
    created_at: createdAt(),
    organization: ownedBy(() => organization.id),
    owns_credit_notification_for__feature: ownedBy(() => feature.id),
    is_sent_when_below__threshold: integer().notNull(),
  },
  (t) => [
    uniqueIndex("organization_credit_notification_key").on(t.organization, t.owns_credit_notification_for__feature),
    check(
      "organization_credit_notification_threshold_check",
      sql`${t.is_sent_when_below__threshold} >= 0 AND ${t.is_sent_when_below__threshold} <= 1500000`,
    ),
  ],
);

export const support_tier = pgTable("support_tier", {
  id: id(),
  created_at: createdAt(),
  title: shortText(),
  slug: text().notNull().unique(),
  includes_private_support: boolean().notNull().default(false),
  includes__SLA: text(),
});

/** Which support tier a (support) feature gives: a plan provides the feature, the feature the tier. */
export const support_feature = pgTable("support_feature", {
  id: id(),
  created_at: createdAt(),
  feature: ownedBy(() => feature.id).unique(),
  support_tier: requires(() => support_tier.id),
});

// The billing service's own records (balena-sdk `models.billing`): an organization's account
// details, its payment method, setup intents of the payment provider, and invoices. Written by
// features/billing only; never exposed through the data API.

/** Company info and tax ID (spec 3 §3 "Billing account info"); one row per organization that set them. */
export const billing_account = pgTable("billing_account", {
  organization: integer()
    .primaryKey()
    .references(() => organization.id, { onDelete: "cascade" }),
  email: text(),
  company_name: text(),
  /** address1, address2, city, state, zip, country, phone */
  address: jsonb().notNull().default({}),
  /** {type, value, country?} or null */
  tax_id: jsonb(),
  /** "active" enables billing info and invoices (spec 3 §3). */
  account_state: text().notNull().default("active"),
  /** The payment provider's customer (Stripe `cus_…`), created with the first setup intent. */
  provider_customer: text(),
  /**
   * When the administrators were told the credit balance fell below its threshold; cleared once it
   * is at or above it again, so each fall is told once (spec 3 §4 Credits).
   */
  credit_low_notified_at: timestamp({ withTimezone: true }),
  modified_at: modifiedAt(),
});

/** The organization's payment method, as the provider confirmed it (card details are never stored whole). */
export const payment_method = pgTable("payment_method", {
  organization: integer()
    .primaryKey()
    .references(() => organization.id, { onDelete: "cascade" }),
  provider: text().notNull(),
  provider_reference: text().notNull(),
  type: text().notNull(),
  card_type: text(),
  first_one: text(),
  last_four: text(),
  month: text(),
  year: text(),
  routing_number: text(),
  full_name: text(),
  created_at: createdAt(),
});

/** A payment method being set up: the client confirms it with the provider, then hands its id back. */
export const setup_intent = pgTable(
  "setup_intent",
  {
    id: text().primaryKey(),
    organization: ownedBy(() => organization.id),
    provider: text().notNull(),
    client_secret: text().notNull(),
    status: text().notNull().default("requires_payment_method"),
    /** What the confirmation gave (type, card_type, last_four, …), until it becomes the payment method. */
    payment_method: jsonb(),
    created_at: createdAt(),
  },
  (t) => [check("setup_intent_status_check", sql`${t.status} IN ('requires_payment_method', 'succeeded', 'used')`)],
);

/** An invoice (spec 3 §3, §4): lines and amounts in cents; `draft` ones cannot be downloaded. */
export const invoice = pgTable(
  "invoice",
  {
    id: id(),
    uuid: text().notNull().unique(),
    organization: ownedBy(() => organization.id),
    invoice_number: text().notNull().unique(),
    state: text().notNull().default("draft"),
    currency: text().notNull().default("usd"),
    subtotal_in_cents: integer().notNull(),
    total_in_cents: integer().notNull(),
    /** [{description, quantity, unit_cost_in_cents, amount_in_cents}] */
    lines: jsonb().notNull().default([]),
    period_start: date(),
    period_end: date(),
    /** The provider's payment of it (a Stripe PaymentIntent), to match its webhooks. */
    payment_reference: text(),
    created_at: createdAt(),
    due_on: date(),
    closed_at: date(),
    /** Who it bills (name, email, address, tax ID) as they were when it was issued. */
    billed_to: jsonb(),
    /** The seller (FLOTILLA_BILLING_ISSUER_*) as it was when it was issued. */
    seller: jsonb(),
    /** How it was paid ("Visa ending in 4242", "test payment"). */
    paid_with: text(),
    /** The tax sentence it prints (reverse charge, outside the scope). */
    tax_note: text(),
    /** The provider's reason when its last charge failed. */
    payment_error: text(),
  },
  (t) => [
    index("invoice_organization_idx").on(t.organization, t.created_at),
    // A billing period is invoiced once, however many instances run the billing job.
    uniqueIndex("invoice_period_key").on(t.organization, t.period_start),
    check(
      "invoice_state_check",
      sql`${t.state} IN ('draft', 'open', 'pending', 'processing', 'paid', 'failed', 'past_due', 'closed', 'voided', 'void', 'uncollectible')`,
    ),
  ],
);

/**
 * Credits of a bundle spent on an invoice (device overage paid from the balance). The bundle's
 * `total_balance` is lowered in the same transaction: it stays the balance, these rows say where
 * it went. One row per bundle and invoice.
 */
export const credit_consumption = pgTable(
  "credit_consumption",
  {
    id: id(),
    created_at: createdAt(),
    credit_bundle: ownedBy(() => credit_bundle.id),
    invoice: ownedBy(() => invoice.id),
    quantity: integer().notNull(),
  },
  (t) => [
    uniqueIndex("credit_consumption_key").on(t.invoice, t.credit_bundle),
    index("credit_consumption_bundle_idx").on(t.credit_bundle),
    check("credit_consumption_quantity_check", sql`${t.quantity} > 0`),
  ],
);

/**
 * An amount owed or owed back that the next invoice states as a line: the proration of a plan
 * change mid-period, or a credit carried over from an invoice it exceeded. `invoice` is set when
 * a line of that invoice carries it.
 */
export const billing_adjustment = pgTable(
  "billing_adjustment",
  {
    id: id(),
    created_at: createdAt(),
    organization: ownedBy(() => organization.id),
    kind: text().notNull(),
    description: text().notNull(),
    amount_in_cents: integer().notNull(),
    invoice: optional(() => invoice.id),
    /** Settled without an invoice (leaving for the free plan), by `refund` when money went back. */
    settled_at: date(),
    refund: optional(() => billing_refund.id),
  },
  (t) => [
    index("billing_adjustment_pending_idx").on(t.organization).where(sql`${t.invoice} IS NULL`),
    check(
      "billing_adjustment_kind_check",
      sql`${t.kind} IN ('proration', 'carried_credit', 'unused_time', 'remaining_time')`,
    ),
  ],
);

/** Money sent back through the provider, against the paid invoice it comes from. */
export const billing_refund = pgTable(
  "billing_refund",
  {
    id: id(),
    created_at: createdAt(),
    organization: ownedBy(() => organization.id),
    invoice: ownedBy(() => invoice.id),
    amount_in_cents: integer().notNull(),
    reference: text().notNull(),
  },
  (t) => [check("billing_refund_amount_check", sql`${t.amount_in_cents} > 0`)],
);

/** A billing mail sent (docs/billing.md "Mails"): one per organization, kind and key, ever. */
export const billing_notice = pgTable(
  "billing_notice",
  {
    organization: ownedBy(() => organization.id),
    kind: text().notNull(),
    key: text().notNull(),
    created_at: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.organization, t.kind, t.key] })],
);

/** The last invoice number given per series: invoices are numbered without gaps. */
export const invoice_number_counter = pgTable("invoice_number_counter", {
  series: text().primaryKey(),
  last_number: integer().notNull(),
});

/**
 * The built-in provider's test clock (as Stripe's test clocks): how far a platform administrator
 * moved billing time ahead, to try renewals, past due and freezing without waiting. One row.
 */
export const billing_test_clock = pgTable("billing_test_clock", {
  id: integer().primaryKey().default(1),
  advanced_by_seconds: integer().notNull().default(0),
  modified_at: modifiedAt(),
});
