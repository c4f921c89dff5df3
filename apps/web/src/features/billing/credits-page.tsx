import {
  CREDIT_FEATURE_SLUG,
  CREDIT_MONTHS_DEFAULT,
  canApplyCreditThreshold,
  creditBalanceCounts,
  creditsAvailableFor,
  creditsNeeded,
  defaultCreditThreshold,
  PURCHASE_HISTORY_PAGE_SIZE,
  parseCreditInput,
  validateCreditMonths,
  validateCreditThreshold,
  validateEstimatedDevices,
} from "@flotilla/domain";
import AddCardOutlined from "@mui/icons-material/AddCardOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TablePagination from "@mui/material/TablePagination";
import TableRow from "@mui/material/TableRow";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { ButtonLink, TextLink } from "../../components/links.tsx";
import { PageHeader } from "../../components/page.tsx";
import { showToast } from "../../lib/toasts.ts";
import { useOrganization } from "../orgs/data.ts";
import { Card, useNumericParam } from "../orgs/ui.tsx";
import {
  billingApi,
  billingErrorText,
  billingKeys,
  billingPlanQuery,
  type CreditBundle,
  creditKeys,
  creditsApi,
  planCatalogueQuery,
} from "./api.ts";
import { AddCreditsDialog } from "./credits-dialog.tsx";
import { formatCents, historyPage, planDevices, unexpiredCreditBalance, usageRows } from "./model.ts";
import { day, Fact, Failed, Loading, numeric, useFailureToast } from "./ui.tsx";

const STATUS_TONES: Record<string, "success" | "warning" | "error" | "default"> = {
  paid: "success",
  complimentary: "success",
  "manually invoiced": "success",
  processing: "warning",
  failed: "error",
};

/**
 * `/orgs/{orgId}/credits` (spec 3 §2 Billing, §4 Credits, §5, §9): the balance with the plan and
 * its included devices, the purchase history, a calculator of the credits needed, the low-balance
 * notification, and the add-credits dialog. The route guard lets only organization.access_billing in.
 */
