import { normaliseTaxId, validateTaxId } from "@flotilla/domain";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { auditActorOf, recordAudit } from "../audit/record.ts";
import { verifyCaptcha } from "../captcha/verify.ts";
import { mayDo } from "../data-api/actions.ts";
import { invoicePdf } from "./invoice-pdf.ts";
import { builtInProvider, type PaymentProvider, paymentProviderFor } from "./provider.ts";
import {
  accountOf,
  currentSubscription,
  invoiceByNumber,
  invoicesOf,
  paymentMethodOf,
  removePaymentMethod,
  saveAccount,
  savePaymentMethod,
} from "./queries.ts";
import {
  advanceTestClock,
  billingNow,
  canAccessSupport,
  changePlan,
  invoiceInfo,
  planInfo,
  retryUnpaidInvoices,
  runBillingJob,
  settlePayment,
  usageReport,
} from "./service.ts";
import { outcomeOfEvent, type stripeProvider } from "./stripe-provider.ts";

/** How often each instance runs the billing job (one at a time across instances). */
const BILLING_JOB_INTERVAL_MS = 60_000;

const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`);

const accountBody = z.object({
  email: z.string().trim().email("must be an email address"),
  company_name: text(200).optional(),
  address: z
    .object({
      address1: text(200).optional(),
      address2: text(200).optional(),
      city: text(100).optional(),
      state: text(100).optional(),
      zip: text(20).optional(),
      country: text(2).optional(),
      phone: text(40).optional(),
    })
    .strict()
    .optional(),
  tax_id: z
    .object({ type: z.string().max(40), value: text(60), country: text(2).optional() })
    .nullable()
    .optional(),
});

// balena-sdk sends `annual: true|false`; `cycle` is accepted too.
const planBody = z.object({
  tier: z.string().min(1).max(60),
  cycle: z.enum(["monthly", "annual"], { error: "must be monthly or annual" }).optional(),
  annual: z.boolean().optional(),
  planChangeReason: text(2000).optional(),
});

const infoBody = z.object({
  token_id: z.string().min(1).max(200),
  token_type: z.enum(["payment_method", "setup_intent"]).optional(),
  "g-recaptcha-response": z.string().optional(),
  setAsCompanyAddress: z.boolean().optional(),
});

const confirmBody = z.object({
  client_secret: z.string().min(1).max(200),
  card: z
    .object({
      number: z.string().max(30),
      exp_month: z.string().max(2),
      exp_year: z.string().max(4),
      cvc: z.string().max(4),
      name: z.string().max(200),
    })
    .optional(),
  bank_account: z
    .object({
      routing_number: z.string().max(9),
      account_number: z.string().max(17),
      name: z.string().max(200),
      mandate_accepted: z.boolean(),
    })
    .optional(),
});

/**
 * The billing service (docs/billing.md) at balena-sdk's `models.billing` addresses,
 * `/billing/v1/account/{organization id}/…`, for those with `organization.access_billing`
 * (the organization's administrators): account info, plan and plan change, payment method,
 * invoices with their PDF, usage and support access. Payments go through `provider`.
 */
export async function billingRoutes(app: FastifyInstance, ctx: AppContext) {
  const provider: PaymentProvider = paymentProviderFor(ctx.config);
  const mail = { mailer: ctx.mail, publicUrl: ctx.config.publicUrl };
  const job = setInterval(() => {
    billingNow(ctx.db, provider)
      .then((now) => runBillingJob(ctx.db, provider, now, mail, ctx.config.billingIssuer))
      .catch((error) => app.log.warn({ err: error }, "the billing job failed"));
  }, BILLING_JOB_INTERVAL_MS);
  job.unref();
  app.addHook("onClose", () => clearInterval(job));
  /** The billing job now (its mails: receipts, unfrozen); when another instance runs it, that one sends them. */
  const sendBillingMails = (now: Date) =>
    runBillingJob(ctx.db, provider, now, mail, ctx.config.billingIssuer).catch((error) =>
      app.log.warn({ err: error }, "the billing job failed"),
    );

  /** The organization of the route, for a user who may see its billing: 404 when not a member, 403 otherwise. */
  async function billingOrganization(request: FastifyRequest): Promise<{ id: number; name: string; user: number }> {
    const user = requireUser(request);
    const raw = (request.params as { org: string }).org;
    if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid id passed in url");
    const id = Number(raw);
    const { rows } = await ctx.db.query<{ name: string }>(
      `SELECT o.name FROM "organization" o WHERE o.id = $1
          AND (EXISTS (SELECT 1 FROM "organization_membership" m WHERE m.is_member_of__organization = o.id AND m."user" = $2)
               OR $3)`,
      [id, user.id, user.caller.globalRoles.includes("balena_admin")],
    );
    const organization = rows[0];
    if (!organization) throw new FlotillaError("not_found", "Organization not found");
    if (!(await mayDo(ctx.db, user.caller, "organization.access_billing", { organization: id }))) {
      throw new FlotillaError("forbidden", "Only the organization's administrators can see and change its billing.");
    }
    return { id, name: organization.name, user: user.id };
  }

  app.get("/billing/v1/account/:org", async (request) => {
    const { id } = await billingOrganization(request);
    const account = await accountOf(ctx.db, id);
    return { ...account, email: account.email ?? "", company_name: account.company_name ?? "" };
  });

  app.patch("/billing/v1/account/:org", async (request) => {
    const { id } = await billingOrganization(request);
    const body = parseInput(accountBody, request.body);
    const taxId = body.tax_id === undefined ? undefined : normaliseTaxId(body.tax_id);
    if (taxId && validateTaxId(taxId))
      throw new FlotillaError(
        "bad_request",
        `tax_id: "${taxId.value}" does not fit the tax ID type ${taxId.type} (fields_errors.invalid_tax_id)`,
      );
    // A field left out keeps its value; an empty one clears it.
    const saved = await accountOf(ctx.db, id);
    const account = {
      email: body.email,
      company_name: body.company_name === undefined ? saved.company_name : body.company_name || null,
      address:
        body.address === undefined
          ? saved.address
          : Object.fromEntries(Object.entries(body.address).filter(([, value]) => value !== "")),
      tax_id: taxId === undefined ? saved.tax_id : taxId,
    };
    await saveAccount(ctx.db, id, account);
    return { ...account, account_state: "active" };
  });

  // Billing time for the dashboard's past-due banner (days until freezing count by it).
  app.get("/billing/v1/clock", async (request) => {
    requireUser(request);
    return { now: (await billingNow(ctx.db, provider)).toISOString() };
  });

  // Billing time (the test clock's, with the built-in provider) dates the plan, its changes and usage.
  app.get("/billing/v1/account/:org/plan", async (request) => {
    const { id } = await billingOrganization(request);
    return planInfo(ctx.db, id, await billingNow(ctx.db, provider));
  });

  app.patch("/billing/v1/account/:org/plan", async (request) => {
    const { id } = await billingOrganization(request);
    const { tier, cycle, annual, planChangeReason } = parseInput(planBody, request.body);
    const change = { tier, cycle: cycle ?? (annual ? "annual" : "monthly"), planChangeReason } as const;
    const now = await billingNow(ctx.db, provider);
    const invoice = await ctx.db.transaction(async (tx) => {
      const charged = await changePlan(tx, provider, id, change, now, ctx.config.billingIssuer);
      await recordAudit(tx, auditActorOf(request), {
        action: "billing.plan_changed",
        organization: id,
        targetType: "organization",
        targetId: id,
        details: { tier, cycle: change.cycle, reason: planChangeReason ?? null },
      });
      return charged;
    });
    return { plan: await planInfo(ctx.db, id, now), ...(invoice ? { invoice: invoiceInfo(invoice) } : {}) };
  });

  app.get("/billing/v1/account/:org/info", async (request) => {
    const { id } = await billingOrganization(request);
    const method = await paymentMethodOf(ctx.db, id);
    const account = await accountOf(ctx.db, id);
    // Only an active account has billing info and invoices (spec 3 §3).
    if (!method || account.account_state !== "active") return {};
    const [first_name = "", ...rest] = method.full_name.split(" ");
    return {
      type: method.type === "card" ? "card" : "bank_account",
      full_name: method.full_name,
      first_name,
      last_name: rest.join(" "),
      company: account.company_name ?? "",
      vat_number: account.tax_id?.value ?? "",
      ...Object.fromEntries(
        ["address1", "address2", "city", "state", "zip", "country", "phone"].map((key) => [
          key,
          account.address[key] ?? "",
        ]),
      ),
      last_four: method.last_four,
      ...(method.type === "card"
        ? { card_type: method.card_type, first_one: method.first_one, month: method.month, year: method.year }
        : { routing_number: method.routing_number, account_type: "checking", name_on_account: method.full_name }),
      is_test: provider.isTest,
    };
  });

  app.post("/billing/v1/account/:org/setup-intent", async (request) => {
    const { id } = await billingOrganization(request);
    const body = (request.body ?? {}) as { "g-recaptcha-response"?: unknown };
    const response = body["g-recaptcha-response"];
    await verifyCaptcha(ctx, typeof response === "string" ? response : undefined);
    const intent = await provider.createSetupIntent(ctx.db, id);
    return { ...intent, provider: provider.name, is_test: provider.isTest };
  });

  app.patch("/billing/v1/account/:org/info", async (request) => {
    const { id } = await billingOrganization(request);
    const body = parseInput(infoBody, request.body);
    const now = await billingNow(ctx.db, provider);
    await ctx.db.transaction(async (tx) => {
      const method = await provider.takeSetupIntent(tx, id, body.token_id);
      await savePaymentMethod(tx, id, provider.name, method);
      await recordAudit(tx, auditActorOf(request), paymentMethodEntry(id, "billing.payment_method_changed"));
      await retryUnpaidInvoices(tx, provider, id, now);
    });
    await sendBillingMails(now);
    return { ok: true };
  });

  // "Pay now" on the past-due and frozen pages: the unpaid invoices are charged again with the
  // current payment method; paid up, the organization is unfrozen at once.
  app.post("/billing/v1/account/:org/pay", async (request) => {
    const { id } = await billingOrganization(request);
    if (!(await paymentMethodOf(ctx.db, id))) {
      throw new FlotillaError("bad_request", "Add a payment method before paying.");
    }
    const now = await billingNow(ctx.db, provider);
    const outcome = await ctx.db.transaction(async (tx) => {
      const result = await retryUnpaidInvoices(tx, provider, id, now);
      await recordAudit(tx, auditActorOf(request), {
        action: "billing.unpaid_invoices_paid",
        organization: id,
        targetType: "organization",
        targetId: id,
        details: { paid: result.paid, failed: result.failed.length },
      });
      return result;
    });
    await sendBillingMails(now);
    if (outcome.failed.length > 0) {
      throw new FlotillaError(
        "bad_request",
        `The payment failed: ${outcome.failed[0]?.error ?? "The payment was declined."} Update the payment method and try again.`,
      );
    }
    const { rows } = await ctx.db.query<{ is_frozen: boolean; since: Date | null }>(
      `SELECT is_frozen, has_past_due_invoice_since__date AS since FROM "organization" WHERE id = $1`,
      [id],
    );
    return {
      paid: outcome.paid,
      is_frozen: rows[0]?.is_frozen ?? false,
      has_past_due_invoice_since__date: rows[0]?.since ?? null,
    };
  });

  app.delete("/billing/v1/account/:org/info", async (request) => {
    const { id } = await billingOrganization(request);
    const { plan } = await currentSubscription(ctx.db, id);
    if (plan.billing_code !== "free") {
      throw new FlotillaError("bad_request", "The payment method can only be removed on the free plan.");
    }
    await ctx.db.transaction(async (tx) => {
      await removePaymentMethod(tx, id);
      await recordAudit(tx, auditActorOf(request), paymentMethodEntry(id, "billing.payment_method_removed"));
    });
    return { ok: true };
  });

  app.get("/billing/v1/account/:org/invoices", async (request) => {
    const { id } = await billingOrganization(request);
    if ((await accountOf(ctx.db, id)).account_state !== "active") return [];
    return (await invoicesOf(ctx.db, id)).map(invoiceInfo);
  });

  app.get("/billing/v1/account/:org/invoices/:number/download", async (request, reply) => {
    const { id, name } = await billingOrganization(request);
    const number = (request.params as { number: string }).number;
    const invoice = await invoiceByNumber(ctx.db, id, number);
    if (!invoice) throw new FlotillaError("not_found", `Invoice not found: ${number}`);
    if (invoice.state === "draft") throw new FlotillaError("bad_request", "A draft invoice is not yet available.");
    // Invoices from before their details were copied on read today's (migration 0029 copied them).
    const account = await accountOf(ctx.db, id);
    const { logo, ...seller } = ctx.config.billingIssuer;
    const billedTo = {
      name: account.company_name || name,
      email: account.email,
      address: account.address,
      tax_id: account.tax_id,
    };
    const pdf = await invoicePdf(invoice, { billedTo, seller }, logo);
    return reply
      .type("application/pdf")
      .header("content-disposition", `attachment; filename="${invoice.invoice_number}.pdf"`)
      .send(pdf);
  });

  app.get("/billing/v1/account/:org/usage", async (request) => {
    const { id } = await billingOrganization(request);
    return usageReport(ctx.db, id);
  });

  /**
   * Every member may ask (the support drawer is for ordinary members too, spec 3 §1, §2): a bare
   * boolean, as balena's API answers (spec 3 §7); the tier and its SLA are at
   * GET /support/v1/organizations/{orgId}/access (docs/support.md).
   */
  app.get("/billing/v1/account/:org/can-access-support", async (request) => {
    const user = requireUser(request);
    const raw = (request.params as { org: string }).org;
    if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid id passed in url");
    const { rows } = await ctx.db.query(
      `SELECT 1 FROM "organization" o WHERE o.id = $1
          AND (EXISTS (SELECT 1 FROM "organization_membership" m WHERE m.is_member_of__organization = o.id AND m."user" = $2)
               OR $3)`,
      [Number(raw), user.id, user.caller.globalRoles.includes("balena_admin")],
    );
    if (rows.length === 0) throw new FlotillaError("not_found", "Organization not found");
    return canAccessSupport(ctx.db, Number(raw));
  });

  // The built-in provider's confirmation (what Stripe.js does against Stripe): the dashboard's
  // card or bank-debit form, checked here; the setup intent's client secret proves the caller started it.
  if (provider === builtInProvider) {
    // The test clock (docs/billing.md): platform administrators move billing time ahead and the
    // billing job runs at once, to try renewals, past due and freezing (0 days: only the job).
    app.post("/billing/v1/test-clock/advance", async (request) => {
      const user = requireUser(request);
      if (!user.caller.globalRoles.includes("balena_admin")) {
        throw new FlotillaError("forbidden", "Only platform administrators move the billing test clock.");
      }
      const { days } = parseInput(z.object({ days: z.number().int().min(0).max(3660) }), request.body);
      await advanceTestClock(ctx.db, days);
      const now = await billingNow(ctx.db, provider);
      const job = await runBillingJob(ctx.db, provider, now, mail, ctx.config.billingIssuer);
      return { now: now.toISOString(), invoiced: job.invoiced };
    });

    app.post("/billing/v1/test-payments/setup-intents/:id/confirm", async (request) => {
      requireUser(request);
      const body = parseInput(confirmBody, request.body);
      const intent = (request.params as { id: string }).id;
      const method = await builtInProvider.confirm(ctx.db, intent, body.client_secret, body);
      return { id: intent, status: "succeeded", payment_method: { type: method.type, last_four: method.last_four } };
    });
  }

  const stripe = ctx.config.stripe;
  if (stripe?.webhookSecret && "client" in provider) {
    const { client } = provider as ReturnType<typeof stripeProvider>;
    const secret = stripe.webhookSecret;
    // Stripe signs the raw body: this route reads it as bytes.
    await app.register(async (scope) => {
      scope.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
      scope.post("/billing/v1/stripe/webhook", { config: { public: true } }, async (request) => {
        let event: ReturnType<typeof client.webhooks.constructEvent>;
        try {
          const signature = String(request.headers["stripe-signature"] ?? "");
          event = client.webhooks.constructEvent(request.body as Buffer, signature, secret);
        } catch {
          throw new FlotillaError("bad_request", "The Stripe-Signature header does not sign this body.");
        }
        const outcome = outcomeOfEvent(event);
        if (outcome) await ctx.db.transaction((tx) => settlePayment(tx, outcome.reference, outcome.state));
        return { received: true };
      });
    });
  }
}

/** A payment method saved or removed: which organization, never the card's details. */
const paymentMethodEntry = (organization: number, action: string) => ({
  action,
  organization,
  targetType: "organization",
  targetId: organization,
});
