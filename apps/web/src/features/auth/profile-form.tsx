import { ACCOUNT_TYPES, type AccountType, profileSchema } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import FormControl from "@mui/material/FormControl";
import FormControlLabel from "@mui/material/FormControlLabel";
import FormHelperText from "@mui/material/FormHelperText";
import FormLabel from "@mui/material/FormLabel";
import Radio from "@mui/material/Radio";
import RadioGroup from "@mui/material/RadioGroup";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { errorText } from "../../lib/errors.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { type FieldErrors, fieldErrors, hasErrors } from "../../lib/validation.ts";
import { useReauth } from "./reauth.tsx";
import { type SessionUser, sessionKeys } from "./session.ts";

/**
 * The profile (spec 1 §2.3, §2.4, §5): first_name, last_name, company and account_type, all
 * required, saved with `PATCH /user/profile`. On a failure the typed values stay.
 */
export function ProfileForm(props: {
  user: SessionUser;
  submitLabel: string;
  onSaved: () => void;
  /** The signup page shows larger, full-width controls. */
  large?: boolean;
}) {
  const { t } = useTranslation();
  const api = useAccountApi();
  const withReauth = useReauth();
  const queryClient = useQueryClient();
  const [values, setValues] = useState({
    first_name: props.user.first_name ?? "",
    last_name: props.user.last_name ?? "",
    company: props.user.company ?? "",
    account_type: (props.user.account_type ?? "") as AccountType | "",
  });
  const [errors, setErrors] = useState<FieldErrors>({});
  const save = useMutation({
    mutationFn: () =>
      withReauth(() => api.updateProfile({ ...values, account_type: values.account_type as AccountType })),
    meta: { reportErrors: false },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: sessionKeys.state });
      props.onSaved();
    },
  });
  const set = (key: keyof typeof values) => (value: string) => {
    setValues((current) => ({ ...current, [key]: value }));
    setErrors((current) => ({ ...current, [key]: undefined }));
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = fieldErrors(profileSchema, values);
    setErrors(found);
    if (!hasErrors(found)) save.mutate();
  };
  const size = props.large ? "medium" : "small";
  return (
    <Box component="form" noValidate onSubmit={submit}>
      <Stack spacing={2}>
        {save.isError ? (
          <Alert severity="error" role="alert">
            {t("errors.failed_to_save_profile")} {errorText(save.error)}
          </Alert>
        ) : null}
        <Stack direction={{ xs: "column", sm: "row" }} spacing={2}>
          <TextField
            label={t("profile.first_name")}
            name="first_name"
            autoComplete="given-name"
            size={size}
            fullWidth
            value={values.first_name}
            onChange={(event) => set("first_name")(event.target.value)}
            error={Boolean(errors.first_name)}
            helperText={errors.first_name}
          />
          <TextField
            label={t("profile.last_name")}
            name="last_name"
            autoComplete="family-name"
            size={size}
            fullWidth
            value={values.last_name}
            onChange={(event) => set("last_name")(event.target.value)}
            error={Boolean(errors.last_name)}
            helperText={errors.last_name}
          />
        </Stack>
        <TextField
          label={t("profile.company")}
          name="company"
          autoComplete="organization"
          size={size}
          fullWidth
          value={values.company}
          onChange={(event) => set("company")(event.target.value)}
          error={Boolean(errors.company)}
          helperText={errors.company}
        />
        <FormControl error={Boolean(errors.account_type)}>
          <FormLabel id="account-type-label" sx={{ mb: 1, fontSize: "0.875rem" }}>
            {t("profile.account_type")}
          </FormLabel>
          <RadioGroup
            aria-labelledby="account-type-label"
            row
            value={values.account_type}
            onChange={(event) => set("account_type")(event.target.value)}
            sx={{ gap: 1.5 }}
          >
            {ACCOUNT_TYPES.map((type) => (
              <FormControlLabel
                key={type}
                value={type}
                control={<Radio size="small" />}
                sx={{
                  m: 0,
                  flex: 1,
                  minWidth: 180,
                  border: 1,
                  borderColor: values.account_type === type ? "primary.main" : "divider",
                  borderRadius: 1,
                  pr: 1.5,
                  py: 0.5,
                  alignItems: "flex-start",
                  "& .MuiRadio-root": { mt: 0.25 },
                }}
                label={
                  <Box sx={{ py: 0.75 }}>
                    <Typography variant="body2" sx={{ fontWeight: 600 }}>
                      {t(`profile.${type}`)}
                    </Typography>
                    <Typography variant="caption" color="text.secondary">
                      {t(`profile.${type}_help`)}
                    </Typography>
                  </Box>
                }
              />
            ))}
          </RadioGroup>
          {errors.account_type ? <FormHelperText>{errors.account_type}</FormHelperText> : null}
        </FormControl>
        <Box>
          <Button
            type="submit"
            variant="contained"
            size={props.large ? "large" : "medium"}
            fullWidth={props.large}
            loading={save.isPending}
          >
            {props.submitLabel}
          </Button>
        </Box>
      </Stack>
    </Box>
  );
}