export function CreditsPage() {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const api = useMemo(() => billingApi(sdk, config.apiUrl), [sdk, config.apiUrl]);
  const credits = useMemo(() => creditsApi(sdk), [sdk]);
  const orgId = useNumericParam("orgId");
  const queryClient = useQueryClient();
  const org = useOrganization(orgId, true, true);

  const quiet = { meta: { handlesErrors: true }, throwOnError: false } as const;
  const plan = useQuery({ ...billingPlanQuery(api, orgId), ...quiet });
  const account = useQuery({ queryKey: billingKeys.account(orgId), queryFn: () => api.getAccount(orgId), ...quiet });
  const info = useQuery({
    queryKey: billingKeys.info(orgId),
    queryFn: () => api.getInfo(orgId),
    enabled: account.data?.account_state === "active",
    ...quiet,
  });
  const usage = useQuery({ queryKey: billingKeys.usage(orgId), queryFn: () => api.getUsage(orgId), ...quiet });
  const catalogue = useQuery({ ...planCatalogueQuery(api), ...quiet });
  const feature = useQuery({
    queryKey: creditKeys.feature,
    queryFn: () => credits.getFeatureId(CREDIT_FEATURE_SLUG),
    staleTime: Number.POSITIVE_INFINITY,
    ...quiet,
  });
  const featureId = feature.data ?? undefined;
  const bundles = useQuery({
    queryKey: creditKeys.bundles(orgId),
    queryFn: () => credits.getBundles(orgId),
    ...quiet,
  });
  const notification = useQuery({
    queryKey: creditKeys.notification(orgId),
    queryFn: () => credits.getNotification(orgId, featureId ?? 0),
    enabled: featureId !== undefined,
    ...quiet,
  });
  useFailureToast(plan, t("billing.errors.failed_retrieving_plan"));
  useFailureToast(usage, t("billing.errors.failed_retrieving_usage"));
  useFailureToast(bundles, t("credits.failed_loading"));

  const balance = unexpiredCreditBalance(bundles.data ?? [], new Date());
  const code = plan.data?.code;
  const available = creditsAvailableFor(code);
  const hasPaymentMethod = Boolean(info.data?.type);
  const { included, pricePerDeviceCents } = planDevices(catalogue.data?.find((entry) => entry.billing_code === code));
  const deviceCount = usageRows(usage.data?.currentUsage, "device").reduce((sum, row) => sum + row.count, 0);
  const threshold = notification.data?.is_sent_when_below__threshold;
  const canBuy = available && hasPaymentMethod && featureId !== undefined;

  const [dialog, setDialog] = useState<{ quantity: number }>();

  // The low-balance banner (spec 3 §4 Credits): shown while below, dismissible; it comes back once
  // the balance has been at or above the threshold again.
  const below = threshold !== undefined && bundles.isSuccess && balance < threshold;
  const [dismissed, setDismissed] = useState(false);
  useEffect(() => {
    if (!below) setDismissed(false);
  }, [below]);

  return (
    <>
      <PageHeader
        title={t("credits.title")}
        description={org.data ? `${org.data.name} · ${t("credits.description")}` : t("credits.description")}
      />
      {below && !dismissed ? (
        <Alert
          severity="warning"
          sx={{ mb: 2 }}
          onClose={() => setDismissed(true)}
          slotProps={{ closeButton: { title: t("credits.dismiss"), "aria-label": t("credits.dismiss") } }}
        >
          {t("credits.below_threshold", { balance, threshold })}
        </Alert>
      ) : null}
      {plan.isSuccess && !available ? (
        <Alert
          severity="info"
          sx={{ mb: 2 }}
          action={
            <ButtonLink
              color="inherit"
              size="small"
              to="/orgs/$orgId/billing"
              params={{ orgId: String(orgId) }}
              hash="billing-plans"
            >
              {t("credits.upgrade_plan")}
            </ButtonLink>
          }
        >
          {t("credits.only_available")}
        </Alert>
      ) : null}
      {info.isSuccess && !hasPaymentMethod ? (
        <Alert severity="warning" sx={{ mb: 2 }}>
          {t("credits.payment_method_required")}{" "}
          <TextLink to="/orgs/$orgId/billing" params={{ orgId: String(orgId) }} hash="payment-method" color="inherit">
            {t("credits.add_payment_method")}
          </TextLink>
        </Alert>
      ) : null}
      <Box
        sx={{
          display: "grid",
          gap: 2,
          gridTemplateColumns: { xs: "minmax(0, 1fr)", lg: "repeat(3, minmax(0, 1fr))" },
          alignItems: "start",
        }}
      >
        <Card
          title={t("credits.summary")}
          action={
            <Button
              size="small"
              variant="contained"
              startIcon={<AddCardOutlined />}
              disabled={!canBuy}
              onClick={() => setDialog({ quantity: 1 })}
            >
              {t("credits.add_credits")}
            </Button>
          }
        >
          {bundles.isPending || plan.isPending ? (
            <Loading />
          ) : bundles.isError ? (
            <Failed text={t("credits.failed_loading")} onRetry={() => void bundles.refetch()} />
          ) : (
            <>
              <Box role="group" aria-label={t("credits.balance")} sx={{ mb: 1 }}>
                <Typography variant="overline" color="text.secondary" sx={{ lineHeight: 1.5 }}>
                  {t("credits.balance")}
                </Typography>
                <Typography variant="h4" component="p" sx={{ fontWeight: 600, ...numeric }}>
                  {t("credits.balance_value", { count: balance })}
                </Typography>
              </Box>
              <Fact label={t("credits.plan")}>{plan.data?.title ?? "–"}</Fact>
              <Fact label={t("credits.included_devices")}>{included}</Fact>
              <Fact label={t("credits.current_devices")}>{usage.isSuccess ? deviceCount : "–"}</Fact>
              {pricePerDeviceCents !== undefined && available ? (
                <Fact label={t("credits.price_per_credit")}>{formatCents(pricePerDeviceCents)}</Fact>
              ) : null}
            </>
          )}
        </Card>
        <Calculator
          currentDevices={deviceCount}
          includedDevices={included}
          balance={balance}
          canBuy={canBuy}
          onBuy={(quantity) => setDialog({ quantity })}
        />
        <NotificationsCard
          // A fresh form once the saved notification (or the suggestion's device count) is known, not
          // on each save: what the user types meanwhile stays.
          key={`${notification.isFetched}-${notification.data?.id ?? "none"}-${usage.isSuccess}`}
          saved={threshold}
          notificationId={notification.data?.id}
          suggested={defaultCreditThreshold(deviceCount)}
          loading={notification.isPending && featureId !== undefined}
          onSave={async (value) => {
            if (featureId === undefined) return;
            if (notification.data) await credits.updateNotification(notification.data.id, value);
            else await credits.createNotification(orgId, featureId, value);
            showToast("success", t("credits.notification_saved"));
            await queryClient.invalidateQueries({ queryKey: creditKeys.notification(orgId) });
          }}
          onRemove={async (id) => {
            await credits.removeNotification(id);
            showToast("success", t("credits.notification_removed"));
            await queryClient.invalidateQueries({ queryKey: creditKeys.notification(orgId) });
          }}
        />
        <HistoryCard bundles={bundles.data ?? []} pending={bundles.isPending} />
      </Box>
      {dialog && featureId !== undefined ? (
        <AddCreditsDialog
          open
          initialQuantity={dialog.quantity}
          pricePerCreditCents={pricePerDeviceCents ?? 0}
          paymentMethod={info.data}
          onClose={() => setDialog(undefined)}
          purchase={(quantity) => credits.purchase(orgId, featureId, quantity)}
          onPurchased={() => queryClient.invalidateQueries({ queryKey: creditKeys.bundles(orgId) })}
        />
      ) : null}
    </>
  );
}

