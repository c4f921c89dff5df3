import Alert from "@mui/material/Alert";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogContentText from "@mui/material/DialogContentText";
import DialogTitle from "@mui/material/DialogTitle";
import Stack from "@mui/material/Stack";
import { useQuery } from "@tanstack/react-query";
import { createContext, type FormEvent, type ReactNode, useCallback, useContext, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { PasswordField } from "../../components/form-fields.tsx";
import { errorText, REAUTH_CANCELLED_CODE } from "../../lib/errors.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { isAuthExpired } from "./api.ts";
import { setReturnUrl } from "./navigation.ts";
import { sessionQuery } from "./session.ts";
import { type SocialProvider, socialProvidersQuery, startSocialSignIn } from "./social.ts";

/**
 * Re-authentication (spec 1 §4, §7): a sensitive action answered "auth expired" (login older
 * than 20 minutes) asks for the password, trades it for a fresh token at
 * `POST /user/v1/refresh-token`, keeps that token and runs the action again. An account without
 * a password (created through a social provider or single sign-on) signs in again there instead:
 * a social or SSO sign-in counts as re-authentication; the browser comes back to this page and
 * the person repeats the action.
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
  const { sdk, config } = useServices();
  const api = useAccountApi();
  const [open, setOpen] = useState(false);
  const session = useQuery({ ...sessionQuery(sdk), enabled: open, throwOnError: false });
  const user = session.data?.kind === "signed-in" ? session.data.user : undefined;
  const passwordless = user?.has_password_set === false;
  const providers = useQuery({
    ...socialProvidersQuery(config.apiUrl),
    enabled: open && passwordless,
    throwOnError: false,
  });
  // The providers linked to this account (all configured ones when that cannot be read); single
  // sign-on when none is linked (an account made by an identity provider).
  const linked = useQuery({
    queryKey: ["reauth", "social-accounts", user?.id],
    enabled: open && passwordless && user !== undefined,
    queryFn: async () =>
      (
        (await sdk.pine.get({
          resource: "social_service_account" as never,
          options: { $select: ["provider"], $filter: { belongs_to__user: user?.id ?? 0 } } as never,
        })) as unknown as Array<{ provider: string }>
      ).map((row) => row.provider),
    meta: { handlesErrors: true },
    retry: false,
  });
  const configured = providers.data ?? [];
  const mine = configured.filter((p) => linked.data?.includes(p.slug));
  const offered: SocialProvider[] = linked.isSuccess ? mine : linked.isError ? configured : [];
  const offerSso = linked.isSuccess && mine.length === 0;
  const here = () => `${window.location.pathname}${window.location.search}${window.location.hash}`;
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
      <Dialog open={open && passwordless} onClose={cancel} maxWidth="xs" fullWidth>
        <DialogTitle>{t("reauth.social_title")}</DialogTitle>
        <DialogContent>
          <DialogContentText sx={{ mb: 2 }}>
            {offered.length > 0
              ? t("reauth.social_text", { provider: offered.map((p) => p.name).join(" / ") })
              : offerSso
                ? t("reauth.sso_text")
                : t("app.loading")}
          </DialogContentText>
          <Stack spacing={1.5}>
            {offered.map((provider) => (
              <Button
                key={provider.slug}
                variant="contained"
                fullWidth
                onClick={() => startSocialSignIn(config.apiUrl, provider.slug, here())}
              >
                {t("reauth.social_button", { provider: provider.name })}
              </Button>
            ))}
            {offerSso ? (
              <Button
                variant="contained"
                fullWidth
                onClick={() => {
                  // The single sign-on's return page comes back here (saml-pages.tsx).
                  setReturnUrl(here());
                  window.location.assign("/saml");
                }}
              >
                {t("reauth.sso_button")}
              </Button>
            ) : null}
          </Stack>
        </DialogContent>
        <DialogActions>
          <Button onClick={cancel}>{t("reauth.cancel")}</Button>
        </DialogActions>
      </Dialog>
      <Dialog open={open && !passwordless && !session.isPending} onClose={cancel} maxWidth="xs" fullWidth>
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
