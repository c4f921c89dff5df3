import { BILLING_PLAN_CACHE_MS, type BillingCycle, type TaxId } from "@flotilla/domain";
import { errorText, getStatusCode, isNetworkError } from "../../lib/errors.ts";
import { t } from "../../lib/i18n.ts";
import type { Sdk } from "../../lib/sdk.ts";
import { pineOf } from "../orgs/data.ts";
import type { CataloguePlan } from "./model.ts";

/**
 * The billing service (spec 3 §7 "Billing service") under the API origin, through the SDK's
 * request layer (bearer token, the in-flight cap, 429 retries), as the other non-OData calls
 * (device logs, diagnostics) go. Not `sdk.models.billing`: it looks every organization up again
 * before each call and sends a plan change as `annual: boolean`, where this API takes `cycle`.
 */

export interface BillingAddress {
  address1?: string;
  address2?: string;
  city?: string;
  state?: string;
  zip?: string;
  country?: string;
  phone?: string;
}

export interface BillingAccount {
  email: string;
  company_name?: string;
  address?: BillingAddress;
  tax_id: TaxId | null;
  account_state: string;
}

export interface PlanCharge {
  itemType: string;
  name: string;
  code: string;
  unitCostCents: string | number;
  quantity: string | number;
}

export interface BillingPlan {
  name: string;
  title: string;
  code: string;
  tier: string;
  intervalUnit: string;
  intervalLength: string;
  currentPeriodEndDate?: string;
  billing: { currency: string; totalCostCents: string; charges: PlanCharge[] };
  support?: { name: string; title: string };
  /** What is billed on top of the plan (spec 3 §3), with its own total. */
  addonPlan?: {
    code?: string;
    title?: string;
    addOns?: Array<{ name?: string; code?: string; quantity?: string | number; unitCostCents?: string | number }>;
    billing?: { currency?: string; totalCostCents?: string };
  };
}

/** The payment method: `{}` when there is none. */
export interface BillingInfo extends BillingAddress {
  type?: string;
  full_name?: string;
  last_four?: string;
  card_type?: string;
  first_one?: string;
  month?: number | string;
  year?: number | string;
  routing_number?: string;
  is_test?: boolean;
}

export interface Invoice {
  uuid: string;
  invoice_number: string;
  state: string;
  currency: string;
  total_in_cents: number;
  subtotal_in_cents?: number;
  created_at: string;
  due_on?: string | null;
  closed_at?: string | null;
}

export interface Usage {
  currentUsage?: Record<string, number>;
  peakUsage?: Record<string, number>;
  /** The plan's add-ons: devices beyond the plan and seats of paid roles, with prices (this server's addition). */
  addons?: Addon[];
}

export interface Addon {
  item: string;
  unit_price_cents: number;
  included: number;
  used: number;
  billed: number;
  amount_cents: number;
}

export interface SetupIntent {
  id: string;
  client_secret?: string;
  provider: string;
  is_test?: boolean;
}

export type CardDetails = { number: string; exp_month: string; exp_year: string; cvc: string; name: string };
export type BankDetails = { routing_number: string; account_number: string; name: string; mandate_accepted: true };

/** The query keys of one organization's billing data. */
export const billingKeys = {
  all: (orgId: number) => ["billing", orgId] as const,
  account: (orgId: number) => ["billing", orgId, "account"] as const,
  plan: (orgId: number) => ["billing", orgId, "plan"] as const,
  info: (orgId: number) => ["billing", orgId, "info"] as const,
  invoices: (orgId: number) => ["billing", orgId, "invoices"] as const,
  usage: (orgId: number) => ["billing", orgId, "usage"] as const,
  catalogue: ["billing", "catalogue"] as const,
};

