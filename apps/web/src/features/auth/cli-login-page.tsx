import { canPostToCliCallback, isLoopbackCallback } from "@flotilla/domain";
import TerminalOutlined from "@mui/icons-material/TerminalOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Stack from "@mui/material/Stack";
import Typography from "@mui/material/Typography";
import { useQuery } from "@tanstack/react-query";
import { getRouteApi } from "@tanstack/react-router";
import { useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { FocusCard } from "../../components/auth-frame.tsx";
import { sessionQuery } from "./session.ts";

const cliRoute = getRouteApi("/signed-in/login/cli/$");

/** The callback of `/login/cli/{encoded callback URL}` (or `?callback=`). */
export function cliCallbackOf(splat: string | undefined, search: { callback?: string }): string | undefined {
  const raw = search.callback ?? splat;
  if (!raw) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * Command-line login (spec 1 §2.3, §5): after the user agrees, the session token is posted (form
 * field `token`, as balena's CLI expects) to the CLI's local callback, but only when the callback
 * is on this computer: localhost, 127.0.0.0/8 or [::1] (`isLoopbackCallback`); any other address
 * gets a refusal and nothing is sent. The token travels only in the POST body, never in a URL.
 * The page's CSP lets forms post to localhost and 127.0.0.1 ports only (`canPostToCliCallback`):
 * a CLI on [::1] or another 127.0.0.0/8 address is told so before anything is sent.
 */
export function CliLoginPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const params = cliRoute.useParams();
  const search = cliRoute.useSearch();
  const session = useQuery(sessionQuery(sdk));
  const username = session.data?.kind === "signed-in" ? session.data.user.username : "";
  const callback = cliCallbackOf(params._splat, search);
  const local = callback !== undefined && isLoopbackCallback(callback);
  const allowed = local && canPostToCliCallback(callback);
  const [state, setState] = useState<"asking" | "sent" | "cancelled" | "failed">("asking");
  const form = useRef<HTMLFormElement>(null);
  const tokenInput = useRef<HTMLInputElement>(null);

  const authorize = async () => {
    if (!allowed || !callback || !form.current || !tokenInput.current) return;
    let token: string;
    try {
      token = await sdk.auth.getToken();
    } catch {
      setState("failed");
      return;
    }
    tokenInput.current.value = token;
    form.current.submit();
    // The form's data was taken at submit: the token does not stay in the page.
    tokenInput.current.value = "";
    setState("sent");
  };

  return (
    <FocusCard pageTitle={t("cli_login.page_title")} title={t("cli_login.title")} icon={<TerminalOutlined />}>
      <Stack spacing={2.5}>
        {!callback ? <Alert severity="error">{t("cli_login.missing")}</Alert> : null}
        {callback && !local ? (
          <Alert severity="error" role="alert">
            {t("cli_login.not_local")}
          </Alert>
        ) : null}
        {callback && local && !allowed ? (
          <Alert severity="error" role="alert">
            {t("cli_login.unreachable", { callback })}
          </Alert>
        ) : null}
        {allowed && state === "asking" ? (
          <>
            <Typography color="text.secondary">{t("cli_login.text", { username })}</Typography>
            <Typography variant="body2" color="text.secondary" sx={{ wordBreak: "break-all" }}>
              {t("cli_login.callback", { callback })}
            </Typography>
            <Box sx={{ display: "flex", gap: 1 }}>
              <Button variant="contained" onClick={() => void authorize()}>
                {t("cli_login.authorize")}
              </Button>
              <Button onClick={() => setState("cancelled")}>{t("cli_login.cancel")}</Button>
            </Box>
          </>
        ) : null}
        {state === "sent" ? <Alert severity="success">{t("cli_login.done")}</Alert> : null}
        {state === "cancelled" ? <Alert severity="info">{t("cli_login.cancelled")}</Alert> : null}
        {state === "failed" ? <Alert severity="error">{t("cli_login.failed")}</Alert> : null}
        {allowed ? (
          <form ref={form} method="post" action={callback} target="_self" hidden>
            <input ref={tokenInput} type="hidden" name="token" />
          </form>
        ) : null}
      </Stack>
    </FocusCard>
  );
}
