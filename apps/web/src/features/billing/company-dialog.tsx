import { TAX_ID_TYPES, validateTaxId } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import MenuItem from "@mui/material/MenuItem";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { isValidEmail } from "../orgs/access.ts";
import { type BillingAccount, type BillingAddress, billingErrorText, isInvalidTaxIdError } from "./api.ts";
import { taxIdChoiceKey, taxIdChoiceOf, taxIdPayload, taxIdRowOf } from "./model.ts";
import { dialogActionsSx } from "./ui.tsx";

const ADDRESS_FIELDS = ["address1", "address2", "city", "state", "zip", "country", "phone"] as const;

function initialForm(account: BillingAccount | undefined) {
  return {
    email: account?.email ?? "",
    company_name: account?.company_name ?? "",
    address: Object.fromEntries(ADDRESS_FIELDS.map((key) => [key, account?.address?.[key] ?? ""])) as Record<
      (typeof ADDRESS_FIELDS)[number],
      string
    >,
    taxType: taxIdChoiceOf(account?.tax_id),
    taxValue: account?.tax_id?.value ?? "",
  };
}

/**
 * Billing address & company info (spec 3 §2, §5, §7): email (required), company name, address,
 * and a tax ID (type and number; either empty sends null). A number that does not fit its type —
 * or the server's `fields_errors.invalid_tax_id` — is the tax ID field's error, in words. The page
 * mounts it afresh each time it opens, so the form starts from the account's current data.
 */
export function CompanyDialog(props: {
  open: boolean;
  account: BillingAccount | undefined;
  onSubmit: (body: {
    email: string;
    company_name?: string;
    address?: BillingAddress;
    tax_id: ReturnType<typeof taxIdPayload>;
  }) => Promise<unknown>;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const [form, setForm] = useState(() => initialForm(props.account));
  const [touched, setTouched] = useState(false);
  const [error, setError] = useState<string>();
  const [serverTaxError, setServerTaxError] = useState(false);
  const [busy, setBusy] = useState(false);

  const emailProblem = !form.email.trim()
    ? t("billing.email_required")
    : isValidEmail(form.email)
      ? undefined
      : t("billing.invalid_email");
  const taxProblem =
    serverTaxError || validateTaxId(taxIdPayload(form.taxType, form.taxValue)) !== undefined
      ? t("billing.invalid_tax_id")
      : undefined;
  const example = taxIdRowOf(form.taxType)?.description;

  const close = () => {
    if (busy) return;
    setForm(initialForm(props.account));
    setTouched(false);
    setError(undefined);
    setServerTaxError(false);
    props.onClose();
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (emailProblem || (taxProblem && !serverTaxError)) return;
    setBusy(true);
    setError(undefined);
    setServerTaxError(false);
    try {
      const address = Object.fromEntries(ADDRESS_FIELDS.map((key) => [key, form.address[key].trim()]));
      await props.onSubmit({
        email: form.email.trim(),
        company_name: form.company_name.trim(),
        address,
        tax_id: taxIdPayload(form.taxType, form.taxValue),
      });
      setTouched(false);
      props.onClose();
    } catch (caught) {
      if (isInvalidTaxIdError(caught)) setServerTaxError(true);
      else setError(billingErrorText(caught));
    } finally {
      setBusy(false);
    }
  };

  const addressField = (key: (typeof ADDRESS_FIELDS)[number], span = false) => (
    <TextField
      key={key}
      label={t(`billing.${key}`)}
      value={form.address[key]}
      onChange={(event) => {
        // The country is its two-letter code (ISO 3166-1), as the billing service keeps it.
        const value = key === "country" ? event.target.value.toUpperCase().slice(0, 2) : event.target.value;
        setForm((current) => ({ ...current, address: { ...current.address, [key]: value } }));
      }}
      sx={span ? { gridColumn: "1 / -1" } : undefined}
    />
  );

  return (
    <Dialog open={props.open} onClose={close} maxWidth="sm" fullWidth aria-labelledby="company-dialog-title">
      <Box component="form" noValidate onSubmit={submit}>
        <DialogTitle id="company-dialog-title">{t("billing.company_dialog_title")}</DialogTitle>
        <DialogContent>
          {error ? (
            <Alert severity="error" sx={{ mb: 2 }}>
              {error}
            </Alert>
          ) : null}
          <Box sx={{ display: "grid", gap: 2, gridTemplateColumns: "1fr 1fr", pt: 1 }}>
            <TextField
              required
              type="email"
              label={t("billing.email")}
              value={form.email}
              onChange={(event) => setForm((current) => ({ ...current, email: event.target.value }))}
              error={touched && Boolean(emailProblem)}
              helperText={touched ? emailProblem : undefined}
              autoFocus
            />
            <TextField
              label={t("billing.company_name")}
              value={form.company_name}
              onChange={(event) => setForm((current) => ({ ...current, company_name: event.target.value }))}
            />
            {addressField("address1", true)}
            {addressField("address2", true)}
            {addressField("city")}
            {addressField("state")}
            {addressField("zip")}
            {addressField("country")}
            {addressField("phone", true)}
            <Typography variant="subtitle2" component="h3" sx={{ gridColumn: "1 / -1", mt: 1 }}>
              {t("billing.tax_id")}
            </Typography>
            <TextField
              select
              label={t("billing.tax_id_type")}
              value={form.taxType}
              onChange={(event) => {
                setServerTaxError(false);
                setForm((current) => ({ ...current, taxType: event.target.value }));
              }}
            >
              <MenuItem value="">{t("billing.tax_id_none")}</MenuItem>
              {TAX_ID_TYPES.map((entry) => (
                <MenuItem key={taxIdChoiceKey(entry)} value={taxIdChoiceKey(entry)}>
                  {entry.label}
                </MenuItem>
              ))}
            </TextField>
            <TextField
              label={t("billing.tax_id_value")}
              value={form.taxValue}
              onChange={(event) => {
                setServerTaxError(false);
                setForm((current) => ({ ...current, taxValue: event.target.value }));
              }}
              error={(touched || serverTaxError) && Boolean(taxProblem)}
              helperText={
                (touched || serverTaxError) && taxProblem
                  ? taxProblem
                  : example
                    ? t("billing.tax_id_example", { example })
                    : undefined
              }
            />
          </Box>
        </DialogContent>
        <DialogActions sx={dialogActionsSx}>
          <Button onClick={close} disabled={busy}>
            {t("billing.cancel")}
          </Button>
          <Button type="submit" variant="contained" loading={busy}>
            {t("billing.save")}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}
