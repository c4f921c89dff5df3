import { emailSchema, newPasswordSchema, TWO_FACTOR_CODE_LENGTH, twoFactorCodeSchema } from "@flotilla/domain";
import MarkEmailReadOutlined from "@mui/icons-material/MarkEmailReadOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation } from "@tanstack/react-query";
import { getRouteApi, useRouter } from "@tanstack/react-router";
import { type FormEvent, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { AuthFrame } from "../../components/auth-frame.tsx";
import { PasswordField } from "../../components/form-fields.tsx";
import { TextLink } from "../../components/links.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { type FieldErrors, fieldErrors, hasErrors } from "../../lib/validation.ts";
import { AccountApiError } from "./api.ts";
import { useCaptcha } from "./captcha.tsx";
import { resetCodeFrom } from "./navigation.ts";
import { rateLimitText, resetErrorText } from "./reset-messages.ts";

const resetRoute = getRouteApi("/user/reset-password/$loginCode");

function BackToLogin() {
  const { t } = useTranslation();
  return (
    <TextLink to="/login" search={{}}>
      {t("password_reset.back_to_login")}
    </TextLink>
  );
}

/** `/password-reset`: the email, a captcha, then `POST /password-reset-path/{email}` (spec 1 §2.3, §7). */
export function PasswordResetPage() {
  const { t } = useTranslation();
  const api = useAccountApi();
  const router = useRouter();
  const captcha = useCaptcha();
  const [email, setEmail] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const request = useMutation({
    mutationFn: () => api.requestPasswordReset(email.trim(), captcha.response),
    meta: { reportErrors: false },
    onError: () => captcha.reset(),
    onSuccess: () => router.navigate({ to: "/password-reset/success" }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: FieldErrors = {
      email: fieldErrors(emailSchema, email)[""],
      captcha: captcha.ready ? undefined : t("signup.captcha_required"),
    };
    setErrors(found);
    if (!hasErrors(found)) request.mutate();
  };
  const failure = request.error;
  return (
    <AuthFrame
      pageTitle={t("password_reset.page_title")}
      title={t("password_reset.title")}
      subtitle={t("password_reset.text")}
      footer={<BackToLogin />}
    >
      <Box component="form" noValidate onSubmit={submit}>
        <Stack spacing={2}>
          {failure ? (
            <Alert severity="error" role="alert">
              {failure instanceof AccountApiError && failure.statusCode === 429
                ? rateLimitText(failure)
                : errorText(failure)}
            </Alert>
          ) : null}
          <TextField
            label={t("password_reset.email")}
            type="email"
            name="email"
            autoComplete="email"
            autoFocus
            value={email}
            onChange={(event) => setEmail(event.target.value)}
            error={Boolean(errors.email)}
            helperText={errors.email}
          />
          {captcha.element}
          {errors.captcha && !captcha.ready ? <Alert severity="warning">{errors.captcha}</Alert> : null}
          <Button
            type="submit"
            variant="contained"
            size="large"
            fullWidth
            loading={request.isPending || captcha.loading}
          >
            {t("password_reset.submit")}
          </Button>
        </Stack>
      </Box>
    </AuthFrame>
  );
}

/** `/password-reset/success`. */
export function PasswordResetSuccessPage() {
  const { t } = useTranslation();
  return (
    <AuthFrame
      pageTitle={t("password_reset.success_title")}
      title={t("password_reset.success_title")}
      footer={<BackToLogin />}
    >
      <Stack spacing={2} sx={{ alignItems: "flex-start" }}>
        <MarkEmailReadOutlined color="primary" sx={{ fontSize: 40 }} />
        <Typography color="text.secondary">{t("password_reset.success_text")}</Typography>
      </Stack>
    </AuthFrame>
  );
}

/**
 * `/user/reset-password/{loginCode}` (spec 1 §2.1, §2.3, §7): new password and confirmation;
 * "code" means the code is in the URL hash. A 2FA account answers errorCode 1 first: the
 * two-factor field appears and the form is sent again with it.
 */
export function ResetPasswordPage() {
  const { t } = useTranslation();
  const api = useAccountApi();
  const router = useRouter();
  const { loginCode } = resetRoute.useParams();
  const code = useMemo(() => resetCodeFrom(loginCode, globalThis.location?.hash ?? ""), [loginCode]);
  const [values, setValues] = useState({ password: "", confirmation: "", twoFactorCode: "" });
  const [needsTwoFactor, setNeedsTwoFactor] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({});
  const reset = useMutation({
    mutationFn: () =>
      api.resetPassword({
        code: code ?? "",
        password: values.password,
        ...(needsTwoFactor ? { twoFactorCode: values.twoFactorCode.trim() } : {}),
      }),
    meta: { reportErrors: false },
    onError: (error) => {
      if (error instanceof AccountApiError && error.errorCode === 1) setNeedsTwoFactor(true);
    },
    onSuccess: async () => {
      showToast("success", t("password_reset.done"));
      await router.navigate({ to: "/login", search: {} });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = fieldErrors(newPasswordSchema, values);
    if (needsTwoFactor) found.twoFactorCode = fieldErrors(twoFactorCodeSchema, values.twoFactorCode)[""];
    setErrors(found);
    if (!hasErrors(found)) reset.mutate();
  };
  const set = (key: keyof typeof values) => (value: string) => setValues((current) => ({ ...current, [key]: value }));
  const failure = reset.error;
  let failureText: string | undefined;
  if (failure instanceof AccountApiError && failure.statusCode === 429) failureText = rateLimitText(failure);
  else if (failure instanceof AccountApiError) failureText = resetErrorText(failure.errorCode) ?? errorText(failure);
  else if (failure) failureText = errorText(failure);

  return (
    <AuthFrame
      pageTitle={t("password_reset.page_title")}
      title={t("password_reset.new_title")}
      footer={<BackToLogin />}
    >
      {code ? (
        <Box component="form" noValidate onSubmit={submit}>
          <Stack spacing={2}>
            {failureText ? (
              <Alert
                severity={failure instanceof AccountApiError && failure.errorCode === 1 ? "info" : "error"}
                role="alert"
              >
                {failureText}
              </Alert>
            ) : null}
            <PasswordField
              label={t("password_reset.new_password")}
              name="password"
              autoComplete="new-password"
              autoFocus
              value={values.password}
              onChange={(event) => set("password")(event.target.value)}
              error={Boolean(errors.password)}
              helperText={errors.password ?? t("signup.password_help")}
            />
            <PasswordField
              label={t("password_reset.confirmation")}
              name="confirmation"
              autoComplete="new-password"
              value={values.confirmation}
              onChange={(event) => set("confirmation")(event.target.value)}
              error={Boolean(errors.confirmation)}
              helperText={errors.confirmation}
            />
            {needsTwoFactor ? (
              <TextField
                label={t("password_reset.two_factor_code")}
                autoFocus
                name="twoFactorCode"
                autoComplete="one-time-code"
                value={values.twoFactorCode}
                onChange={(event) =>
                  set("twoFactorCode")(event.target.value.replace(/\D/g, "").slice(0, TWO_FACTOR_CODE_LENGTH))
                }
                error={Boolean(errors.twoFactorCode)}
                helperText={errors.twoFactorCode ?? t("password_reset.two_factor_help")}
                slotProps={{ htmlInput: { inputMode: "numeric" } }}
              />
            ) : null}
            <Button type="submit" variant="contained" size="large" fullWidth loading={reset.isPending}>
              {t("password_reset.save")}
            </Button>
          </Stack>
        </Box>
      ) : (
        <Alert severity="error">{t("password_reset.missing_code")}</Alert>
      )}
    </AuthFrame>
  );
}
