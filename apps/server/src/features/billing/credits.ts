import {
  CREDIT_FEATURE_SLUG,
  CREDITS_MAX,
  creditExpiry,
  creditPurchaseNeedsContactSales,
  creditsAvailableFor,
} from "@flotilla/domain";
import { FlotillaError } from "../../errors.ts";
import type { ResourceHooks } from "../../odata/index.ts";
import type { PaymentProvider } from "./provider.ts";
import { currentSubscription, paymentMethodOf, planAddonPrices } from "./queries.ts";

/**
 * Buying credits (spec 3 §4 "Credits", §5, §9) through the data API, as balena-sdk's
 * `creditBundle.create` does it: the client names the organization, the feature and the quantity;
 * the server checks the plan and the payment method, prices the bundle at the plan's per-device
 * add-on price per credit, charges it and records the outcome. A declined charge still creates
 * the bundle, `failed` with the provider's message (it counts for nothing), so the dialog can say why.
 */
export function creditBundleHooks(provider: PaymentProvider): ResourceHooks {
  return {
    async beforeCreate({ tx, body, actorId }) {
      const organization = Number(body.belongs_to__organization);
      const quantity = body.original_quantity;
      if (typeof quantity !== "number" || !Number.isInteger(quantity) || quantity < 1 || quantity > CREDITS_MAX) {
        throw new FlotillaError("bad_request", `original_quantity: must be a whole number from 1 to ${CREDITS_MAX}`);
      }
      const { rows } = await tx.query<{ slug: string }>(`SELECT slug FROM "feature" WHERE id = $1`, [
        body.is_for__feature,
      ]);
      if (rows[0]?.slug !== CREDIT_FEATURE_SLUG) {
        throw new FlotillaError("bad_request", `is_for__feature: credits are sold for ${CREDIT_FEATURE_SLUG} only`);
      }
      const { plan } = await currentSubscription(tx, organization);
      if (!creditsAvailableFor(plan.billing_code)) {
        throw new FlotillaError(
          "bad_request",
          "Credits are only available for pilot, production and enterprise plans.",
        );
      }
      const method = await paymentMethodOf(tx, organization);
      if (!method) throw new FlotillaError("bad_request", "You must have a payment method set up to purchase credits.");
      const unitCost = (await planAddonPrices(tx, plan.id)).get(CREDIT_FEATURE_SLUG) ?? 0;
      const totalCost = unitCost * quantity;
      if (creditPurchaseNeedsContactSales(totalCost)) {
        throw new FlotillaError("bad_request", "A purchase this large goes through our sales team: contact sales.");
      }
      const charge = await provider.charge(method.reference, totalCost, `${quantity} credits`);
      const { rows: users } = await tx.query<{ id: number }>(`SELECT id FROM "user" WHERE actor = $1`, [actorId]);
      Object.assign(body, {
        is_created_by__user: users[0]?.id ?? null,
        total_balance: quantity,
        unit_cost: unitCost,
        total_cost: totalCost,
        payment_status: charge.status === "paid" ? "paid" : "failed",
        error_message: charge.error ?? null,
        expires_on__date: creditExpiry(new Date()),
        is_associated_with__invoice_id: charge.reference,
      });
    },
  };
}
