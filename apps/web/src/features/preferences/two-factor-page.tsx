import { TWO_FACTOR_CODE_LENGTH, twoFactorCodeSchema } from "@flotilla/domain";
import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import DownloadOutlined from "@mui/icons-material/DownloadOutlined";
import GppGoodOutlined from "@mui/icons-material/GppGoodOutlined";
import ShieldOutlined from "@mui/icons-material/ShieldOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { QRCodeSVG } from "qrcode.react";
import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { PasswordField } from "../../components/form-fields.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { fieldErrors } from "../../lib/validation.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { useReauth } from "../auth/reauth.tsx";
import { Section } from "./section.tsx";
import { useSessionUser } from "./use-user.ts";

const statusKey = ["two-factor-status"] as const;

/** The otpauth URI an authenticator app scans (issuer Flotilla, label the email). */
export function otpauthUri(secret: string, account: string): string {
  return `otpauth://totp/Flotilla:${encodeURIComponent(account)}?secret=${encodeURIComponent(secret)}&issuer=Flotilla`;
}

/** The pairing code in groups of four, easier to type. */
export const groupSecret = (secret: string) => secret.replace(/\s+/g, "").replace(/(.{4})(?=.)/g, "$1 ");

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const { t } = useTranslation();
  const text = `${codes.join("\n")}\n`;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      showToast("success", t("preferences.twofa.copied"));
    } catch {
      // Clipboard refused; the codes stay on screen.
    }
  };
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = "flotilla-recovery-codes.txt";
    link.click();
    URL.revokeObjectURL(url);
  };
  return (
    <Box>
      <Typography variant="subtitle1" component="h3" sx={{ fontWeight: 600 }}>
        {t("preferences.twofa.recovery_title")}
      </Typography>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
        {t("preferences.twofa.recovery_text")}
      </Typography>
      <Box
        component="ol"
        aria-label={t("preferences.twofa.recovery_title")}
        sx={{
          display: "grid",
          gridTemplateColumns: { xs: "1fr 1fr", sm: "repeat(5, 1fr)" },
          gap: 1,
          listStyle: "none",
          p: 2,
          m: 0,
          mb: 2,
          bgcolor: "action.hover",
          borderRadius: 1,
          fontFamily: MONO_FONT_STACK,
          fontSize: "0.875rem",
        }}
      >
        {codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </Box>
      <Box sx={{ display: "flex", gap: 1, flexWrap: "wrap" }}>
        <Button variant="outlined" startIcon={<ContentCopyOutlined />} onClick={() => void copy()}>
          {t("preferences.twofa.copy")}
        </Button>
        <Button variant="outlined" startIcon={<DownloadOutlined />} onClick={download}>
          {t("preferences.twofa.download")}
        </Button>
        <Box sx={{ flex: 1 }} />
        <Button variant="contained" onClick={onDone}>
          {t("preferences.twofa.done")}
        </Button>
      </Box>
    </Box>
  );
}

