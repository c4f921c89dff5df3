import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Checkbox from "@mui/material/Checkbox";
import CircularProgress from "@mui/material/CircularProgress";
import FormControlLabel from "@mui/material/FormControlLabel";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { getRouteApi, useNavigate, useRouter } from "@tanstack/react-router";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { AuthFrame } from "../../components/auth-frame.tsx";
import { ButtonLink, TextLink } from "../../components/links.tsx";
import { apiErrorCode, errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { accountRequest } from "../auth/api.ts";
import { afterLoginTarget, sessionQuery, startSession, storedClaims } from "../auth/session.ts";
import { samlErrorText } from "./saml-errors.ts";

const samlRoute = getRouteApi("/saml");
const samlRedirectRoute = getRouteApi("/saml/$ssoIdentifier");
const signonRoute = getRouteApi("/saml/callback/signon");
const mergeRoute = getRouteApi("/saml/callback/merge");

/**
 * A SAML finalize answer's words: the catalogue text of its code (the API's own text otherwise,
 * which names the domain of saml_domain_not_verified).
 */
const finalizeErrorText = (error: unknown) => {
  const code = apiErrorCode(error);
  return code?.startsWith("saml_") && code !== "saml_domain_not_verified" ? samlErrorText(code) : errorText(error);
};

/** `/saml` (spec 1 §2.1, §5, §8): asks for the SSO identifier, then `/saml/{ssoIdentifier}`. */
export function SamlPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const search = samlRoute.useSearch();
  const [sso, setSso] = useState(search.sso ?? "");
  const [error, setError] = useState<string>();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const value = sso.trim();
    if (!value) {
      setError(t("saml.sso_identifier_required"));
      return;
    }
    void navigate({ to: "/saml/$ssoIdentifier", params: { ssoIdentifier: value } });
  };
  return (
    <AuthFrame
      pageTitle={t("saml.page_title")}
      title={t("saml.title")}
      subtitle={t("saml.subtitle")}
      footer={<TextLink to="/login">{t("saml.back_to_login")}</TextLink>}
    >
      <Box component="form" noValidate onSubmit={submit}>
        <Stack spacing={2}>
          {search.saml_error ? (
            <Alert severity="error" role="alert">
              {samlErrorText(search.saml_error, { ssoIdentifier: search.sso })}
            </Alert>
          ) : null}
          <TextField
            label={t("saml.sso_identifier")}
            name="sso"
            autoFocus
            required
            value={sso}
            onChange={(event) => {
              setSso(event.target.value);
              setError(undefined);
            }}
            error={Boolean(error)}
            helperText={error ?? t("saml.sso_identifier_help")}
            slotProps={{ htmlInput: { autoCapitalize: "none", spellCheck: false } }}
          />
          <Button type="submit" variant="contained" size="large" fullWidth>
            {t("saml.continue")}
          </Button>
        </Stack>
      </Box>
    </AuthFrame>
  );
}

/** `/saml/{ssoIdentifier}` (spec 1 §2.1, §7): the browser goes to the API, which sends it to the IdP. */
export function SamlRedirectPage() {
  const { t } = useTranslation();
  const { config } = useServices();
  const { ssoIdentifier } = samlRedirectRoute.useParams();
  useEffect(() => {
    window.location.assign(`${config.apiUrl}/auth/saml/${encodeURIComponent(ssoIdentifier)}`);
  }, [config.apiUrl, ssoIdentifier]);
  return (
    <AuthFrame pageTitle={t("saml.page_title")} title={t("saml.title")}>
      <Stack direction="row" spacing={1.5} sx={{ alignItems: "center" }}>
        <CircularProgress size={20} />
        <Typography color="text.secondary">{t("saml.redirecting")}</Typography>
      </Stack>
    </AuthFrame>
  );
}

/** POST /auth/saml/finalize {code, jwt?}: the session token, as text (spec 1 §7). */
function useFinalize() {
  const { sdk, config } = useServices();
  return (code: string, jwt?: string) =>
    accountRequest<string>(sdk, config.apiUrl, {
      method: "POST",
      path: "/auth/saml/finalize",
      body: { code, ...(jwt ? { jwt } : {}) },
      auth: false,
    });
}

/** Starts the session of a finalize answer; a token still waiting for its second factor goes there. */
function useStartSamlSession() {
  const { sdk, queryClient } = useServices();
  const router = useRouter();
  return async (token: string) => {
    await startSession(queryClient, sdk, token);
    const claims = await storedClaims(sdk);
    // A re-authentication that went through single sign-on (reauth.tsx) returns to its page.
    const target = afterLoginTarget(undefined, undefined);
    if (claims?.twoFactorRequired) {
      await router.navigate({ to: "/login/two-factor", search: target === "/" ? {} : { redirect: target } });
      return;
    }
    router.history.push(target);
  };
}