export function billingApi(sdk: Sdk, apiUrl: string) {
  const send = async <T>(method: "GET" | "POST" | "PATCH" | "DELETE", url: string, body?: unknown): Promise<T> =>
    (await sdk.request.send({ method, url, baseUrl: apiUrl, ...(body === undefined ? {} : { body }) })).body as T;
  const account = (orgId: number) => `/billing/v1/account/${orgId}`;
  return {
    getAccount: (orgId: number) => send<BillingAccount>("GET", account(orgId)),
    updateAccount: (
      orgId: number,
      body: { email: string; company_name?: string; address?: BillingAddress; tax_id: TaxId | null },
    ) => send<BillingAccount>("PATCH", account(orgId), body),
    getPlan: (orgId: number) => send<BillingPlan>("GET", `${account(orgId)}/plan`),
    changePlan: (orgId: number, body: { tier: string; cycle: BillingCycle; planChangeReason?: string }) =>
      send<{ plan: BillingPlan; invoice?: Invoice }>("PATCH", `${account(orgId)}/plan`, body),
    getInfo: (orgId: number) => send<BillingInfo>("GET", `${account(orgId)}/info`),
    createSetupIntent: (orgId: number, captchaResponse: string | undefined) =>
      send<SetupIntent>("POST", `${account(orgId)}/setup-intent`, { "g-recaptcha-response": captchaResponse }),
    /** The built-in (test) provider's confirmation of a setup intent with card or bank details. */
    confirmTestSetupIntent: (
      intent: SetupIntent & { client_secret: string },
      details: { card: CardDetails } | { bank_account: BankDetails },
    ) =>
      send<unknown>("POST", `/billing/v1/test-payments/setup-intents/${encodeURIComponent(intent.id)}/confirm`, {
        client_secret: intent.client_secret,
        ...details,
      }),
    saveInfo: (orgId: number, setupIntentId: string) =>
      send<BillingInfo>("PATCH", `${account(orgId)}/info`, { token_id: setupIntentId, token_type: "setup_intent" }),
    removeInfo: (orgId: number) => send<unknown>("DELETE", `${account(orgId)}/info`),
    getInvoices: (orgId: number) => send<Invoice[]>("GET", `${account(orgId)}/invoices`),
    /** "Pay now": the unpaid invoices charged again with the current payment method. */
    payNow: (orgId: number) =>
      send<{ paid: number; is_frozen: boolean; has_past_due_invoice_since__date: string | null }>(
        "POST",
        `${account(orgId)}/pay`,
        {},
      ),
    /** Billing time (the test clock's with the built-in provider): what past-due days count by. */
    getClock: () => send<{ now: string }>("GET", "/billing/v1/clock"),
    downloadInvoice: async (orgId: number, invoiceNumber: string): Promise<Blob> =>
      (
        await sdk.request.send({
          method: "GET",
          url: `${account(orgId)}/invoices/${encodeURIComponent(invoiceNumber)}/download`,
          baseUrl: apiUrl,
          responseFormat: "blob",
        })
      ).body as Blob,
    getUsage: (orgId: number) => send<Usage>("GET", `${account(orgId)}/usage`),
    /** The plan catalogue (data API), cheapest first, with what each plan includes and sells. */
    getCatalogue: () =>
      pineOf(sdk).get<CataloguePlan[]>({
        resource: "plan",
        options: {
          $select: [
            "id",
            "title",
            "billing_code",
            "monthly_price",
            "annual_price",
            "can_self_serve",
            "is_legacy",
            "is_valid_from__date",
            "is_valid_until__date",
          ],
          $expand: {
            plan_feature: { $select: "quantity", $expand: { feature: { $select: "slug" } } },
            plan_addon: { $select: ["base_price", "bills_dynamically"], $expand: { feature: { $select: "slug" } } },
          },
          $orderby: { monthly_price: "asc" },
        },
      }),
  };
}

export type BillingApi = ReturnType<typeof billingApi>;

/**
 * The organization's billing plan, kept for an hour (spec 3 §9 "Billing plan cache one hour"):
 * the billing and credits pages share it, and a plan change made here invalidates it at once.
 */
export const billingPlanQuery = (api: Pick<BillingApi, "getPlan">, orgId: number) => ({
  queryKey: billingKeys.plan(orgId),
  queryFn: () => api.getPlan(orgId),
  staleTime: BILLING_PLAN_CACHE_MS,
});

/** The plan catalogue, kept for an hour as the plan is. */
export const planCatalogueQuery = (api: Pick<BillingApi, "getCatalogue">) => ({
  queryKey: billingKeys.catalogue,
  queryFn: () => api.getCatalogue(),
  staleTime: BILLING_PLAN_CACHE_MS,
});

/**
 * A setup intent the payment form can confirm: one without a client_secret cannot be, and is an
 * error (spec 3 §8), said in `missingText`.
 */
