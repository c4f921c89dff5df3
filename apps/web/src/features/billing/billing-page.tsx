import {
  type BillingCycle,
  canDownloadInvoice,
  cardTypeOf,
  type BillingPlan as DomainPlan,
  FREE_PLAN_CODE,
  FREE_PLAN_DEVICE_ALLOWANCE,
  formatDollars,
  formatDollarsPerMonth,
  freePlanBlocked,
  INVOICES_SHOWN,
  invoiceStateTone,
  needsFeedback,
  type PlanChoice,
  planChangeType,
  pricePerMonth,
  selfServePlans,
} from "@flotilla/domain";
import AccountBalanceOutlined from "@mui/icons-material/AccountBalanceOutlined";
import CreditCardOutlined from "@mui/icons-material/CreditCardOutlined";
import DownloadOutlined from "@mui/icons-material/DownloadOutlined";
import EditOutlined from "@mui/icons-material/EditOutlined";
import ScienceOutlined from "@mui/icons-material/ScienceOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import Divider from "@mui/material/Divider";
import IconButton from "@mui/material/IconButton";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableFooter from "@mui/material/TableFooter";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { type UseQueryResult, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useLocation, useNavigate, useSearch } from "@tanstack/react-router";
import { useEffect, useMemo, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { PageHeader } from "../../components/page.tsx";
import { saveBlob } from "../../lib/save-blob.ts";
import { showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { useOrganization } from "../orgs/data.ts";
import { Card, useNumericParam } from "../orgs/ui.tsx";
import {
  type BillingAccount,
  type BillingInfo,
  type BillingPlan,
  billingApi,
  billingErrorText,
  billingKeys,
  billingPlanQuery,
  type Invoice,
  type PlanCharge,
  planCatalogueQuery,
  type Usage,
} from "./api.ts";
import { CompanyDialog } from "./company-dialog.tsx";
import {
  type CataloguePlan,
  cardExpiry,
  cycleOfInterval,
  formatCents,
  taxIdChoiceOf,
  taxIdRowOf,
  usageRows,
  visibleInvoices,
} from "./model.ts";
import { PaymentDialog } from "./payment-dialog.tsx";
import { PlanChangeDialog } from "./plan-dialog.tsx";
import type { BillingSearch } from "./search.ts";
import { StripePaymentDialog } from "./stripe-payment.tsx";
import { TierImage } from "./tier-image.tsx";
import { day, Fact, Failed, Loading, numeric, useFailureToast } from "./ui.tsx";

type Proposal = { code: string; cycle: BillingCycle };

/**
 * `/orgs/{orgId}/billing` (spec 3 §2 Billing): current plan and next bill, plans, payment method
 * (`#payment-method`), billing address and company info, usage and invoices (`#billing-plans` is
 * the plan table). The route guard lets only organization.access_billing in.
 */
export function BillingPage() {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const api = useMemo(() => billingApi(sdk, config.apiUrl), [sdk, config.apiUrl]);
  const orgId = useNumericParam("orgId");
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const search = useSearch({ strict: false }) as BillingSearch;
  const hash = useLocation({ select: (location) => location.hash });
  const org = useOrganization(orgId, true, true);

  const quiet = { meta: { handlesErrors: true }, throwOnError: false } as const;
  const account = useQuery({ queryKey: billingKeys.account(orgId), queryFn: () => api.getAccount(orgId), ...quiet });
  const active = account.data?.account_state === "active";
  const plan = useQuery({ ...billingPlanQuery(api, orgId), ...quiet });
  const info = useQuery({
    queryKey: billingKeys.info(orgId),
    queryFn: () => api.getInfo(orgId),
    enabled: active,
    ...quiet,
  });
  const invoices = useQuery({
    queryKey: billingKeys.invoices(orgId),
    queryFn: () => api.getInvoices(orgId),
    enabled: active,
    ...quiet,
  });
  const usage = useQuery({ queryKey: billingKeys.usage(orgId), queryFn: () => api.getUsage(orgId), ...quiet });
  const catalogue = useQuery({ ...planCatalogueQuery(api), ...quiet });
  useFailureToast(account, t("billing.errors.error_loading_billing_api"));
  useFailureToast(plan, t("billing.errors.failed_retrieving_plan"));
  useFailureToast(info, t("billing.errors.failed_retrieving_billing_info"));
  useFailureToast(invoices, t("billing.errors.failed_retrieving_invoices"));
  useFailureToast(usage, t("billing.errors.failed_retrieving_usage"));

  const [proposal, setProposal] = useState<Proposal>();
  const [paymentOpen, setPaymentOpen] = useState<{ thenPropose?: Proposal }>();
  const [companyOpen, setCompanyOpen] = useState(false);
  const [removing, setRemoving] = useState(false);
  const [planError, setPlanError] = useState<{ warning?: string }>({});

  const plans = catalogue.data ?? [];
  const byCode = (code: string) => plans.find((entry) => entry.billing_code === code);
  const currentCode = plan.data?.code ?? FREE_PLAN_CODE;
  const currentCycle = cycleOfInterval(plan.data?.intervalLength);
  const currentCatalogue = byCode(currentCode);
  const hasPaymentMethod = Boolean(info.data?.type);
  const freePlan = byCode(FREE_PLAN_CODE);
  const freeAllowance =
    freePlan?.plan_feature?.find((row) => row.feature[0]?.slug === "device:microservices")?.quantity ??
    FREE_PLAN_DEVICE_ALLOWANCE;
  const deviceCount = usageRows(usage.data?.currentUsage, "device").reduce((sum, row) => sum + row.count, 0);

  /** A plan and cycle for the domain's rules; a code the catalogue does not list is not self-serve. */
  const choice = (code: string, cycle: BillingCycle): PlanChoice => ({
    plan:
      byCode(code) ?? ({ billing_code: code, can_self_serve: false, monthly_price: 0, annual_price: 0 } as DomainPlan),
    cycle,
  });
  const currentChoice = choice(currentCode, currentCycle);

  const invalidate = () => queryClient.invalidateQueries({ queryKey: billingKeys.all(orgId) });

  /** Propose a plan: without a payment method, a paid plan waits for one (spec 3 §4). */
  const propose = (next: Proposal) => {
    setPlanError({});
    if (next.code !== FREE_PLAN_CODE && active && info.isSuccess && !hasPaymentMethod) {
      setPaymentOpen({ thenPropose: next });
      return;
    }
    setProposal(next);
  };

  // `?plan=&cycle=` proposes a plan change; `?setup-intent=` resumes a payment set-up (spec 3 §2).
  const handledSearch = useRef(false);
  useEffect(() => {
    if (handledSearch.current || !catalogue.isSuccess || !plan.isSuccess || (active && !info.isFetched)) return;
    const intent = search["setup-intent"];
    const tier = search["then-propose-plan-tier"] ?? search.plan;
    const cycle = search["then-propose-plan-cycle"] ?? search.cycle;
    if (!intent && !(tier && cycle)) return;
    handledSearch.current = true;
    void navigate({ to: ".", search: {}, hash, replace: true });
    const proposeFromQuery = () => {
      if (tier && cycle && byCode(tier)) propose({ code: tier, cycle });
    };
    if (intent) {
      api.saveInfo(orgId, intent).then(
        async () => {
          showToast("success", t("billing.payment_method_saved"));
          await invalidate();
          if (tier && cycle && byCode(tier)) setProposal({ code: tier, cycle });
        },
        (error) => showToast("error", billingErrorText(error)),
      );
    } else proposeFromQuery();
  });

  // Anchors: once the cards are there, bring `#payment-method` or `#billing-plans` into view.
  const scrolled = useRef("");
  useEffect(() => {
    if (!hash || scrolled.current === hash || !account.isFetched || !catalogue.isFetched) return;
    const element = document.getElementById(hash);
    if (element) {
      scrolled.current = hash;
      element.scrollIntoView({ block: "start" });
    }
  });

  // The payment dialog: Stripe's own form when Stripe takes the payments, else the built-in one.
  const stripeKey = config.stripePublishableKey;
  const paymentProps = {
    open: paymentOpen !== undefined,
    orgId,
    api,
    notice: paymentOpen?.thenPropose ? t("billing.payment_first") : undefined,
    onClose: () => setPaymentOpen(undefined),
    onSaved: async () => {
      const then = paymentOpen?.thenPropose;
      setPaymentOpen(undefined);
      showToast("success", t("billing.payment_method_saved"));
      // A new method pays what was unpaid: the banner and the guards read the organization again.
      await Promise.all([invalidate(), queryClient.invalidateQueries({ queryKey: ["orgs", orgId] })]);
      if (then) setProposal(then);
    },
  };

  const changePlan = useMutation({
    mutationFn: (body: { tier: string; cycle: BillingCycle; planChangeReason?: string }) => api.changePlan(orgId, body),
    meta: { reportErrors: false },
    onSuccess: async () => {
      showToast("success", t("billing.plan_updated"));
      setProposal(undefined);
      await invalidate();
      await queryClient.invalidateQueries({ queryKey: ["orgs", orgId, "paid-plan"] });
    },
    onError: (error) => {
      const text = billingErrorText(error);
      const status = (error as { statusCode?: number }).statusCode;
      if (status === 400 && /free plan/i.test(text)) {
        setPlanError({ warning: text });
        return;
      }
      if (status === 400 && /payment method/i.test(text) && proposal) {
        const then = proposal;
        setProposal(undefined);
        setPaymentOpen({ thenPropose: then });
        return;
      }
      // Refusals say why; other failures send the user to sales (spec 3 §8). The dialog closes.
      showToast("error", status !== undefined && status < 500 ? text : t("billing.plan_update_failed"));
      setProposal(undefined);
    },
  });

  const removeInfo = useMutation({
    mutationFn: () => api.removeInfo(orgId),
    meta: { reportErrors: false },
    onSuccess: async () => {
      showToast("success", t("billing.payment_method_removed"));
      setRemoving(false);
      await invalidate();
    },
    onError: (error) => {
      showToast("error", billingErrorText(error));
      setRemoving(false);
    },
  });

  const download = async (invoice: Invoice) => {
    try {
      saveBlob(await api.downloadInvoice(orgId, invoice.invoice_number), `invoice-${invoice.invoice_number}.pdf`);
    } catch {
      showToast("error", t("billing.errors.error_retrieving_invoice"));
    }
  };

  const proposalPlan = proposal ? byCode(proposal.code) : undefined;
  const side = (code: string, cycle: BillingCycle, entry: CataloguePlan | undefined, title?: string) => ({
    title: entry?.title ?? title ?? code,
    cycle,
    pricePerMonth: entry ? pricePerMonth(entry, cycle) : 0,
  });
  const freeWarning =
    planError.warning ??
    (proposal?.code === FREE_PLAN_CODE && freePlanBlocked({ deviceCount, freeAllowance, hasFrozenFreeDevices: false })
      ? t("billing.free_plan_warning", { allowance: freeAllowance, count: deviceCount })
      : undefined);

  return (
    <>
      <PageHeader
        title={t("billing.title")}
        description={org.data ? `${org.data.name} · ${t("billing.description")}` : t("billing.description")}
      />
      {account.isError ? (
        <Box sx={{ mb: 2 }}>
          <Failed text={t("billing.errors.error_loading_billing_api")} onRetry={() => void account.refetch()} />
        </Box>
      ) : account.isSuccess && !active ? (
        <Alert severity="info" variant="outlined" sx={{ mb: 2 }}>
          {t("billing.not_active")}
        </Alert>
      ) : null}
      <Box
        sx={{
          display: "grid",
          gap: 2,
          gridTemplateColumns: { xs: "minmax(0, 1fr)", lg: "minmax(0, 3fr) minmax(0, 2fr)" },
          alignItems: "start",
        }}
      >
        {active && invoices.data?.some((invoice) => UNPAID.has(invoice.state)) ? (
          <PastDueCard
            invoices={invoices.data.filter((invoice) => UNPAID.has(invoice.state))}
            hasPaymentMethod={hasPaymentMethod}
            onPay={async () => {
              try {
                await api.payNow(orgId);
                showToast("success", t("billing.past_due.paid"));
              } catch (error) {
                showToast("error", billingErrorText(error));
              }
              // The banner and the guards read the organization: it is unfrozen without a reload.
              await Promise.all([invalidate(), queryClient.invalidateQueries({ queryKey: ["orgs", orgId] })]);
            }}
            onUpdate={() => setPaymentOpen({})}
          />
        ) : null}
        <CurrentPlanCard
          plan={plan}
          catalogue={currentCatalogue}
          onCancel={
            currentCode !== FREE_PLAN_CODE ? () => propose({ code: FREE_PLAN_CODE, cycle: "monthly" }) : undefined
          }
        />
        {active || account.isPending ? (
          <PaymentMethodCard
            info={info}
            pending={account.isPending}
            canRemove={currentCode === FREE_PLAN_CODE}
            onAdd={() => setPaymentOpen({})}
            onRemove={() => setRemoving(true)}
          />
        ) : (
          <Box />
        )}
        <PlansCard
          catalogue={catalogue}
          current={currentChoice}
          currentCode={currentCode}
          choice={choice}
          onChoose={(code, cycle) => propose({ code, cycle })}
        />
        {active ? <CompanyCard account={account.data} onEdit={() => setCompanyOpen(true)} /> : null}
        <UsageCard usage={usage} />
        <AddonsCard usage={usage} />
        {active ? <InvoicesCard invoices={invoices} onDownload={download} /> : null}
      </Box>

      {proposal ? (
        <PlanChangeDialog
          open
          key={`${proposal.code}-${proposal.cycle}`}
          current={side(currentCode, currentCycle, currentCatalogue, plan.data?.title)}
          target={side(proposal.code, proposal.cycle, proposalPlan)}
          type={planChangeType(currentChoice, choice(proposal.code, proposal.cycle), plans)}
          downgrade={needsFeedback(currentChoice, choice(proposal.code, proposal.cycle))}
          freeWarning={freeWarning}
          bankDebit={proposal.code !== FREE_PLAN_CODE && /bank|debit/.test(info.data?.type ?? "")}
          busy={changePlan.isPending}
          onConfirm={(reason) =>
            changePlan.mutate({
              tier: proposal.code,
              cycle: proposal.cycle,
              ...(reason ? { planChangeReason: reason } : {}),
            })
          }
          onClose={() => {
            setProposal(undefined);
            setPlanError({});
          }}
        />
      ) : null}
      {stripeKey ? (
        <StripePaymentDialog {...paymentProps} publishableKey={stripeKey} thenPropose={paymentOpen?.thenPropose} />
      ) : (
        <PaymentDialog {...paymentProps} />
      )}
      {companyOpen ? (
        <CompanyDialog
          open
          account={account.data}
          onClose={() => setCompanyOpen(false)}
          onSubmit={async (body) => {
            await api.updateAccount(orgId, body);
            showToast("success", t("billing.account_info_updated"));
            await queryClient.invalidateQueries({ queryKey: billingKeys.account(orgId) });
          }}
        />
      ) : null}
      <ConfirmDialog
        open={removing}
        danger
        title={t("billing.remove_payment_method_title")}
        text={t("billing.remove_payment_method_text")}
        confirmLabel={t("billing.remove_payment_method")}
        busy={removeInfo.isPending}
        onConfirm={() => removeInfo.mutate()}
        onClose={() => setRemoving(false)}
      />
    </>
  );
}

function CurrentPlanCard(props: {
  plan: UseQueryResult<BillingPlan>;
  catalogue: CataloguePlan | undefined;
  onCancel?: () => void;
}) {
  const { t } = useTranslation();
  const { plan } = props;
  const data = plan.data;
  const cycle = cycleOfInterval(data?.intervalLength);
  const currency = data?.billing.currency ?? "USD";
  const charges = data?.billing.charges ?? [];
  return (
    <Card
      title={t("billing.current_plan")}
      action={
        props.onCancel ? (
          <Button size="small" onClick={props.onCancel}>
            {t("billing.cancel_subscription")}
          </Button>
        ) : undefined
      }
    >
      {plan.isPending ? (
        <Loading />
      ) : plan.isError || !data ? (
        <Failed text={t("billing.errors.failed_retrieving_plan")} onRetry={() => void plan.refetch()} />
      ) : (
        <>
          <Box sx={{ display: "flex", alignItems: "flex-start", gap: 2, flexWrap: "wrap" }}>
            <TierImage billingCode={data.code} size={48} />
            <Box sx={{ flex: 1, minWidth: 200 }}>
              <Typography variant="h5" component="h3" sx={{ fontWeight: 600 }}>
                {data.title}
              </Typography>
              <Box sx={{ display: "flex", gap: 1, mt: 0.75, flexWrap: "wrap" }}>
                <Chip
                  size="small"
                  label={cycle === "annual" ? t("billing.plan_cycle_annual") : t("billing.plan_cycle_monthly")}
                />
                {data.support?.title ? (
                  <Chip size="small" variant="outlined" label={`${t("billing.support")}: ${data.support.title}`} />
                ) : null}
              </Box>
            </Box>
            <Box sx={{ textAlign: "right" }} aria-label={t("billing.next_bill")} role="group">
              <Typography variant="overline" color="text.secondary" sx={{ lineHeight: 1.5 }}>
                {t("billing.next_bill")}
              </Typography>
              <Typography variant="h5" component="p" sx={{ fontWeight: 600, ...numeric }}>
                {formatCents(data.billing.totalCostCents, currency)}
              </Typography>
              {data.currentPeriodEndDate ? (
                <Typography variant="body2" color="text.secondary">
                  {t("billing.next_bill_on", { date: day(data.currentPeriodEndDate) })}
                </Typography>
              ) : null}
            </Box>
          </Box>
          <Divider sx={{ my: 2 }} />
          {charges.length === 0 ? (
            <Typography variant="body2" color="text.secondary">
              {t("billing.no_charges")}
            </Typography>
          ) : (
            <Table size="small" aria-label={t("billing.charges")}>
              <TableHead>
                <TableRow>
                  <TableCell>{t("billing.item")}</TableCell>
                  <TableCell>{t("billing.code")}</TableCell>
                  <TableCell align="right">{t("billing.quantity")}</TableCell>
                  <TableCell align="right">{t("billing.unit_price")}</TableCell>
                  <TableCell align="right">{t("billing.amount")}</TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {charges.map((charge) => (
                  <TableRow key={`${charge.itemType}-${charge.code}`}>
                    <TableCell>
                      {charge.name}
                      {charge.itemType === "addon" || charge.itemType === "credit" ? (
                        <Typography component="span" variant="caption" color="text.secondary" sx={{ ml: 1 }}>
                          {t(charge.itemType === "addon" ? "billing.item_type_addon" : "billing.item_type_credit")}
                        </Typography>
                      ) : null}
                    </TableCell>
                    <TableCell sx={{ color: "text.secondary", fontFamily: MONO_FONT_STACK, fontSize: 12 }}>
                      {chargeCode(charge)}
                    </TableCell>
                    <TableCell align="right" sx={numeric}>
                      {charge.quantity}
                    </TableCell>
                    <TableCell align="right" sx={numeric}>
                      {formatCents(charge.unitCostCents, currency)}
                    </TableCell>
                    <TableCell align="right" sx={numeric}>
                      {formatCents(Number(charge.unitCostCents) * Number(charge.quantity), currency)}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
              <TableFooter>
                <TableRow>
                  <TableCell
                    colSpan={4}
                    sx={{ fontWeight: 600, fontSize: "0.875rem", color: "text.primary", borderBottom: 0 }}
                  >
                    {t("billing.total")}
                  </TableCell>
                  <TableCell
                    align="right"
                    sx={{ ...numeric, fontWeight: 600, fontSize: "0.875rem", color: "text.primary", borderBottom: 0 }}
                  >
                    {formatCents(data.billing.totalCostCents, currency)}
                  </TableCell>
                </TableRow>
              </TableFooter>
            </Table>
          )}
          <AddonPlan plan={data} currency={currency} />
        </>
      )}
    </Card>
  );
}

/** A charge's code for people: adjustments carry a row number the server adds to key them, not shown. */
const chargeCode = (charge: PlanCharge) =>
  charge.itemType === "adjustment" ? charge.code.replace(/-\d+$/, "") : charge.code || "—";

/** The add-on plan (spec 3 §3): what is billed on top of the plan this period, with its own total. */
function AddonPlan(props: { plan: BillingPlan; currency: string }) {
  const { t } = useTranslation();
  const addonPlan = props.plan.addonPlan;
  if (!addonPlan) return null;
  const addOns = addonPlan.addOns ?? [];
  return (
    <Box component="section" aria-label={t("billing.addon_plan")} sx={{ mt: 2 }}>
      <Box sx={{ display: "flex", alignItems: "baseline", gap: 1 }}>
        <Typography variant="subtitle2" component="h4" sx={{ fontWeight: 600, flex: 1 }}>
          {t("billing.addon_plan")}
        </Typography>
        <Typography variant="body2" sx={{ ...numeric, fontWeight: 600 }}>
          {formatCents(addonPlan.billing?.totalCostCents ?? 0, props.currency)}
        </Typography>
      </Box>
      {addOns.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {t("billing.addon_plan_none")}
        </Typography>
      ) : (
        <Box component="ul" sx={{ m: 0, p: 0, listStyle: "none" }}>
          {addOns.map((addOn) => (
            <Box
              component="li"
              key={addOn.code ?? addOn.name}
              sx={{ display: "flex", gap: 1, typography: "body2", color: "text.secondary", py: 0.25 }}
            >
              <Box component="span" sx={{ flex: 1 }}>
                {t("billing.addon_line", { name: addOn.name ?? addOn.code ?? "", quantity: addOn.quantity ?? 0 })}
              </Box>
              <Box component="span" sx={numeric}>
                {formatCents(Number(addOn.unitCostCents ?? 0) * Number(addOn.quantity ?? 0), props.currency)}
              </Box>
            </Box>
          ))}
        </Box>
      )}
    </Box>
  );
}

function PaymentMethodCard(props: {
  info: UseQueryResult<BillingInfo>;
  pending: boolean;
  canRemove: boolean;
  onAdd: () => void;
  onRemove: () => void;
}) {
  const { t } = useTranslation();
  const data = props.info.data;
  const has = Boolean(data?.type);
  const isCard = data?.type === "card" || data?.type === "credit_card";
  const isBank = /bank|debit/.test(data?.type ?? "");
  return (
    <Card
      id="payment-method"
      title={t("billing.payment_method")}
      action={
        data?.is_test ? (
          <Tooltip title={t("billing.test_payments_hint")}>
            <Chip
              size="small"
              color="warning"
              variant="outlined"
              icon={<ScienceOutlined />}
              label={t("billing.test_payments")}
            />
          </Tooltip>
        ) : undefined
      }
    >
      {props.pending || props.info.isPending ? (
        <Loading />
      ) : props.info.isError ? (
        <Failed text={t("billing.errors.failed_retrieving_billing_info")} onRetry={() => void props.info.refetch()} />
      ) : (
        <>
          {has && data ? (
            <Box sx={{ display: "flex", gap: 2, alignItems: "center" }}>
              <Box
                aria-hidden
                sx={{
                  width: 56,
                  height: 38,
                  borderRadius: 1,
                  display: "grid",
                  placeItems: "center",
                  bgcolor: "primary.main",
                  color: "primary.contrastText",
                  flexShrink: 0,
                }}
              >
                {isBank ? <AccountBalanceOutlined /> : <CreditCardOutlined />}
              </Box>
              <Box sx={{ minWidth: 0 }}>
                <Typography variant="body1" sx={{ fontWeight: 600 }} data-testid="payment-method-summary">
                  {isCard
                    ? t("billing.card_ending", {
                        brand: t(`billing.card_brands.${cardTypeOf(data.card_type)}`),
                        last4: data.last_four ?? "",
                      })
                    : isBank
                      ? t("billing.bank_account_ending", { last4: data.last_four ?? "" })
                      : t("billing.payment_other", { type: data.type, last4: data.last_four ?? "" })}
                </Typography>
                <Typography variant="body2" color="text.secondary">
                  {isCard
                    ? t("billing.expires", { date: cardExpiry(data.month, data.year) })
                    : data.routing_number
                      ? t("billing.routing", { routing: data.routing_number })
                      : null}
                  {data.full_name ? ` · ${data.full_name}` : ""}
                </Typography>
              </Box>
            </Box>
          ) : (
            <Typography variant="body2" color="text.secondary">
              {t("billing.no_payment_method")}
            </Typography>
          )}
          <Box sx={{ display: "flex", gap: 1, mt: 2 }}>
            <Button variant={has ? "outlined" : "contained"} onClick={props.onAdd}>
              {has ? t("billing.replace_payment_method") : t("billing.add_payment_method")}
            </Button>
            {has && props.canRemove ? (
              <Button color="error" onClick={props.onRemove}>
                {t("billing.remove_payment_method")}
              </Button>
            ) : null}
          </Box>
        </>
      )}
    </Card>
  );
}

function PlansCard(props: {
  catalogue: UseQueryResult<CataloguePlan[]>;
  current: PlanChoice;
  currentCode: string;
  choice: (code: string, cycle: BillingCycle) => PlanChoice;
  onChoose: (code: string, cycle: BillingCycle) => void;
}) {
  const salesUrl = useServices().config.salesUrl;
  const { t } = useTranslation();
  const all = props.catalogue.data ?? [];
  const plans = selfServePlans(all, new Date());
  const cell = (entry: CataloguePlan, cycle: BillingCycle) => {
    const type = planChangeType(props.current, props.choice(entry.billing_code, cycle), all);
    const price = pricePerMonth(entry, cycle);
    const label =
      type === "upgrade"
        ? t("billing.upgrade")
        : type === "downgrade"
          ? t("billing.downgrade")
          : type === "cycle_change"
            ? cycle === "annual"
              ? t("billing.switch_to_annual")
              : t("billing.switch_to_monthly")
            : t("billing.contact_sales");
    return (
      <>
        <TableCell align="right">
          <Typography component="span" variant="body1" sx={{ fontWeight: 600, ...numeric }}>
            {formatCents(price)}
          </Typography>
          <Typography component="span" variant="body2" color="text.secondary">
            {" "}
            {t("billing.per_month")}
          </Typography>
          {cycle === "annual" ? (
            <Typography variant="caption" color="text.secondary" component="div" sx={numeric}>
              {t("billing.billed_annually", { total: formatCents(entry.annual_price) })}
            </Typography>
          ) : null}
        </TableCell>
        <TableCell sx={{ width: 160, pl: 0 }}>
          {type === "no_change" ? (
            <Chip color="success" label={t("billing.current_plan_marker")} />
          ) : type === "contact_sales" ? (
            <Button size="small" href={salesUrl} target="_blank" rel="noopener noreferrer">
              {label}
            </Button>
          ) : (
            <Button
              size="small"
              variant={type === "upgrade" ? "contained" : "outlined"}
              aria-label={`${label}: ${entry.title} ${cycle === "annual" ? t("billing.annual") : t("billing.monthly")}`}
              onClick={() => props.onChoose(entry.billing_code, cycle)}
            >
              {label}
            </Button>
          )}
        </TableCell>
      </>
    );
  };
  return (
    <Card id="billing-plans" title={t("billing.plans")} sx={{ gridColumn: "1 / -1" }}>
      <Typography variant="body2" color="text.secondary" sx={{ mt: -1, mb: 1 }}>
        {t("billing.plans_description")}
      </Typography>
      {props.catalogue.isPending ? (
        <Loading />
      ) : props.catalogue.isError ? (
        <Failed text={t("billing.errors.error_loading_billing_api")} onRetry={() => void props.catalogue.refetch()} />
      ) : plans.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {t("billing.no_plans")}
        </Typography>
      ) : (
        <Table aria-label={t("billing.plans")}>
          <TableHead>
            <TableRow>
              <TableCell>{t("billing.plan")}</TableCell>
              <TableCell align="right">{t("billing.monthly")}</TableCell>
              <TableCell aria-hidden />
              <TableCell align="right">{t("billing.annual")}</TableCell>
              <TableCell aria-hidden />
            </TableRow>
          </TableHead>
          <TableBody>
            {plans.map((entry) => {
              const devices = entry.plan_feature?.find((row) => row.feature[0]?.slug === "device:microservices");
              const extra = entry.plan_addon?.find((row) => row.feature[0]?.slug === "device:microservices");
              const current = props.currentCode === entry.billing_code;
              return (
                <TableRow key={entry.id} selected={current} aria-label={entry.title}>
                  <TableCell>
                    <Box sx={{ display: "flex", alignItems: "center", gap: 1.5 }}>
                      <TierImage billingCode={entry.billing_code} size={36} />
                      <Box>
                        <Typography variant="subtitle1" component="p" sx={{ fontWeight: 600 }}>
                          {entry.title}
                        </Typography>
                        <Typography variant="body2" color="text.secondary">
                          {devices ? t("billing.includes_devices", { count: devices.quantity }) : null}
                          {devices && extra
                            ? `, ${t("billing.extra_device", { price: formatCents(extra.base_price) })}`
                            : null}
                        </Typography>
                      </Box>
                    </Box>
                  </TableCell>
                  {cell(entry, "monthly")}
                  {cell(entry, "annual")}
                </TableRow>
              );
            })}
          </TableBody>
        </Table>
      )}
    </Card>
  );
}

function CompanyCard(props: { account: BillingAccount | undefined; onEdit: () => void }) {
  const { t } = useTranslation();
  const account = props.account;
  const address = account?.address ?? {};
  const lines = [
    address.address1,
    address.address2,
    [address.zip, address.city].filter(Boolean).join(" "),
    [address.state, address.country].filter(Boolean).join(", "),
  ].filter((line) => line && line.trim() !== "");
  const notSet = (
    <Typography component="span" variant="body2" color="text.disabled">
      {t("billing.not_set")}
    </Typography>
  );
  return (
    <Card
      title={t("billing.billing_address")}
      action={
        <Button size="small" startIcon={<EditOutlined />} onClick={props.onEdit}>
          {t("billing.edit")}
        </Button>
      }
    >
      <Fact label={t("billing.email")}>{account?.email || notSet}</Fact>
      <Fact label={t("billing.company_name")}>{account?.company_name || notSet}</Fact>
      <Fact label={t("billing.address")}>
        {lines.length === 0
          ? notSet
          : lines.map((line) => (
              <Box key={line} component="span" sx={{ display: "block" }}>
                {line}
              </Box>
            ))}
      </Fact>
      <Fact label={t("billing.phone")}>{address.phone || notSet}</Fact>
      <Fact label={t("billing.tax_id")}>
        {account?.tax_id ? (
          <>
            <Box component="span" sx={{ fontWeight: 500 }}>
              {account.tax_id.value}
            </Box>
            <Typography component="span" variant="body2" color="text.secondary">
              {" "}
              ({taxIdRowOf(taxIdChoiceOf(account.tax_id))?.label ?? account.tax_id.type})
            </Typography>
          </>
        ) : (
          notSet
        )}
      </Fact>
    </Card>
  );
}

function UsageCard({ usage }: { usage: UseQueryResult<Usage> }) {
  const { t } = useTranslation();
  const data = usage.data;
  const section = (kind: "device" | "member") => {
    const rows = usageRows(data?.currentUsage, kind);
    const peak = data?.peakUsage ?? {};
    for (const key of Object.keys(peak)) {
      if (key.startsWith(`${kind}:`) && !rows.some((row) => row.key === key))
        rows.push({ key, item: key.slice(kind.length + 1), count: 0 });
    }
    const label = (item: string) =>
      kind === "device"
        ? t(`billing.device_kinds.${item}` as "billing.device_kinds.microservices", { defaultValue: item })
        : t(`billing.member_roles.${item}` as "billing.member_roles.member", { defaultValue: item });
    return (
      <Table size="small" aria-label={kind === "device" ? t("billing.devices") : t("billing.members")} sx={{ mb: 2 }}>
        <TableHead>
          <TableRow>
            <TableCell sx={{ fontWeight: 600 }}>
              {kind === "device" ? t("billing.devices") : t("billing.members")}
            </TableCell>
            <TableCell align="right">{t("billing.current")}</TableCell>
            <TableCell align="right">{t("billing.peak")}</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {rows.length === 0 ? (
            <TableRow>
              <TableCell colSpan={3} sx={{ color: "text.secondary" }}>
                {t("billing.no_usage")}
              </TableCell>
            </TableRow>
          ) : (
            rows.map((row) => (
              <TableRow key={row.key}>
                <TableCell>{label(row.item)}</TableCell>
                <TableCell align="right" sx={numeric}>
                  {row.count}
                </TableCell>
                <TableCell align="right" sx={numeric}>
                  {peak[row.key] ?? "–"}
                </TableCell>
              </TableRow>
            ))
          )}
        </TableBody>
      </Table>
    );
  };
  return (
    <Card title={t("billing.usage")}>
      {usage.isPending ? (
        <Loading />
      ) : usage.isError ? (
        <Failed text={t("billing.errors.failed_retrieving_usage")} onRetry={() => void usage.refetch()} />
      ) : (
        <>
          {section("device")}
          {section("member")}
        </>
      )}
    </Card>
  );
}

const UNPAID = new Set(["past_due", "failed"]);

/**
 * What a past-due or frozen organization owes (spec 3 §4 "Past due and frozen"): the unpaid
 * invoices and their sum, "Pay now" with the current payment method, and "Update payment method".
 */
function PastDueCard(props: {
  invoices: Invoice[];
  hasPaymentMethod: boolean;
  onPay: () => Promise<void>;
  onUpdate: () => void;
}) {
  const { t } = useTranslation();
  const [paying, setPaying] = useState(false);
  const owed = props.invoices.reduce((sum, invoice) => sum + Number(invoice.total_in_cents), 0);
  const currency = props.invoices[0]?.currency ?? "USD";
  return (
    <Card title={t("billing.past_due.title")} sx={{ gridColumn: "1 / -1", borderColor: "error.main" }}>
      <Box sx={{ display: "flex", gap: 2, alignItems: "center", flexWrap: "wrap", mb: 1.5 }}>
        <Box sx={{ flex: 1, minWidth: 220 }}>
          <Typography variant="overline" color="text.secondary" sx={{ lineHeight: 1.5 }}>
            {t("billing.past_due.owed")}
          </Typography>
          <Typography
            variant="h5"
            component="p"
            sx={{ fontWeight: 600, ...numeric }}
            aria-label={t("billing.past_due.owed")}
          >
            {formatCents(owed, currency)}
          </Typography>
        </Box>
        <Button
          variant="contained"
          color="error"
          loading={paying}
          disabled={!props.hasPaymentMethod}
          onClick={async () => {
            setPaying(true);
            await props.onPay();
            setPaying(false);
          }}
        >
          {t("billing.past_due.pay_now")}
        </Button>
        <Button variant="outlined" onClick={props.onUpdate}>
          {t("billing.past_due.update_payment_method")}
        </Button>
      </Box>
      <Table size="small" aria-label={t("billing.past_due.unpaid_invoices")}>
        <TableHead>
          <TableRow>
            <TableCell>{t("billing.invoice_number")}</TableCell>
            <TableCell>{t("billing.past_due.due")}</TableCell>
            <TableCell align="right">{t("billing.total")}</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {props.invoices.map((invoice) => (
            <TableRow key={invoice.invoice_number}>
              <TableCell sx={{ fontFamily: "monospace" }}>{invoice.invoice_number}</TableCell>
              <TableCell>{day(invoice.due_on)}</TableCell>
              <TableCell align="right" sx={numeric}>
                {formatCents(invoice.total_in_cents, currency)}
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </Card>
  );
}

/** The plan's add-ons (spec 3 §2 "add-ons"): what each costs, what the plan includes, what is billed now. */
function AddonsCard({ usage }: { usage: UseQueryResult<Usage> }) {
  const { t } = useTranslation();
  const addons = usage.data?.addons ?? [];
  const [kindOf, rest] = [(item: string) => item.split(":")[0], (item: string) => item.slice(item.indexOf(":") + 1)];
  const name = (item: string) =>
    item === "device:microservices"
      ? t("billing.addon_devices")
      : kindOf(item) === "device"
        ? t("billing.addon_device_kind", {
            kind: t(`billing.device_kinds.${rest(item)}` as "billing.device_kinds.microservices", {
              defaultValue: rest(item),
            }),
          })
        : t("billing.addon_seats", {
            role: t(`billing.member_roles.${rest(item)}` as "billing.member_roles.member", {
              defaultValue: rest(item),
            }),
          });
  const total = addons.reduce((sum, addon) => sum + addon.amount_cents, 0);
  return (
    <Card title={t("billing.addons")}>
      {usage.isPending ? (
        <Loading />
      ) : usage.isError ? (
        <Failed text={t("billing.errors.failed_retrieving_usage")} onRetry={() => void usage.refetch()} />
      ) : addons.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {t("billing.no_addons")}
        </Typography>
      ) : (
        <Table size="small" aria-label={t("billing.addons")}>
          <TableHead>
            <TableRow>
              <TableCell>{t("billing.item")}</TableCell>
              <TableCell align="right">{t("billing.addon_price")}</TableCell>
              <TableCell align="right">{t("billing.addon_included")}</TableCell>
              <TableCell align="right">{t("billing.addon_used")}</TableCell>
              <TableCell align="right">{t("billing.addon_billed")}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {addons.map((addon) => (
              <TableRow key={addon.item}>
                <TableCell>{name(addon.item)}</TableCell>
                <TableCell align="right" sx={numeric}>
                  {addon.unit_price_cents === 0
                    ? t("billing.addon_free")
                    : formatDollarsPerMonth(addon.unit_price_cents)}
                </TableCell>
                <TableCell align="right" sx={numeric}>
                  {addon.included}
                </TableCell>
                <TableCell align="right" sx={numeric}>
                  {addon.used}
                </TableCell>
                <TableCell align="right" sx={numeric}>
                  {addon.billed > 0 ? `${addon.billed} × ${formatDollars(addon.unit_price_cents)}` : "–"}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
          <TableFooter>
            <TableRow>
              <TableCell colSpan={4} sx={{ fontWeight: 600, color: "text.primary", borderBottom: 0 }}>
                {t("billing.addons_total")}
              </TableCell>
              <TableCell align="right" sx={{ ...numeric, fontWeight: 600, color: "text.primary", borderBottom: 0 }}>
                {formatDollarsPerMonth(total)}
              </TableCell>
            </TableRow>
          </TableFooter>
        </Table>
      )}
    </Card>
  );
}

export function InvoicesCard(props: {
  invoices: UseQueryResult<Invoice[]>;
  onDownload: (invoice: Invoice) => Promise<void>;
}) {
  const { t } = useTranslation();
  const [showAll, setShowAll] = useState(false);
  const [downloading, setDownloading] = useState<string>();
  const list = props.invoices.data ?? [];
  const shown = visibleInvoices(list, showAll, INVOICES_SHOWN);
  const more = list.length > INVOICES_SHOWN;
  return (
    <Card
      title={t("billing.invoices")}
      sx={{ gridColumn: "1 / -1" }}
      action={
        more ? (
          <Button size="small" onClick={() => setShowAll((value) => !value)}>
            {showAll ? t("billing.view_fewer") : t("billing.view_all", { count: list.length })}
          </Button>
        ) : undefined
      }
    >
      {props.invoices.isPending ? (
        <Loading />
      ) : props.invoices.isError ? (
        <Failed text={t("billing.errors.failed_retrieving_invoices")} onRetry={() => void props.invoices.refetch()} />
      ) : list.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {t("billing.no_invoices")}
        </Typography>
      ) : (
        <Table size="small" aria-label={t("billing.invoices")}>
          <TableHead>
            <TableRow>
              <TableCell>{t("billing.invoice_date")}</TableCell>
              <TableCell>{t("billing.invoice_number")}</TableCell>
              <TableCell>{t("billing.invoice_state")}</TableCell>
              <TableCell align="right">{t("billing.total")}</TableCell>
              <TableCell align="right" sx={{ width: 56 }}>
                <Box
                  component="span"
                  sx={{ position: "absolute", width: 1, height: 1, overflow: "hidden", clip: "rect(0 0 0 0)" }}
                >
                  {t("billing.download")}
                </Box>
              </TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {shown.map((invoice) => {
              const tone = invoiceStateTone(invoice.state);
              const downloadable = canDownloadInvoice(invoice.state);
              const label = t("billing.download_invoice", { number: invoice.invoice_number });
              return (
                <TableRow key={invoice.uuid} hover>
                  <TableCell sx={numeric}>{day(invoice.created_at)}</TableCell>
                  <TableCell sx={{ fontFamily: "monospace" }}>{invoice.invoice_number}</TableCell>
                  <TableCell>
                    <Chip
                      size="small"
                      color={tone}
                      label={t(`billing.invoice_states.${invoice.state}` as "billing.invoice_states.paid", {
                        defaultValue: invoice.state,
                      })}
                    />
                    {invoice.state === "past_due" && invoice.due_on ? (
                      <Typography component="span" variant="caption" color="error" sx={{ ml: 1 }}>
                        {t("billing.due_on", { date: day(invoice.due_on) })}
                      </Typography>
                    ) : null}
                  </TableCell>
                  <TableCell align="right" sx={{ ...numeric, fontWeight: 500 }}>
                    {formatCents(invoice.total_in_cents, invoice.currency || "USD")}
                  </TableCell>
                  <TableCell align="right">
                    <Tooltip title={downloadable ? label : t("billing.not_yet_available")}>
                      <span>
                        <IconButton
                          size="small"
                          aria-label={label}
                          disabled={!downloadable || downloading === invoice.uuid}
                          onClick={async () => {
                            setDownloading(invoice.uuid);
                            await props.onDownload(invoice);
                            setDownloading(undefined);
                          }}
                        >
                          <DownloadOutlined fontSize="small" />
                        </IconButton>
                      </span>
                    </Tooltip>
                  </TableCell>
                </TableRow>
              );
            })}
          </TableBody>
        </Table>
      )}
    </Card>
  );
}