/** `/saml/callback/signon?code=` (spec 1 §2.1, §7): finishes the sign-in; an error links back to /saml. */
export function SamlSignonPage() {
  const { t } = useTranslation();
  const { code } = signonRoute.useSearch();
  const finalize = useFinalize();
  const start = useStartSamlSession();
  const signOn = useMutation({
    mutationFn: async (value: string) => start(await finalize(value)),
    meta: { reportErrors: false },
  });
  // The code is good once: StrictMode's second effect must not spend it again.
  const sent = useRef<string>(undefined);
  useEffect(() => {
    if (!code || sent.current === code) return;
    sent.current = code;
    signOn.mutate(code);
  }, [code, signOn.mutate]);
  const failed = !code || signOn.isError;
  return (
    <AuthFrame pageTitle={t("saml.page_title")} title={t("saml.title")}>
      {failed ? (
        <Stack spacing={2}>
          <Alert severity="error" role="alert">
            {code ? finalizeErrorText(signOn.error) : t("errors.saml_login_failed")}
          </Alert>
          <ButtonLink to="/saml" variant="contained" size="large" fullWidth>
            {t("saml.try_again")}
          </ButtonLink>
        </Stack>
      ) : (
        <Stack direction="row" spacing={1.5} sx={{ alignItems: "center" }}>
          <CircularProgress size={20} />
          <Typography color="text.secondary">{t("saml.signing_in")}</Typography>
        </Stack>
      )}
    </AuthFrame>
  );
}

/**
 * `/saml/callback/merge?code=&shouldMergeWith=` (spec 1 §2.1, §2.3, §4): an account with the
 * IdP's email exists. Its owner, signed in, ticks both boxes and links it; the server checks that
 * the signed-in email is the IdP's (case-insensitive). Signed out: log in and come back here.
 */
export function SamlMergePage() {
  const { t } = useTranslation();
  const { sdk } = useServices();
  const queryClient = useQueryClient();
  const search = mergeRoute.useSearch();
  const session = useQuery({ ...sessionQuery(sdk), throwOnError: false });
  const finalize = useFinalize();
  const start = useStartSamlSession();
  const [linked, setLinked] = useState(false);
  const [managed, setManaged] = useState(false);
  const email = search.shouldMergeWith ?? "";
  const here = `/saml/callback/merge?${new URLSearchParams({
    ...(search.code ? { code: search.code } : {}),
    ...(search.shouldMergeWith ? { shouldMergeWith: search.shouldMergeWith } : {}),
  })}`;
  const merge = useMutation({
    mutationFn: async () => {
      const jwt = await sdk.auth.getToken();
      const token = await finalize(search.code ?? "", jwt);
      showToast("success", t("saml.linked"));
      await start(token);
    },
    meta: { reportErrors: false },
    onSettled: () => queryClient.invalidateQueries({ queryKey: ["session"] }),
  });
  const signedIn = session.data?.kind === "signed-in" ? session.data.user : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (linked && managed && signedIn) merge.mutate();
  };
  return (
    <AuthFrame pageTitle={t("saml.merge_page_title")} title={t("saml.merge_title")}>
      <Box component="form" noValidate onSubmit={submit}>
        <Stack spacing={2}>
          {!search.code ? (
            <Alert severity="error" role="alert">
              {t("errors.saml_login_failed")}
            </Alert>
          ) : null}
          {merge.isError ? (
            <Alert severity="error" role="alert">
              {finalizeErrorText(merge.error)}
            </Alert>
          ) : null}
          <Typography variant="body2">{t("saml.merge_intro", { email })}</Typography>
          <Box>
            <Typography variant="body2" sx={{ fontWeight: 600 }}>
              {t("saml.merge_what")}
            </Typography>
            <Box component="ul" sx={{ pl: 2.5, my: 0.5, "& li": { typography: "body2", color: "text.secondary" } }}>
              <li>{t("saml.merge_point_linked")}</li>
              <li>{t("saml.merge_point_orgs")}</li>
              <li>{t("saml.merge_point_admins")}</li>
            </Box>
          </Box>
          {session.isPending ? (
            <CircularProgress size={20} />
          ) : signedIn ? (
            <>
              <Typography variant="body2" color="text.secondary">
                {t("saml.merge_signed_in_as", { username: signedIn.email ?? signedIn.username })}
              </Typography>
              <Stack spacing={1}>
                <FormControlLabel
                  control={<Checkbox checked={linked} onChange={(event) => setLinked(event.target.checked)} />}
                  label={t("saml.consent_link")}
                  slotProps={{ typography: { variant: "body2" } }}
                  sx={{ alignItems: "flex-start", "& .MuiCheckbox-root": { mt: -1 } }}
                />
                <FormControlLabel
                  control={<Checkbox checked={managed} onChange={(event) => setManaged(event.target.checked)} />}
                  label={t("saml.consent_orgs")}
                  slotProps={{ typography: { variant: "body2" } }}
                  sx={{ alignItems: "flex-start", "& .MuiCheckbox-root": { mt: -1 } }}
                />
              </Stack>
              <Stack direction="row" spacing={1} sx={{ justifyContent: "flex-end" }}>
                <ButtonLink to="/" variant="text">
                  {t("saml.cancel")}
                </ButtonLink>
                <Button
                  type="submit"
                  variant="contained"
                  disabled={!linked || !managed || !search.code}
                  loading={merge.isPending}
                >
                  {t("saml.link")}
                </Button>
              </Stack>
            </>
          ) : (
            <>
              <Alert severity="info">{t("saml.merge_not_signed_in", { email })}</Alert>
              <ButtonLink to="/login" search={{ redirect: here }} variant="contained" size="large" fullWidth>
                {t("saml.merge_log_in")}
              </ButtonLink>
            </>
          )}
        </Stack>
      </Box>
    </AuthFrame>
  );
}
