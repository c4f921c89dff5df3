import { cardTypeOfNumber, isValidCardNumber, isValidCvc, isValidExpiry } from "@flotilla/domain";
import LockOutlined from "@mui/icons-material/LockOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import Tab from "@mui/material/Tab";
import Tabs from "@mui/material/Tabs";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { isNetworkError } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { useCaptcha } from "../auth/captcha.tsx";
import { type BillingApi, type BillingInfo, billingErrorText, requireClientSecret } from "./api.ts";
import { groupCardNumber, parseExpiry, paymentFormBlocker } from "./model.ts";
import { dialogActionsSx } from "./ui.tsx";

type Method = "card" | "bank";

const EMPTY = { number: "", expiry: "", cvc: "", name: "", routing: "", account: "", holder: "" };

/**
 * The payment dialog (spec 3 §2, §4 Plan change, §5): a card (number, expiry, CVC, name) or a
 * bank debit (routing and account number, holder, the recurring-debit terms to "Accept"). Saving
 * creates a setup intent (with the captcha), confirms it with the built-in test provider, then
 * stores it as the organization's payment method (`token_id`). The provider's refusal names the
 * problem ("card number: not a valid card number") and is shown in the dialog.
 */
export function PaymentDialog(props: {
  open: boolean;
  orgId: number;
  api: BillingApi;
  /** Shown above the form when a plan change waits for the payment method. */
  notice?: string;
  onSaved: (info: BillingInfo) => void | Promise<void>;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const captcha = useCaptcha();
  const [method, setMethod] = useState<Method>("card");
  const [form, setForm] = useState(EMPTY);
  const [touched, setTouched] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const set = (key: keyof typeof EMPTY) => (event: { target: { value: string } }) =>
    setForm((current) => ({
      ...current,
      [key]: key === "number" ? groupCardNumber(event.target.value) : event.target.value,
    }));

  const expiry = parseExpiry(form.expiry);
  const problems: Partial<Record<keyof typeof EMPTY, string>> =
    method === "card"
      ? {
          number: !form.number.trim()
            ? t("billing.required")
            : isValidCardNumber(form.number)
              ? undefined
              : t("billing.invalid_card_number"),
          expiry: !form.expiry.trim()
            ? t("billing.required")
            : expiry && isValidExpiry(expiry.month, expiry.year, new Date())
              ? undefined
              : t("billing.invalid_expiry"),
          cvc: !form.cvc.trim()
            ? t("billing.required")
            : isValidCvc(form.cvc, cardTypeOfNumber(form.number))
              ? undefined
              : t("billing.invalid_cvc"),
          name: form.name.trim() ? undefined : t("billing.required"),
        }
      : {
          routing: /^\d{9}$/.test(form.routing.trim()) ? undefined : t("billing.invalid_routing"),
          account: /^\d{4,17}$/.test(form.account.trim()) ? undefined : t("billing.invalid_account"),
          holder: form.holder.trim() ? undefined : t("billing.required"),
        };
  const invalid = Object.values(problems).some(Boolean);
  const shown = (key: keyof typeof EMPTY) => (touched ? problems[key] : undefined);

  const close = () => {
    if (busy) return;
    setForm(EMPTY);
    setTouched(false);
    setError(undefined);
    props.onClose();
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (invalid) return;
    const blocker = paymentFormBlocker(captcha);
    if (blocker) {
      setError(t(blocker));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const intent = await props.api.createSetupIntent(props.orgId, captcha.response);
      const secret = requireClientSecret(intent, t("billing.errors.missing_client_secret"));
      if (method === "card" && expiry) {
        await props.api.confirmTestSetupIntent(secret, {
          card: {
            number: form.number.replace(/\s/g, ""),
            exp_month: String(expiry.month),
            exp_year: String(expiry.year),
            cvc: form.cvc.trim(),
            name: form.name.trim(),
          },
        });
      } else {
        await props.api.confirmTestSetupIntent(secret, {
          bank_account: {
            routing_number: form.routing.trim(),
            account_number: form.account.trim(),
            name: form.holder.trim(),
            mandate_accepted: true,
          },
        });
      }
      const info = await props.api.saveInfo(props.orgId, intent.id);
      setForm(EMPTY);
      setTouched(false);
      await props.onSaved(info);
    } catch (caught) {
      // The dialog's own checks throw their text; request failures are worded by billingErrorText.
      const own = caught instanceof Error && !("statusCode" in caught) && !isNetworkError(caught);
      const text = own ? caught.message : billingErrorText(caught);
      setError(text);
      // A failed billing-info update is also a toast (spec 3 §8).
      showToast("error", text);
      captcha.reset();
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog open={props.open} onClose={close} maxWidth="sm" fullWidth aria-labelledby="payment-dialog-title">
      <Box component="form" noValidate onSubmit={submit}>
        <DialogTitle id="payment-dialog-title">{t("billing.payment_dialog_title")}</DialogTitle>
        <DialogContent>
          {props.notice ? (
            <Alert severity="info" sx={{ mb: 2 }}>
              {props.notice}
            </Alert>
          ) : null}
          <Tabs
            value={method}
            onChange={(_event, value: Method) => {
              setMethod(value);
              setTouched(false);
              setError(undefined);
            }}
            sx={{ mb: 2, borderBottom: 1, borderColor: "divider" }}
          >
            <Tab value="card" label={t("billing.payment_card")} />
            <Tab value="bank" label={t("billing.payment_bank")} />
          </Tabs>
          {error ? (
            <Alert severity="error" sx={{ mb: 2 }}>
              {error}
            </Alert>
          ) : null}
          {method === "card" ? (
            <Box sx={{ display: "grid", gap: 2, gridTemplateColumns: "1fr 1fr" }}>
              <TextField
                label={t("billing.card_number")}
                value={form.number}
                onChange={set("number")}
                error={Boolean(shown("number"))}
                helperText={shown("number")}
                autoComplete="cc-number"
                slotProps={{ htmlInput: { inputMode: "numeric" } }}
                sx={{ gridColumn: "1 / -1" }}
                autoFocus
              />
              <TextField
                label={t("billing.card_expiry")}
                placeholder="MM/YY"
                value={form.expiry}
                onChange={set("expiry")}
                error={Boolean(shown("expiry"))}
                helperText={shown("expiry")}
                autoComplete="cc-exp"
              />
              <TextField
                label={t("billing.card_cvc")}
                value={form.cvc}
                onChange={set("cvc")}
                error={Boolean(shown("cvc"))}
                helperText={shown("cvc")}
                autoComplete="cc-csc"
                slotProps={{ htmlInput: { inputMode: "numeric", maxLength: 4 } }}
              />
              <TextField
                label={t("billing.card_name")}
                value={form.name}
                onChange={set("name")}
                error={Boolean(shown("name"))}
                helperText={shown("name")}
                autoComplete="cc-name"
                sx={{ gridColumn: "1 / -1" }}
              />
            </Box>
          ) : (
            <Box sx={{ display: "grid", gap: 2, gridTemplateColumns: "1fr 1fr" }}>
              <TextField
                label={t("billing.routing_number")}
                value={form.routing}
                onChange={set("routing")}
                error={Boolean(shown("routing"))}
                helperText={shown("routing")}
                slotProps={{ htmlInput: { inputMode: "numeric" } }}
                autoFocus
              />
              <TextField
                label={t("billing.account_number")}
                value={form.account}
                onChange={set("account")}
                error={Boolean(shown("account"))}
                helperText={shown("account")}
                slotProps={{ htmlInput: { inputMode: "numeric" } }}
              />
              <TextField
                label={t("billing.account_holder")}
                value={form.holder}
                onChange={set("holder")}
                error={Boolean(shown("holder"))}
                helperText={shown("holder")}
                sx={{ gridColumn: "1 / -1" }}
              />
              <Alert severity="info" variant="outlined" icon={false} sx={{ gridColumn: "1 / -1" }}>
                <Typography variant="subtitle2" component="h3" sx={{ mb: 0.5 }}>
                  {t("billing.debit_terms_title")}
                </Typography>
                <Typography variant="body2">{t("billing.debit_terms")}</Typography>
              </Alert>
            </Box>
          )}
          {captcha.element ? <Box sx={{ mt: 2 }}>{captcha.element}</Box> : null}
          <Box sx={{ display: "flex", alignItems: "center", gap: 0.75, mt: 2, color: "text.secondary" }}>
            <LockOutlined sx={{ fontSize: 16 }} />
            <Typography variant="caption">{t("billing.test_payments_hint")}</Typography>
          </Box>
        </DialogContent>
        <DialogActions sx={dialogActionsSx}>
          <Button onClick={close} disabled={busy}>
            {t("billing.cancel")}
          </Button>
          <Button type="submit" variant="contained" loading={busy}>
            {method === "bank" ? t("billing.accept") : t("billing.save")}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}
