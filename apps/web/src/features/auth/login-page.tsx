import { TWO_FACTOR_CODE_LENGTH } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Divider from "@mui/material/Divider";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery } from "@tanstack/react-query";
import { getRouteApi, useRouter } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { AuthFrame } from "../../components/auth-frame.tsx";
import { PasswordField } from "../../components/form-fields.tsx";
import { ButtonLink, TextLink } from "../../components/links.tsx";
import { preloadSdk } from "../../lib/sdk.ts";
import { type FieldErrors, hasErrors } from "../../lib/validation.ts";
import { samlErrorText } from "../identity/saml-errors.ts";
import { accountRequest } from "./api.ts";
import { isLoginLocked, loginErrorText } from "./login-lock.ts";
import { notePasswordLength } from "./password-too-long.ts";
import { afterLoginTarget, storedClaims } from "./session.ts";
import { socialErrorText, socialProvidersQuery } from "./social.ts";
import { SocialButtons } from "./social-buttons.tsx";
import { noteFreshToken } from "./token.ts";

const loginRoute = getRouteApi("/login");

/**
 * Sign-in (spec 1 §2.3): username (or email) and password; the header says the first 10
 * devices are free. A token that still needs its second factor continues at /login/two-factor.
 * A login locked by failed logins (429) shows the server's whole text (how long the lock lasts)
 * and offers its two ways through: a two-factor code sent along with the password, or a
 * password reset (security review 3).
 */
/** The form's rules and the SDK are fetched once the person types or clicks on the form (the field is focused at once). */
const loadLoginRules = () => import("./login-rules.ts");
const warmUp = () => {
  void loadLoginRules();
  void preloadSdk();
};

export function LoginPage() {
  const { t } = useTranslation();
  const { sdk, queryClient, config } = useServices();
  const router = useRouter();
  const search = loginRoute.useSearch();
  const providers = useQuery({ ...socialProvidersQuery(config.apiUrl), throwOnError: false });
  // A failed start of a social sign-in comes back here (spec 1 §8): named with the provider's name.
  const socialProvider = search.provider ?? "";
  const socialProviderName = providers.data?.find((p) => p.slug === socialProvider)?.name ?? socialProvider;
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [twoFactorCode, setTwoFactorCode] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  // Failed logins locked this login (429): the page offers a second factor or a password reset.
  const [locked, setLocked] = useState(false);

  const login = useMutation({
    mutationFn: async (credentials: { username: string; password: string; twoFactorCode?: string }) => {
      // What balena-sdk's auth.login posts, plus the code that gets through a lock; called
      // directly because the SDK turns a 429 into a bare "Too Many Requests" without its text.
      const token = await accountRequest<string>(sdk, config.apiUrl, {
        method: "POST",
        path: "/login_",
        body: credentials,
        auth: false,
      });
      await sdk.auth.loginWithToken(token);
      notePasswordLength(credentials.password);
      // The new token's issue time is the server's clock (token checks compare with it).
      noteFreshToken(token);
      return storedClaims(sdk);
    },
    meta: { reportErrors: false },
    onError: (error) => {
      if (isLoginLocked(error)) setLocked(true);
    },
    onSuccess: async (claims) => {
      queryClient.clear();
      if (claims?.twoFactorRequired) {
        await router.navigate({
          to: "/login/two-factor",
          search: search.redirect ? { redirect: search.redirect } : {},
        });
        return;
      }
      router.history.push(afterLoginTarget(search.redirect, claims?.id));
    },
  });

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { loginErrors } = await loadLoginRules();
    const found = loginErrors({ username, password });
    setErrors(found);
    if (hasErrors(found)) return;
    const code = locked ? twoFactorCode.trim() : "";
    login.mutate({ username: username.trim(), password, ...(code ? { twoFactorCode: code } : {}) });
  };

  return (
    <AuthFrame
      pageTitle={t("login.page_title")}
      title={t("login.title")}
      subtitle={t("login.free_devices")}
      footer={
        <>
          {t("login.no_account")}{" "}
          <TextLink to="/signup" search={search.redirect ? { redirect: search.redirect } : {}}>
            {t("login.sign_up")}
          </TextLink>
        </>
      }
    >
      <Box component="form" noValidate onSubmit={(event) => void submit(event)} onInput={warmUp} onPointerDown={warmUp}>
        <Stack spacing={2}>
          {search.saml_error && !login.isError ? (
            <Alert severity="error" role="alert">
              {samlErrorText(search.saml_error, { domain: search.domain })}
            </Alert>
          ) : null}
          {search.social_error && !login.isError ? (
            <Alert severity="error" role="alert">
              {socialErrorText(search.social_error, socialProviderName)}
            </Alert>
          ) : null}
          {login.isError ? (
            <Alert severity="error" role="alert">
              {loginErrorText(login.error)}
            </Alert>
          ) : null}
          <TextField
            label={t("login.email")}
            name="username"
            autoComplete="username"
            autoFocus
            required
            value={username}
            onChange={(event) => setUsername(event.target.value)}
            error={Boolean(errors.username)}
            helperText={errors.username}
            slotProps={{ inputLabel: { required: false } }}
          />
          <PasswordField
            label={t("login.password")}
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            error={Boolean(errors.password)}
            helperText={errors.password}
          />
          {locked ? (
            <Stack spacing={1}>
              <Typography variant="body2" color="text.secondary">
                {t("login.locked_text")}{" "}
                <TextLink to="/password-reset" variant="body2">
                  {t("login.locked_reset")}
                </TextLink>
              </Typography>
              <TextField
                label={t("login.locked_code")}
                name="twoFactorCode"
                autoComplete="one-time-code"
                value={twoFactorCode}
                onChange={(event) => setTwoFactorCode(event.target.value.replace(/\s/g, ""))}
                helperText={t("login.locked_code_help")}
                slotProps={{ htmlInput: { inputMode: "numeric", maxLength: TWO_FACTOR_CODE_LENGTH } }}
              />
            </Stack>
          ) : null}
          <Box sx={{ display: "flex", justifyContent: "flex-end", mt: "4px !important" }}>
            <TextLink to="/password-reset" variant="body2">
              {t("login.forgot_password")}
            </TextLink>
          </Box>
          <Button type="submit" variant="contained" size="large" fullWidth loading={login.isPending}>
            {t("login.submit")}
          </Button>
          <Divider sx={{ typography: "body2", color: "text.secondary" }}>{t("login.or")}</Divider>
          {/* Social providers (spec 1 §2.3): one button each, none when none is configured. */}
          <SocialButtons mode="login" redirect={search.redirect} />
          {/* Enterprise single sign-on (spec 1 §2.3): the SSO identifier is asked on /saml. */}
          <ButtonLink to="/saml" variant="outlined" size="large" fullWidth>
            {t("login.sso")}
          </ButtonLink>
        </Stack>
      </Box>
    </AuthFrame>
  );
}
