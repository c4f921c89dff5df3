import { TWO_FACTOR_CODE_LENGTH, twoFactorCodeSchema } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Link from "@mui/material/Link";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import { useMutation } from "@tanstack/react-query";
import { getRouteApi, useRouter } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { AuthFrame } from "../../components/auth-frame.tsx";
import { errorText } from "../../lib/errors.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { fieldErrors } from "../../lib/validation.ts";
import { afterLoginTarget, logOut, startSession, storedClaims } from "./session.ts";

const twoFactorRoute = getRouteApi("/login/two-factor");

/**
 * The second factor (spec 1 §2.3): the authenticator code submits by itself at 6 characters;
 * a toggle switches to a recovery code (`POST /auth/v1/2fa-recover/verify`).
 */
export function TwoFactorPage() {
  const { t } = useTranslation();
  const { sdk, queryClient, config } = useServices();
  const api = useAccountApi();
  const router = useRouter();
  const search = twoFactorRoute.useSearch();
  const [mode, setMode] = useState<"token" | "recovery">("token");
  const [code, setCode] = useState("");
  const [fieldError, setFieldError] = useState<string>();

  const verify = useMutation({
    mutationFn: async (input: { mode: "token" | "recovery"; code: string }) => {
      if (input.mode === "token") await sdk.auth.twoFactor.challenge(input.code);
      else await startSession(queryClient, sdk, await api.verifyRecoveryCode(input.code));
      return storedClaims(sdk);
    },
    meta: { reportErrors: false },
    onSuccess: (claims) => {
      queryClient.clear();
      router.history.push(afterLoginTarget(search.redirect, claims?.id));
    },
  });

  const send = (value: string) => {
    if (mode === "token") {
      const error = fieldErrors(twoFactorCodeSchema, value)[""];
      setFieldError(error);
      if (error) return;
    } else if (!value.trim()) {
      setFieldError(t("two_factor.recovery_required"));
      return;
    }
    verify.mutate({ mode, code: value.trim() });
  };

  const onChange = (value: string) => {
    const next = mode === "token" ? value.replace(/\D/g, "").slice(0, TWO_FACTOR_CODE_LENGTH) : value;
    setCode(next);
    setFieldError(undefined);
    // Submits by itself once the 6th digit is typed (spec 1 §2.3).
    if (mode === "token" && next.length === TWO_FACTOR_CODE_LENGTH && !verify.isPending) send(next);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    send(code);
  };

  const switchMode = () => {
    setMode(mode === "token" ? "recovery" : "token");
    setCode("");
    setFieldError(undefined);
    verify.reset();
  };

  const cancel = async () => {
    await logOut(queryClient, sdk, config.apiUrl);
    await router.navigate({ to: "/login", search: {} });
  };

  return (
    <AuthFrame
      pageTitle={t("two_factor.page_title")}
      title={t("two_factor.title")}
      subtitle={mode === "token" ? t("two_factor.text") : t("two_factor.recovery_text")}
      footer={
        <Link component="button" type="button" variant="body2" onClick={() => void cancel()}>
          {t("two_factor.cancel")}
        </Link>
      }
    >
      <Box component="form" noValidate onSubmit={submit}>
        <Stack spacing={2}>
          {verify.isError ? (
            <Alert severity="error" role="alert">
              {errorText(verify.error)}
            </Alert>
          ) : null}
          <TextField
            key={mode}
            label={mode === "token" ? t("two_factor.code") : t("two_factor.recovery_code")}
            name={mode === "token" ? "code" : "recovery-code"}
            autoComplete="one-time-code"
            autoFocus
            value={code}
            onChange={(event) => onChange(event.target.value)}
            error={Boolean(fieldError)}
            helperText={fieldError}
            slotProps={{
              htmlInput:
                mode === "token"
                  ? {
                      inputMode: "numeric",
                      maxLength: TWO_FACTOR_CODE_LENGTH,
                      style: {
                        letterSpacing: "0.4em",
                        fontSize: "1.25rem",
                        fontVariantNumeric: "tabular-nums",
                        textAlign: "center",
                      },
                    }
                  : { style: { fontFamily: "monospace" } },
            }}
          />
          <Button type="submit" variant="contained" size="large" fullWidth loading={verify.isPending}>
            {t("two_factor.submit")}
          </Button>
          <Button variant="text" onClick={switchMode}>
            {mode === "token" ? t("two_factor.use_recovery") : t("two_factor.use_token")}
          </Button>
        </Stack>
      </Box>
    </AuthFrame>
  );
}