export function requireClientSecret(intent: SetupIntent, missingText: string): SetupIntent & { client_secret: string } {
  if (!intent.client_secret) throw new Error(missingText);
  return { ...intent, client_secret: intent.client_secret };
}

/**
 * The words for a billing call's failure: a refusal (4xx) shows the server's own message, which
 * names the problem ("Add a payment method before moving to a paid plan."); a request without an
 * answer errors.error_request; anything else the app's catalogue text (spec 3 §8), never a raw
 * "Request error: …" or "Failed to fetch".
 */
export function billingErrorText(error: unknown): string {
  // A request that got no answer (a dropped connection, a blocked address): errors.error_request
  // (spec 3 §8), never the browser's own "Failed to fetch".
  if (isNetworkError(error)) return t("billing.errors.error_request");
  const status = getStatusCode(error);
  const body = (error as { body?: unknown } | null)?.body;
  if (status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 429) {
    const message =
      typeof body === "string"
        ? body
        : typeof body === "object" && body !== null && typeof (body as { message?: unknown }).message === "string"
          ? (body as { message: string }).message
          : "";
    if (message.trim() && !/^\s*</.test(message)) return message.trim();
  }
  return errorText(error);
}

/** The server's `tax_id: fields_errors.invalid_tax_id` refusal of a company-info update. */
export const isInvalidTaxIdError = (error: unknown) =>
  getStatusCode(error) === 400 &&
  /fields_errors\.invalid_tax_id/.test(String((error as { body?: unknown }).body ?? ""));

// ---------------------------------------------------------------------------------------------
// Credits (spec 3 §4 Credits, §7): bundles through balena-sdk's creditBundle model, the
// low-balance notification through the data API.

export interface CreditBundle {
  id: number;
  created_at: string;
  original_quantity: number;
  total_balance: number;
  available_balance?: number;
  total_cost: number | string;
  payment_status: string | null;
  error_message?: string | null;
  expires_on__date?: string | null;
  is_created_by__user?: Array<{ username: string }>;
}

export interface CreditNotification {
  id: number;
  is_sent_when_below__threshold: number;
}

export const creditKeys = {
  feature: ["credits", "feature"] as const,
  bundles: (orgId: number) => ["billing", orgId, "credit-bundles"] as const,
  notification: (orgId: number) => ["billing", orgId, "credit-notification"] as const,
};

export function creditsApi(sdk: Sdk) {
  const pine = pineOf(sdk);
  return {
    /** The feature credits are bought for (device:microservices); null when the API has none. */
    getFeatureId: async (slug: string) =>
      (await pine.get<Array<{ id: number }>>({ resource: "feature", options: { $select: "id", $filter: { slug } } }))[0]
        ?.id ?? null,
    getBundles: (orgId: number) =>
      sdk.models.creditBundle.getAllByOrg(orgId, {
        $select: [
          "id",
          "created_at",
          "original_quantity",
          "total_balance",
          "available_balance",
          "total_cost",
          "payment_status",
          "error_message",
          "expires_on__date",
        ],
        $expand: { is_created_by__user: { $select: "username" } },
        $orderby: { created_at: "desc" },
      } as never) as unknown as Promise<CreditBundle[]>,
    purchase: (orgId: number, featureId: number, quantity: number) =>
      sdk.models.creditBundle.create(orgId, featureId, quantity) as unknown as Promise<CreditBundle>,
    getNotification: async (orgId: number, featureId: number) =>
      (
        await pine.get<CreditNotification[]>({
          resource: "organization_credit_notification",
          options: {
            $select: ["id", "is_sent_when_below__threshold"],
            $filter: { organization: orgId, owns_credit_notification_for__feature: featureId },
          },
        })
      )[0] ?? null,
    createNotification: (orgId: number, featureId: number, threshold: number) =>
      pine.post<CreditNotification>({
        resource: "organization_credit_notification",
        body: {
          organization: orgId,
          owns_credit_notification_for__feature: featureId,
          is_sent_when_below__threshold: threshold,
        },
      }),
    updateNotification: (id: number, threshold: number) =>
      pine.patch({
        resource: "organization_credit_notification",
        id,
        body: { is_sent_when_below__threshold: threshold },
      }),
    removeNotification: (id: number) => pine.delete({ resource: "organization_credit_notification", id }),
  };
}