function Calculator(props: {
  currentDevices: number;
  includedDevices: number;
  balance: number;
  canBuy: boolean;
  onBuy: (quantity: number) => void;
}) {
  const { t } = useTranslation();
  const [estimated, setEstimated] = useState("0");
  const [months, setMonths] = useState(String(CREDIT_MONTHS_DEFAULT));
  const estimatedError = validateEstimatedDevices(estimated);
  const monthsError = validateCreditMonths(months);
  const needed =
    estimatedError || monthsError
      ? 0
      : creditsNeeded({
          currentDevices: props.currentDevices,
          estimatedDevices: parseCreditInput(estimated) ?? 0,
          includedDevices: props.includedDevices,
          months: parseCreditInput(months) ?? 0,
          balance: props.balance,
        });
  return (
    <Card title={t("credits.calculator")}>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
        {t("credits.calculator_text")}
      </Typography>
      <Box sx={{ display: "flex", gap: 2 }}>
        <TextField
          size="small"
          label={t("credits.estimated_devices")}
          value={estimated}
          onChange={(event) => setEstimated(event.target.value)}
          error={Boolean(estimatedError)}
          helperText={estimatedError ?? " "}
          slotProps={{ htmlInput: { inputMode: "numeric" } }}
          sx={{ flex: 1 }}
        />
        <TextField
          size="small"
          label={t("credits.months")}
          value={months}
          onChange={(event) => setMonths(event.target.value)}
          error={Boolean(monthsError)}
          helperText={monthsError ?? " "}
          slotProps={{ htmlInput: { inputMode: "numeric" } }}
          sx={{ width: 110 }}
        />
      </Box>
      <Box sx={{ display: "flex", alignItems: "center", gap: 2, mt: 1 }}>
        <Box role="group" aria-label={t("credits.credits_needed")} sx={{ flex: 1 }}>
          <Typography variant="overline" color="text.secondary" sx={{ lineHeight: 1.5 }}>
            {t("credits.credits_needed")}
          </Typography>
          <Typography variant="h5" component="p" sx={{ fontWeight: 600, ...numeric }}>
            {needed.toLocaleString("en-US")}
          </Typography>
        </Box>
        <Tooltip title={needed === 0 ? t("credits.no_credits_needed") : ""}>
          <span>
            <Button variant="outlined" disabled={needed === 0 || !props.canBuy} onClick={() => props.onBuy(needed)}>
              {needed === 0 ? t("credits.add_credits") : t("credits.buy_needed", { count: needed })}
            </Button>
          </span>
        </Tooltip>
      </Box>
    </Card>
  );
}