function EnableFlow({
  email,
  onEnabled,
  onCancel,
}: {
  email: string;
  onEnabled: (codes: string[]) => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  const { sdk } = useServices();
  const api = useAccountApi();
  const withReauth = useReauth();
  const setup = useQuery({
    queryKey: ["two-factor-setup"],
    queryFn: () => withReauth(() => sdk.auth.twoFactor.getSetupKey()),
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 0,
  });
  const [code, setCode] = useState("");
  const [codeError, setCodeError] = useState<string>();
  const enable = useMutation({
    mutationFn: async () => {
      await withReauth(() => sdk.auth.twoFactor.enable(code));
      return withReauth(() => api.createRecoveryCodes());
    },
    meta: { reportErrors: false },
    onSuccess: (codes) => onEnabled(codes),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const error = fieldErrors(twoFactorCodeSchema, code)[""];
    setCodeError(error);
    if (!error) enable.mutate();
  };
  const secret = typeof setup.data === "string" ? setup.data.trim() : "";
  return (
    <Box component="form" noValidate onSubmit={submit}>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
        {t("preferences.twofa.scan")}
      </Typography>
      {setup.isError ? <Alert severity="error">{errorText(setup.error)}</Alert> : null}
      {secret ? (
        <Stack direction={{ xs: "column", sm: "row" }} spacing={3} sx={{ alignItems: { sm: "center" }, mb: 3 }}>
          <Box
            sx={{
              p: 1.5,
              bgcolor: "#fff",
              border: 1,
              borderColor: "divider",
              borderRadius: 1,
              lineHeight: 0,
              alignSelf: "flex-start",
            }}
          >
            <QRCodeSVG
              value={otpauthUri(secret, email)}
              size={168}
              role="img"
              aria-label={t("preferences.twofa.scan")}
            />
          </Box>
          <Box>
            <Typography variant="caption" color="text.secondary">
              {t("preferences.twofa.pairing_code")}
            </Typography>
            <Typography
              data-testid="pairing-code"
              aria-label={t("preferences.twofa.pairing_code")}
              sx={{ fontFamily: MONO_FONT_STACK, fontSize: "1rem", letterSpacing: "0.05em", wordBreak: "break-all" }}
            >
              {groupSecret(secret)}
            </Typography>
          </Box>
        </Stack>
      ) : null}
      {enable.isError ? (
        <Alert severity="error" sx={{ mb: 2 }}>
          {errorText(enable.error)}
        </Alert>
      ) : null}
      <Box sx={{ display: "flex", gap: 1, alignItems: "flex-start", flexWrap: "wrap" }}>
        <TextField
          label={t("preferences.twofa.code")}
          size="small"
          autoComplete="one-time-code"
          value={code}
          onChange={(event) => setCode(event.target.value.replace(/\D/g, "").slice(0, TWO_FACTOR_CODE_LENGTH))}
          error={Boolean(codeError)}
          helperText={codeError}
          slotProps={{ htmlInput: { inputMode: "numeric", style: { letterSpacing: "0.3em" } } }}
          sx={{ width: 200 }}
        />
        <Button type="submit" variant="contained" loading={enable.isPending} disabled={!secret}>
          {t("preferences.twofa.verify")}
        </Button>
        <Button onClick={onCancel}>{t("preferences.twofa.cancel")}</Button>
      </Box>
    </Box>
  );
}

/** `/preferences/2fa` (spec 1 §2.4, §4): enable (QR, pairing code, recovery codes), regenerate, disable. */
export function TwoFactorPreferencesPage() {
  const { t } = useTranslation();
  const { sdk } = useServices();
  const api = useAccountApi();
  const withReauth = useReauth();
  const user = useSessionUser();
  const queryClient = useQueryClient();
  const status = useQuery({ queryKey: statusKey, queryFn: () => api.twoFactorStatus(), meta: { handlesErrors: true } });
  const [mode, setMode] = useState<"idle" | "enabling" | "codes">("idle");
  const [codes, setCodes] = useState<string[]>([]);
  const [confirm, setConfirm] = useState<"regenerate" | "disable">();
  const [password, setPassword] = useState("");
  const refresh = () => queryClient.invalidateQueries({ queryKey: statusKey });

  const regenerate = useMutation({
    mutationFn: () => withReauth(() => api.createRecoveryCodes()),
    onSuccess: async (fresh) => {
      setConfirm(undefined);
      setCodes(fresh);
      setMode("codes");
      await refresh();
    },
  });
  const disable = useMutation({
    mutationFn: () => withReauth(() => sdk.auth.twoFactor.disable(password)),
    meta: { reportErrors: false },
    onSuccess: async () => {
      setConfirm(undefined);
      setPassword("");
      showToast("success", t("preferences.twofa.now_disabled"));
      await refresh();
    },
  });

  const enabled = status.data?.enabled === true;
  return (
    <Section title={t("preferences.twofa.title")} text={t("preferences.twofa.text")}>
      {status.data ? (
        <Stack spacing={3}>
          <Box
            sx={{
              display: "flex",
              alignItems: "center",
              gap: 1.5,
              p: 2,
              borderRadius: 1,
              border: 1,
              borderColor: enabled ? "success.light" : "divider",
            }}
          >
            {enabled ? <GppGoodOutlined color="success" /> : <ShieldOutlined color="disabled" />}
            <Box sx={{ flex: 1 }}>
              <Typography sx={{ fontWeight: 600 }}>
                {enabled ? t("preferences.twofa.enabled") : t("preferences.twofa.disabled")}
              </Typography>
              {enabled ? (
                <Typography variant="body2" color="text.secondary">
                  {t("preferences.twofa.recovery_left", { count: status.data.recoveryCodesLeft })}
                </Typography>
              ) : null}
            </Box>
            {!enabled && mode === "idle" ? (
              <Button variant="contained" onClick={() => setMode("enabling")}>
                {t("preferences.twofa.enable")}
              </Button>
            ) : null}
          </Box>
          {mode === "enabling" && !enabled ? (
            <EnableFlow
              email={user?.email ?? user?.username ?? ""}
              onCancel={() => setMode("idle")}
              onEnabled={async (fresh) => {
                showToast("success", t("preferences.twofa.now_enabled"));
                setCodes(fresh);
                setMode("codes");
                await refresh();
              }}
            />
          ) : null}
          {mode === "codes" ? <RecoveryCodes codes={codes} onDone={() => setMode("idle")} /> : null}
          {enabled && mode === "idle" ? (
            <Box sx={{ display: "flex", gap: 1, flexWrap: "wrap" }}>
              <Button variant="outlined" onClick={() => setConfirm("regenerate")}>
                {t("preferences.twofa.regenerate")}
              </Button>
              <Button variant="outlined" color="error" onClick={() => setConfirm("disable")}>
                {t("preferences.twofa.disable")}
              </Button>
            </Box>
          ) : null}
        </Stack>
      ) : null}
      {status.isError ? <Alert severity="error">{errorText(status.error)}</Alert> : null}
      <ConfirmDialog
        open={confirm === "regenerate"}
        title={t("preferences.twofa.regenerate_title")}
        text={t("preferences.twofa.regenerate_text")}
        confirmLabel={t("preferences.twofa.regenerate")}
        busy={regenerate.isPending}
        onConfirm={() => regenerate.mutate()}
        onClose={() => setConfirm(undefined)}
      />
      <ConfirmDialog
        open={confirm === "disable"}
        danger
        title={t("preferences.twofa.disable_title")}
        text={t("preferences.twofa.disable_text")}
        confirmLabel={t("preferences.twofa.disable")}
        busy={disable.isPending}
        confirmDisabled={!password}
        error={disable.isError ? errorText(disable.error) : undefined}
        onConfirm={() => disable.mutate()}
        onClose={() => {
          setConfirm(undefined);
          setPassword("");
          disable.reset();
        }}
      >
        <PasswordField
          label={t("reauth.password")}
          autoComplete="current-password"
          autoFocus
          fullWidth
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
      </ConfirmDialog>
    </Section>
  );
}
