import { computed, createdAt, editable, field, id, many, modifiedAt, ref, resource, synonym } from "./dsl.ts";

const planFeaturePlan = ref("plan", "plan", { writable: true, required: true });
const planFeatureFeature = ref("feature", "feature", { writable: true, required: true });
const planAddonPlan = ref("plan", "plan", { writable: true, required: true });
const planAddonFeature = ref("feature", "feature", { writable: true, required: true });
const prepaidAddon = ref("is_for__plan_addon", "plan__offers__feature");
const discountedAddon = ref("discounts__plan_addon", "plan__offers__feature");
const creditNotificationFeature = ref("owns_credit_notification_for__feature", "feature", {
  writable: true,
  required: true,
});

/** Payment states whose credits count toward the balance (spec 3 §4 Credits). */
const COUNTED_PAYMENT_STATES = "('paid', 'complimentary', 'manually invoiced')";

/**
 * Plans, features, subscriptions, credits and support tiers (spec 3 §3). The catalogue is seeded
 * by migration 0006; subscriptions and credits are written by the billing code, not by clients.
 */
export const billingResources = [
  resource({
    name: "feature",
    table: "feature",
    alternateKeys: [["slug"]],
    fields: [id, createdAt, field("title", "Text"), field("slug", "Text"), field("billing_code", "Text")],
    navigations: [
      ...many(["is_of__support_feature"], "support_feature", "feature"),
      ...many(
        ["organization__owns_credit_notification_for__feature", "organization_credit_notification"],
        "organization__owns_credit_notification_for__feature",
        "owns_credit_notification_for__feature",
      ),
      ...many(["plan__provides__feature", "plan_feature"], "plan__provides__feature", "feature"),
      ...many(["plan__offers__feature", "plan_addon", "is_offered_by__plan"], "plan__offers__feature", "feature"),
    ],
  }),
  resource({
    name: "plan",
    table: "plan",
    alternateKeys: [["billing_code"]],
    fields: [
      id,
      createdAt,
      // The catalogue is data a platform administrator edits (permissions.ts); others only read it.
      editable("title", "Text", true),
      editable("billing_code", "Text", true),
      editable("monthly_price", "Integer", true),
      editable("annual_price", "Integer", true),
      editable("can_self_serve", "Boolean"),
      editable("is_legacy", "Boolean"),
      editable("is_valid_from__date", "Date Time"),
      editable("is_valid_until__date", "Date Time"),
    ],
    navigations: [
      ...many(["plan__has__discount_code"], "plan__has__discount_code", "plan"),
      ...many(["plan__provides__feature", "plan_feature", "provides__feature"], "plan__provides__feature", "plan"),
      ...many(
        [
          "plan__offers__feature",
          "plan_addon",
          "offers__feature",
          "offers__plan__offers__feature",
          "offers__plan_addon",
          "is_of__plan__offers__feature",
          "is_of__plan_addon",
        ],
        "plan__offers__feature",
        "plan",
      ),
      ...many(["subscription"], "subscription", "is_for__plan"),
    ],
  }),
  resource({
    name: "plan__provides__feature",
    aliases: ["plan_feature"],
    table: "plan_feature",
    alternateKeys: [["plan", "feature"]],
    fields: [
      id,
      createdAt,
      planFeaturePlan,
      planFeatureFeature,
      synonym("provides__feature", planFeatureFeature),
      editable("quantity", "Integer"),
    ],
  }),
  resource({
    name: "plan__offers__feature",
    aliases: ["plan_addon"],
    table: "plan_addon",
    alternateKeys: [["plan", "feature"]],
    fields: [
      id,
      createdAt,
      planAddonPlan,
      synonym("is_offered_by__plan", planAddonPlan),
      planAddonFeature,
      synonym("offers__feature", planAddonFeature),
      editable("base_price", "Integer", true),
      editable("can_self_serve", "Boolean"),
      editable("bills_dynamically", "Boolean"),
    ],
    navigations: many(
      [
        "subscription__discounts__plan__offers__feature",
        "subscription__discounts__plan_addon",
        "subscription_addon_discount",
      ],
      "subscription__discounts__plan__offers__feature",
      "discounts__plan_addon",
    ),
  }),
  resource({
    name: "plan__has__discount_code",
    table: "plan_has_discount_code",
    fields: [id, createdAt, ref("plan", "plan"), field("discount_code", "Text")],
  }),
  resource({
    name: "subscription",
    table: "subscription",
    fields: [
      id,
      createdAt,
      ref("is_for__organization", "organization", { writable: true, required: true }),
      ref("is_for__plan", "plan", { writable: true, required: true }),
      editable("billing_cycle", "Text"),
      editable("starts_on__date", "Date Time"),
      editable("ends_on__date", "Date Time"),
      computed(
        "is_active",
        "Boolean",
        (t) => `(${t}."starts_on__date" <= now() AND (${t}."ends_on__date" IS NULL OR ${t}."ends_on__date" > now()))`,
      ),
      editable("discount_percentage", "Real"),
      editable("origin", "Text"),
    ],
    navigations: [
      ...many(
        [
          "subscription__discounts__plan__offers__feature",
          "subscription__discounts__plan_addon",
          "subscription_addon_discount",
          "discounts__plan__offers__feature",
          "discounts__plan_addon",
        ],
        "subscription__discounts__plan__offers__feature",
        "subscription",
      ),
      ...many(["subscription_prepaid_addon"], "subscription_prepaid_addon", "is_for__subscription"),
    ],
  }),
  resource({
    name: "subscription_prepaid_addon",
    table: "subscription_prepaid_addon",
    fields: [
      id,
      createdAt,
      ref("is_for__subscription", "subscription"),
      prepaidAddon,
      synonym("is_for__plan__offers__feature", prepaidAddon),
      field("discount_percentage", "Real"),
      field("quantity", "Integer"),
      field("starts_on__date", "Date Time"),
      field("expires_on__date", "Date Time"),
    ],
  }),
  resource({
    name: "subscription__discounts__plan__offers__feature",
    aliases: ["subscription_addon_discount"],
    table: "subscription_discounts_plan_addon",
    alternateKeys: [["subscription", "discounts__plan_addon"]],
    fields: [
      id,
      createdAt,
      ref("subscription", "subscription"),
      discountedAddon,
      synonym("plan__offers__feature", discountedAddon),
      synonym("plan_addon", discountedAddon),
      synonym("discounts__plan__offers__feature", discountedAddon),
      field("discount_percentage", "Real"),
    ],
  }),
  // Clients name the organization, feature and quantity; costs, balance and payment state are the
  // billing code's.
  resource({
    name: "credit_bundle",
    table: "credit_bundle",
    fields: [
      id,
      createdAt,
      modifiedAt,
      ref("belongs_to__organization", "organization", { writable: true, required: true }),
      ref("is_for__feature", "feature", { writable: true, required: true }),
      ref("is_created_by__user", "user"),
      editable("original_quantity", "Integer", true),
      field("total_balance", "Integer"),
      computed(
        "available_balance",
        "Integer",
        (t) =>
          `(CASE WHEN ${t}."payment_status" IN ${COUNTED_PAYMENT_STATES} AND ${t}."expires_on__date" > now() THEN ${t}."total_balance" ELSE 0 END)`,
      ),
      field("unit_cost", "Integer"),
      field("total_cost", "Integer"),
      field("payment_status", "Text"),
      field("expires_on__date", "Date Time"),
      field("is_associated_with__invoice_id", "Text"),
      field("error_message", "Text"),
    ],
  }),
  resource({
    name: "organization__owns_credit_notification_for__feature",
    aliases: ["organization_credit_notification"],
    table: "organization_credit_notification",
    alternateKeys: [["organization", "owns_credit_notification_for__feature"]],
    fields: [
      id,
      createdAt,
      ref("organization", "organization", { writable: true, required: true }),
      creditNotificationFeature,
      synonym("feature", { ...creditNotificationFeature, required: false }),
      editable("is_sent_when_below__threshold", "Integer", true),
    ],
  }),
  resource({
    name: "support_tier",
    table: "support_tier",
    alternateKeys: [["slug"]],
    fields: [
      id,
      createdAt,
      field("title", "Text"),
      field("slug", "Text"),
      field("includes_private_support", "Boolean"),
      field("includes__SLA", "Text"),
    ],
    navigations: many(["is_of__support_feature"], "support_feature", "support_tier"),
  }),
  resource({
    name: "support_feature",
    table: "support_feature",
    fields: [id, createdAt, ref("feature", "feature"), ref("support_tier", "support_tier")],
  }),
];
