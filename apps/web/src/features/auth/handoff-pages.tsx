import AppsOutlined from "@mui/icons-material/AppsOutlined";
import SupportAgentOutlined from "@mui/icons-material/SupportAgentOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import CircularProgress from "@mui/material/CircularProgress";
import Stack from "@mui/material/Stack";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery } from "@tanstack/react-query";
import { getRouteApi } from "@tanstack/react-router";
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { FocusCard } from "../../components/auth-frame.tsx";
import { ButtonLink } from "../../components/links.tsx";
import { apiErrorCode, errorText, getStatusCode } from "../../lib/errors.ts";
import { accountRequest } from "./api.ts";
import { deniedRedirect, type OAuthApplication, redirectHost } from "./oauth.ts";
import { useReauth } from "./reauth.tsx";
import { sessionQuery } from "./session.ts";

const oauthRoute = getRouteApi("/signed-in/login/oauth/$clientId");
const zendeskRoute = getRouteApi("/signed-in/zendesk-login");

/**
 * `/login/oauth/{clientId}?state=` (spec 1 §2.1, §2.3, §7): an application asks to act for the
 * signed-in user. The page shows the application (name, description, where it sends the
 * browser); Authorize calls `POST /oauth/authorize` (asking for the password again when the login
 * is older than 20 minutes) and follows the redirect URI it answers (it carries the code and the
 * state); Deny goes back to the application with `access_denied`.
 */
export function OAuthAuthorizePage() {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const { clientId } = oauthRoute.useParams();
  const { state } = oauthRoute.useSearch();
  const session = useQuery(sessionQuery(sdk));
  const username = session.data?.kind === "signed-in" ? session.data.user.username : "";
  const [leaving, setLeaving] = useState<string>();
  const application = useQuery({
    queryKey: ["oauth", "application", clientId],
    queryFn: () =>
      accountRequest<OAuthApplication>(sdk, config.apiUrl, {
        method: "GET",
        path: `/oauth/applications/${encodeURIComponent(clientId)}`,
      }),
    retry: false,
    throwOnError: false,
  });
  // Granting is a sensitive action: a login older than 20 minutes asks for the password first.
  const withReauth = useReauth();
  const authorize = useMutation({
    mutationFn: () =>
      withReauth(() =>
        accountRequest<{ code: string; redirect_uri: string }>(sdk, config.apiUrl, {
          method: "POST",
          path: "/oauth/authorize",
          body: { client_id: clientId, response_type: "code", ...(state !== undefined ? { state } : {}) },
        }),
      ),
    meta: { reportErrors: false },
    onSuccess: (answer) => {
      setLeaving(answer.redirect_uri);
      window.location.assign(answer.redirect_uri);
    },
  });
  const deny = (app: OAuthApplication) => {
    const target = deniedRedirect(app.redirect_uri, state);
    setLeaving(target);
    window.location.assign(target);
  };

  const app = application.data;
  const unknown =
    application.isError &&
    (apiErrorCode(application.error) === "oauth_application_unknown" || getStatusCode(application.error) === 404);
  return (
    <FocusCard
      pageTitle={t("oauth.page_title")}
      title={app ? t("oauth.title", { name: app.name }) : t("oauth.page_title")}
      icon={<AppsOutlined />}
    >
      <Stack spacing={2.5}>
        {application.isPending ? (
          <Stack direction="row" spacing={1.5} sx={{ alignItems: "center" }}>
            <CircularProgress size={20} />
            <Typography color="text.secondary">{t("oauth.loading")}</Typography>
          </Stack>
        ) : null}
        {application.isError ? (
          <Alert severity="error" role="alert">
            {unknown ? t("oauth.unknown", { clientId }) : errorText(application.error)}
          </Alert>
        ) : null}
        {application.isError ? (
          <Box>
            <ButtonLink to="/" variant="contained">
              {t("support_portal.back")}
            </ButtonLink>
          </Box>
        ) : null}
        {app ? (
          <>
            <Typography color="text.secondary">{t("oauth.intro", { name: app.name })}</Typography>
            <Box sx={{ border: 1, borderColor: "divider", borderRadius: 1, p: 2 }}>
              <Typography sx={{ fontWeight: 600 }}>{app.name}</Typography>
              <Typography variant="body2" color="text.secondary" sx={{ whiteSpace: "pre-line", mt: 0.5 }}>
                {app.description?.trim() || t("oauth.no_description")}
              </Typography>
            </Box>
            <Typography variant="body2">{t("oauth.access", { name: app.name, username })}</Typography>
            <Typography variant="body2" color="text.secondary" sx={{ wordBreak: "break-all" }}>
              {t("oauth.redirect", { host: redirectHost(app.redirect_uri) })}
            </Typography>
            {authorize.isError ? (
              <Alert severity="error" role="alert">
                {errorText(authorize.error)}
              </Alert>
            ) : null}
            {leaving ? (
              <Stack direction="row" spacing={1.5} sx={{ alignItems: "center" }}>
                <CircularProgress size={20} />
                <Typography color="text.secondary">
                  {t("oauth.redirecting", { host: redirectHost(leaving) })}
                </Typography>
              </Stack>
            ) : (
              <Stack direction="row" spacing={1} sx={{ justifyContent: "flex-end" }}>
                <Button onClick={() => deny(app)} disabled={authorize.isPending}>
                  {t("oauth.deny")}
                </Button>
                <Button variant="contained" onClick={() => authorize.mutate()} loading={authorize.isPending}>
                  {t("oauth.authorize")}
                </Button>
              </Stack>
            )}
          </>
        ) : null}
      </Stack>
    </FocusCard>
  );
}

/**
 * `/zendesk-login?return_to=` (spec 1 §2.1, §7): the support portal's single sign-on. The API
 * answers the portal's URL with a signed token for the signed-in user; the browser goes there.
 * Not configured (or refused): the reason in words on the page.
 */
export function ZendeskLoginPage() {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const { return_to: returnTo } = zendeskRoute.useSearch();
  const handoff = useMutation({
    mutationFn: () =>
      accountRequest<{ url: string }>(sdk, config.apiUrl, {
        method: "GET",
        path: `/zendesk/v1/login${returnTo ? `?${new URLSearchParams({ return_to: returnTo })}` : ""}`,
      }),
    meta: { reportErrors: false },
    onSuccess: (answer) => window.location.assign(answer.url),
  });
  // One handoff per visit: StrictMode's second effect must not ask again.
  const sent = useRef(false);
  useEffect(() => {
    if (sent.current) return;
    sent.current = true;
    handoff.mutate();
  }, [handoff.mutate]);
  return (
    <FocusCard
      pageTitle={t("support_portal.page_title")}
      title={t("support_portal.title")}
      icon={<SupportAgentOutlined />}
    >
      {handoff.isError ? (
        <Stack spacing={2}>
          <Alert severity="error" role="alert">
            {errorText(handoff.error)}
          </Alert>
          <Box>
            <ButtonLink to="/" variant="contained">
              {t("support_portal.back")}
            </ButtonLink>
          </Box>
        </Stack>
      ) : (
        <Stack direction="row" spacing={1.5} sx={{ alignItems: "center" }}>
          <CircularProgress size={20} />
          <Typography color="text.secondary">{t("support_portal.redirecting")}</Typography>
        </Stack>
      )}
    </FocusCard>
  );
}
