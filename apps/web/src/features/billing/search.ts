import type { BillingCycle } from "@flotilla/domain";

/**
 * The billing page's query (spec 3 §2 Billing): `plan` and `cycle` propose a plan change;
 * `setup-intent` with `then-propose-plan-tier` and `then-propose-plan-cycle` resume a payment
 * method set-up, then propose that plan.
 */
export interface BillingSearch {
  plan?: string;
  cycle?: BillingCycle;
  "setup-intent"?: string;
  "then-propose-plan-tier"?: string;
  "then-propose-plan-cycle"?: BillingCycle;
}

const isCycle = (value: unknown): value is BillingCycle => value === "monthly" || value === "annual";
const text = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value.trim() : undefined);

export function billingSearch(search: Record<string, unknown>): BillingSearch {
  const out: BillingSearch = {};
  const plan = text(search.plan);
  if (plan) out.plan = plan;
  if (isCycle(search.cycle)) out.cycle = search.cycle;
  const intent = text(search["setup-intent"]);
  if (intent) out["setup-intent"] = intent;
  const tier = text(search["then-propose-plan-tier"]);
  if (tier) out["then-propose-plan-tier"] = tier;
  if (isCycle(search["then-propose-plan-cycle"])) out["then-propose-plan-cycle"] = search["then-propose-plan-cycle"];
  return out;
}
