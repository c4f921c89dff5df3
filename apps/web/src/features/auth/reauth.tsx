import Alert from "@mui/material/Alert";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogContentText from "@mui/material/DialogContentText";
import DialogTitle from "@mui/material/DialogTitle";
import { createContext, type FormEvent, type ReactNode, useCallback, useContext, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { PasswordField } from "../../components/form-fields.tsx";
import { errorText, REAUTH_CANCELLED_CODE } from "../../lib/errors.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { isAuthExpired } from "./api.ts";

/**
 * Re-authentication (spec 1 §4, §7): a sensitive action answered "auth expired" (login older
 * than 20 minutes) asks for the password, trades it for a fresh token at
 * `POST /user/v1/refresh-token`, keeps that token and runs the action again.
 */
type WithReauth = <T>(action: () => Promise<T>) => Promise<T>;

const ReauthContext = createContext<WithReauth | null>(null);

export class ReauthCancelledError extends Error {
  readonly code = REAUTH_CANCELLED_CODE;
  constructor() {
    super("Re-authentication cancelled");
  }
}

export function ReauthProvider({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  const { sdk } = useServices();
  const api = useAccountApi();
  const [open, setOpen] = useState(false);
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const pending = useRef<{ resolve: () => void; reject: (error: Error) => void } | null>(null);

  const ask = useCallback(
    () =>
      new Promise<void>((resolve, reject) => {
        pending.current = { resolve, reject };
        setPassword("");
        setError(undefined);
        setOpen(true);
      }),
    [],
  );

  const withReauth = useCallback<WithReauth>(
    async (action) => {
      try {
        return await action();
      } catch (failure) {
        if (!isAuthExpired(failure)) throw failure;
        await ask();
        return action();
      }
    },
    [ask],
  );

  const cancel = () => {
    setOpen(false);
    pending.current?.reject(new ReauthCancelledError());
    pending.current = null;
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!password) return;
    setBusy(true);
    try {
      const token = await api.refreshToken(password);
      await sdk.auth.loginWithToken(token);
      setOpen(false);
      pending.current?.resolve();
      pending.current = null;
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <ReauthContext value={withReauth}>
      {children}
      <Dialog open={open} onClose={cancel} maxWidth="xs" fullWidth>
        <form onSubmit={submit} noValidate>
          <DialogTitle>{t("reauth.title")}</DialogTitle>
          <DialogContent>
            <DialogContentText sx={{ mb: 2 }}>{t("reauth.text")}</DialogContentText>
            {error ? (
              <Alert severity="error" sx={{ mb: 2 }}>
                {error}
              </Alert>
            ) : null}
            <PasswordField
              label={t("reauth.password")}
              autoComplete="current-password"
              autoFocus
              fullWidth
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          </DialogContent>
          <DialogActions>
            <Button onClick={cancel}>{t("reauth.cancel")}</Button>
            <Button type="submit" variant="contained" loading={busy} disabled={!password}>
              {t("reauth.confirm")}
            </Button>
          </DialogActions>
        </form>
      </Dialog>
    </ReauthContext>
  );
}

export function useReauth(): WithReauth {
  const withReauth = useContext(ReauthContext);
  return withReauth ?? ((action) => action());
}
