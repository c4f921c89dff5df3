import {
  CREDIT_EXPIRY_YEARS,
  canPurchaseCredits,
  cardTypeOf,
  creditPurchaseNeedsContactSales,
  parseCreditInput,
  validateCreditQuantity,
} from "@flotilla/domain";
import CheckCircleOutlined from "@mui/icons-material/CheckCircleOutlined";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import Step from "@mui/material/Step";
import StepLabel from "@mui/material/StepLabel";
import Stepper from "@mui/material/Stepper";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { getStatusCode } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { type BillingInfo, billingErrorText, type CreditBundle } from "./api.ts";
import { formatCents } from "./model.ts";
import { dialogActionsSx, numeric } from "./ui.tsx";

/**
 * The add-credits dialog (spec 3 §4 Credits): step 0 chooses the quantity, Next → step 1 confirms
 * with "Pay now", a paid (or processing) bundle → step 2, whose "Purchase more credits" goes back
 * to step 0 with the quantity reset to 1. A failed payment shows the error and closes the dialog;
 * a total above $1,000,000 shows Contact sales instead of Next.
 */
export function AddCreditsDialog(props: {
  open: boolean;
  initialQuantity: number;
  pricePerCreditCents: number;
  paymentMethod: BillingInfo | undefined;
  purchase: (quantity: number) => Promise<CreditBundle>;
  onPurchased: () => Promise<unknown> | undefined;
  onClose: () => void;
}) {
  const salesUrl = useServices().config.salesUrl;
  const { t } = useTranslation();
  const [step, setStep] = useState<0 | 1 | 2>(0);
  const [quantity, setQuantity] = useState(String(props.initialQuantity));
  const [bought, setBought] = useState<CreditBundle>();
  const count = parseCreditInput(quantity) ?? 0;
  const error = validateCreditQuantity(quantity);
  const total = count * props.pricePerCreditCents;
  const contactSales = creditPurchaseNeedsContactSales(total);
  const method = props.paymentMethod;
  const methodText = method?.last_four
    ? /bank|debit/.test(method.type ?? "")
      ? t("billing.bank_account_ending", { last4: method.last_four })
      : t("billing.card_ending", {
          brand: t(`billing.card_brands.${cardTypeOf(method.card_type)}`),
          last4: method.last_four,
        })
    : t("credits.charged_to_default");

  const pay = useMutation({
    mutationFn: () => props.purchase(count),
    meta: { reportErrors: false },
    onSuccess: async (bundle) => {
      await props.onPurchased();
      if (bundle.payment_status === "failed") {
        showToast("error", bundle.error_message?.trim() || t("credits.purchase_failed"));
        props.onClose();
        return;
      }
      setBought(bundle);
      setStep(2);
    },
    onError: (failure) => {
      const status = getStatusCode(failure);
      showToast(
        "error",
        status !== undefined && status >= 400 && status < 500
          ? billingErrorText(failure)
          : t("credits.purchase_failed"),
      );
      props.onClose();
    },
  });

  return (
    <Dialog
      open={props.open}
      onClose={pay.isPending ? undefined : props.onClose}
      maxWidth="xs"
      fullWidth
      aria-labelledby="credits-dialog-title"
    >
      <DialogTitle id="credits-dialog-title">{t("credits.dialog_title")}</DialogTitle>
      <DialogContent>
        <Stepper activeStep={step} sx={{ mb: 3, mt: 1 }}>
          <Step completed={step > 0}>
            <StepLabel>{t("credits.step_choose")}</StepLabel>
          </Step>
          <Step completed={step > 1}>
            <StepLabel>{t("credits.step_confirm")}</StepLabel>
          </Step>
          <Step completed={step === 2}>
            <StepLabel>{t("credits.step_done")}</StepLabel>
          </Step>
        </Stepper>
        {step === 0 ? (
          <Box
            component="form"
            id="add-credits-form"
            onSubmit={(event) => {
              event.preventDefault();
              if (canPurchaseCredits(quantity) && !contactSales) setStep(1);
            }}
          >
            <TextField
              autoFocus
              fullWidth
              label={t("credits.quantity")}
              value={quantity}
              onChange={(event) => setQuantity(event.target.value)}
              error={Boolean(error)}
              helperText={error ?? t("credits.price_line", { price: formatCents(props.pricePerCreditCents) })}
              slotProps={{ htmlInput: { inputMode: "numeric" } }}
            />
            <Box
              sx={{ display: "flex", justifyContent: "space-between", mt: 2 }}
              role="group"
              aria-label={t("credits.total")}
            >
              <Typography color="text.secondary">{t("credits.total")}</Typography>
              <Typography sx={{ fontWeight: 600, ...numeric }}>{error ? "–" : formatCents(total)}</Typography>
            </Box>
            {contactSales && !error ? (
              <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
                {t("credits.contact_sales_text")}
              </Typography>
            ) : null}
          </Box>
        ) : step === 1 ? (
          <Typography>
            {t("credits.confirm_text", {
              count,
              total: formatCents(total),
              method: methodText,
              years: CREDIT_EXPIRY_YEARS,
            })}
          </Typography>
        ) : (
          <Box sx={{ display: "flex", gap: 1.5, alignItems: "flex-start" }}>
            <CheckCircleOutlined color="success" />
            <Typography>
              {bought?.payment_status === "processing"
                ? t("credits.success_processing", { count: bought.original_quantity })
                : t("credits.success", { count: bought?.original_quantity ?? count })}
            </Typography>
          </Box>
        )}
      </DialogContent>
      <DialogActions sx={dialogActionsSx}>
        {step === 0 ? (
          <>
            <Button onClick={props.onClose}>{t("credits.cancel")}</Button>
            {contactSales && !error ? (
              <Button variant="contained" href={salesUrl} target="_blank" rel="noopener noreferrer">
                {t("credits.contact_sales")}
              </Button>
            ) : (
              <Button
                variant="contained"
                type="submit"
                form="add-credits-form"
                disabled={!canPurchaseCredits(quantity)}
              >
                {t("credits.next")}
              </Button>
            )}
          </>
        ) : step === 1 ? (
          <>
            <Button onClick={() => setStep(0)} disabled={pay.isPending}>
              {t("credits.back")}
            </Button>
            <Button variant="contained" onClick={() => pay.mutate()} disabled={pay.isPending}>
              {t("credits.pay_now")}
            </Button>
          </>
        ) : (
          <>
            <Button
              onClick={() => {
                setQuantity("1");
                setBought(undefined);
                setStep(0);
              }}
            >
              {t("credits.purchase_more")}
            </Button>
            <Button variant="contained" onClick={props.onClose}>
              {t("credits.close")}
            </Button>
          </>
        )}
      </DialogActions>
    </Dialog>
  );
}