function NotificationsCard(props: {
  saved: number | undefined;
  notificationId: number | undefined;
  suggested: number;
  loading: boolean;
  onSave: (value: number) => Promise<void>;
  onRemove: (id: number) => Promise<void>;
}) {
  const { t } = useTranslation();
  const [value, setValue] = useState(String(props.saved ?? props.suggested));
  const error = validateCreditThreshold(value);
  const save = useMutation({
    mutationFn: () => props.onSave(parseCreditInput(value) ?? 0),
    meta: { reportErrors: false },
    // The toast says why; the field goes back to its default (spec 2 §8: a failed change reverts).
    onError: (failure) => {
      showToast("error", billingErrorText(failure));
      setValue(String(props.saved ?? props.suggested));
    },
  });
  const remove = useMutation({
    mutationFn: (id: number) => props.onRemove(id),
    meta: { reportErrors: false },
    onError: (failure) => showToast("error", billingErrorText(failure)),
  });
  return (
    <Card
      title={t("credits.notifications")}
      action={
        props.notificationId !== undefined ? (
          <Button
            size="small"
            disabled={remove.isPending}
            onClick={() => props.notificationId !== undefined && remove.mutate(props.notificationId)}
          >
            {t("credits.remove_notification")}
          </Button>
        ) : undefined
      }
    >
      {props.loading ? (
        <Loading />
      ) : (
        <>
          <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
            {props.saved === undefined ? t("credits.notification_off") : t("credits.notifications_text")}
          </Typography>
          <Box
            component="form"
            sx={{ display: "flex", gap: 1, alignItems: "flex-start" }}
            onSubmit={(event) => {
              event.preventDefault();
              if (canApplyCreditThreshold(value, props.saved)) save.mutate();
            }}
          >
            <TextField
              size="small"
              label={t("credits.threshold")}
              value={value}
              onChange={(event) => setValue(event.target.value)}
              error={Boolean(error)}
              helperText={error ?? " "}
              slotProps={{ htmlInput: { inputMode: "numeric" } }}
              sx={{ flex: 1 }}
            />
            <Button
              type="submit"
              variant="outlined"
              sx={{ mt: 0.25 }}
              disabled={
                save.isPending ||
                // Apply is for a change; with no notification yet, the suggestion itself can be applied.
                !(
                  canApplyCreditThreshold(value, props.saved) ||
                  (props.saved === undefined && !error && parseCreditInput(value) !== null)
                )
              }
            >
              {t("credits.apply")}
            </Button>
          </Box>
        </>
      )}
    </Card>
  );
}

function HistoryCard({ bundles, pending }: { bundles: CreditBundle[]; pending: boolean }) {
  const { t } = useTranslation();
  const [page, setPage] = useState(0);
  const rows = historyPage(bundles, page);
  return (
    <Card title={t("credits.history")} sx={{ gridColumn: "1 / -1" }}>
      {pending ? (
        <Loading />
      ) : bundles.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {t("credits.no_history")}
        </Typography>
      ) : (
        <>
          <Table size="small" aria-label={t("credits.history")}>
            <TableHead>
              <TableRow>
                <TableCell>{t("credits.purchased_on")}</TableCell>
                <TableCell align="right">{t("credits.credits")}</TableCell>
                <TableCell align="right">{t("credits.remaining")}</TableCell>
                <TableCell align="right">{t("credits.cost")}</TableCell>
                <TableCell>{t("credits.status")}</TableCell>
                <TableCell>{t("credits.purchased_by")}</TableCell>
                <TableCell>{t("credits.expires")}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {rows.map((bundle) => {
                const status = (bundle.payment_status ?? "").replace(/_/g, " ");
                return (
                  <TableRow key={bundle.id} hover>
                    <TableCell sx={numeric}>{day(bundle.created_at)}</TableCell>
                    <TableCell align="right" sx={numeric}>
                      {bundle.original_quantity.toLocaleString("en-US")}
                    </TableCell>
                    <TableCell align="right" sx={numeric}>
                      {creditBalanceCounts(bundle.payment_status) ? bundle.total_balance.toLocaleString("en-US") : "–"}
                    </TableCell>
                    <TableCell align="right" sx={numeric}>
                      {formatCents(bundle.total_cost)}
                    </TableCell>
                    <TableCell>
                      <Tooltip title={status === "failed" ? (bundle.error_message ?? "") : ""}>
                        <Chip
                          size="small"
                          color={STATUS_TONES[status] ?? "default"}
                          label={t(`credits.statuses.${status}` as "credits.statuses.paid", { defaultValue: status })}
                        />
                      </Tooltip>
                    </TableCell>
                    <TableCell>{bundle.is_created_by__user?.[0]?.username ?? "–"}</TableCell>
                    <TableCell sx={numeric}>{day(bundle.expires_on__date)}</TableCell>
                  </TableRow>
                );
              })}
            </TableBody>
          </Table>
          {bundles.length > PURCHASE_HISTORY_PAGE_SIZE ? (
            <TablePagination
              component="div"
              count={bundles.length}
              page={page}
              onPageChange={(_, next) => setPage(next)}
              rowsPerPage={PURCHASE_HISTORY_PAGE_SIZE}
              rowsPerPageOptions={[PURCHASE_HISTORY_PAGE_SIZE]}
            />
          ) : null}
        </>
      )}
    </Card>
  );
}
