import { type BillingCycle, PLAN_CHANGE_DEBOUNCE_MS, type PlanChangeType } from "@flotilla/domain";
import ArrowForward from "@mui/icons-material/ArrowForward";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogContentText from "@mui/material/DialogContentText";
import DialogTitle from "@mui/material/DialogTitle";
import Paper from "@mui/material/Paper";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { clickGate, formatCents } from "./model.ts";
import { dialogActionsSx } from "./ui.tsx";

export interface PlanSide {
  title: string;
  cycle: BillingCycle;
  /** Cents per month. */
  pricePerMonth: number;
}

function PlanBox(props: { label: string; side: PlanSide; highlight?: boolean }) {
  const { t } = useTranslation();
  return (
    <Paper
      variant="outlined"
      sx={{
        p: 1.5,
        flex: 1,
        minWidth: 0,
        ...(props.highlight ? { borderColor: "primary.main", borderWidth: 2 } : {}),
      }}
    >
      <Typography variant="overline" color="text.secondary" sx={{ lineHeight: 1.5 }}>
        {props.label}
      </Typography>
      <Typography variant="h6" component="p" sx={{ fontWeight: 600 }}>
        {props.side.title}
      </Typography>
      <Typography variant="body2" color="text.secondary">
        {props.side.cycle === "annual" ? t("billing.plan_cycle_annual") : t("billing.plan_cycle_monthly")}
      </Typography>
      <Typography variant="body1" sx={{ mt: 0.5, fontWeight: 500, fontVariantNumeric: "tabular-nums" }}>
        {t("billing.price_line", { price: formatCents(props.side.pricePerMonth) })}
      </Typography>
    </Paper>
  );
}

/**
 * The change-plan confirmation (spec 3 §4 Plan change): the current plan next to the proposed one,
 * optional feedback on a downgrade (planChangeReason), the free-plan warning with contact sales
 * instead of confirming, and, for a paid plan paid by bank debit, the recurring-debit terms after
 * "Next". The confirm button ignores clicks closer than 500 ms.
 */
export function PlanChangeDialog(props: {
  open: boolean;
  current: PlanSide;
  target: PlanSide;
  type: PlanChangeType;
  /** A lower annual price: feedback is asked for. */
  downgrade: boolean;
  /** Moving to the free plan is refused: the devices it would hold, and its allowance. */
  freeWarning?: string;
  /** The new plan is paid and the payment method is a bank account: terms first. */
  bankDebit: boolean;
  busy: boolean;
  error?: string;
  onConfirm: (reason: string | undefined) => void;
  onClose: () => void;
}) {
  const salesUrl = useServices().config.salesUrl;
  const { t } = useTranslation();
  const [reason, setReason] = useState("");
  const [terms, setTerms] = useState(false);
  const [gate] = useState(() => clickGate(PLAN_CHANGE_DEBOUNCE_MS));

  const confirm = () => {
    if (!gate.pass()) return;
    props.onConfirm(props.downgrade && reason.trim() ? reason.trim() : undefined);
  };
  const close = () => {
    setReason("");
    setTerms(false);
    props.onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (props.freeWarning) return;
    if (props.bankDebit && !terms) setTerms(true);
    else confirm();
  };

  return (
    <>
      <Dialog open={props.open && !terms} onClose={close} maxWidth="sm" fullWidth aria-labelledby="plan-dialog-title">
        <Box component="form" noValidate onSubmit={submit}>
          <DialogTitle id="plan-dialog-title">{t("billing.change_plan_title")}</DialogTitle>
          <DialogContent>
            <DialogContentText sx={{ mb: 2 }}>
              {props.target.pricePerMonth === 0 ? t("billing.change_plan_text_free") : t("billing.change_plan_text")}
            </DialogContentText>
            <Box sx={{ display: "flex", alignItems: "center", gap: 1.5 }}>
              <PlanBox label={t("billing.from")} side={props.current} />
              <ArrowForward color="action" aria-hidden />
              <PlanBox label={t("billing.to")} side={props.target} highlight />
            </Box>
            {props.error ? (
              <Alert severity="error" sx={{ mt: 2 }}>
                {props.error}
              </Alert>
            ) : null}
            {props.freeWarning ? (
              <Alert severity="warning" sx={{ mt: 2 }}>
                {props.freeWarning}
              </Alert>
            ) : null}
            {props.downgrade && !props.freeWarning ? (
              <TextField
                fullWidth
                multiline
                minRows={2}
                sx={{ mt: 2 }}
                label={t("billing.feedback")}
                helperText={t("billing.feedback_hint")}
                value={reason}
                onChange={(event) => setReason(event.target.value)}
              />
            ) : null}
          </DialogContent>
          <DialogActions sx={dialogActionsSx}>
            <Button onClick={close}>{t("billing.cancel")}</Button>
            {props.freeWarning || props.type === "contact_sales" ? (
              <Button variant="contained" href={salesUrl} target="_blank" rel="noopener noreferrer">
                {t("billing.contact_sales")}
              </Button>
            ) : (
              <Button type="submit" variant="contained" loading={props.busy}>
                {props.bankDebit ? t("billing.next") : t("billing.confirm")}
              </Button>
            )}
          </DialogActions>
        </Box>
      </Dialog>
      <Dialog open={props.open && terms} onClose={close} maxWidth="sm" fullWidth aria-labelledby="terms-dialog-title">
        <DialogTitle id="terms-dialog-title">{t("billing.debit_terms_title")}</DialogTitle>
        <DialogContent>
          <DialogContentText>{t("billing.debit_terms")}</DialogContentText>
          {props.error ? (
            <Alert severity="error" sx={{ mt: 2 }}>
              {props.error}
            </Alert>
          ) : null}
        </DialogContent>
        <DialogActions sx={dialogActionsSx}>
          <Button onClick={close}>{t("billing.cancel")}</Button>
          <Button variant="contained" loading={props.busy} onClick={confirm}>
            {props.type === "upgrade" ? t("billing.accept_and_pay_now") : t("billing.accept_and_confirm")}
          </Button>
        </DialogActions>
      </Dialog>
    </>
  );
}
