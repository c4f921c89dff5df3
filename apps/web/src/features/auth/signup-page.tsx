import { emailSchema, passwordSchema } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Checkbox from "@mui/material/Checkbox";
import FormControlLabel from "@mui/material/FormControlLabel";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import { useMutation } from "@tanstack/react-query";
import { getRouteApi, useRouter } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { AuthFrame } from "../../components/auth-frame.tsx";
import { PasswordField } from "../../components/form-fields.tsx";
import { TextLink } from "../../components/links.tsx";
import { errorText } from "../../lib/errors.ts";
import { type FieldErrors, fieldErrors, hasErrors } from "../../lib/validation.ts";
import { samlErrorText } from "../identity/saml-errors.ts";
import { useCaptcha } from "./captcha.tsx";
import { invitationFromRedirect, looksLikeEmail, rememberAfterSignup } from "./navigation.ts";
import { checkSessionState, needsVerification, sessionKeys, startSession } from "./session.ts";
import { SocialButtons } from "./social-buttons.tsx";

const signupRoute = getRouteApi("/signup");

/**
 * Registration (spec 1 §2.3, §5): email, password, newsletter opt-out, captcha, and the
 * invitation when the redirect holds one. Sends only those fields; then the pending-verification
 * page, or /signup/profile when no verification is pending.
 */
export function SignupPage() {
  const { t } = useTranslation();
  const { sdk, queryClient } = useServices();
  const router = useRouter();
  const search = signupRoute.useSearch();
  const invitation = invitationFromRedirect(search.redirect);
  const [email, setEmail] = useState(looksLikeEmail(search.email) ? search.email : "");
  const [password, setPassword] = useState("");
  const [newsletterOptOut, setNewsletterOptOut] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({});
  const captcha = useCaptcha();

  const register = useMutation({
    mutationFn: async () => {
      const body: Record<string, unknown> = {
        email: email.trim(),
        password,
        has_disabled_newsletter: newsletterOptOut,
      };
      if (captcha.response !== undefined) body["g-recaptcha-response"] = captcha.response;
      if (invitation) {
        body.invitation_type = invitation.type;
        body.invitation_token = invitation.token;
      }
      const token = await sdk.auth.register(body as Parameters<typeof sdk.auth.register>[0]);
      await startSession(queryClient, sdk, token);
      const state = await checkSessionState(sdk);
      queryClient.setQueryData(sessionKeys.state, state);
      return state;
    },
    meta: { reportErrors: false },
    onError: () => captcha.reset(),
    onSuccess: async (state) => {
      const pending = state.kind === "signed-in" && needsVerification(state.user);
      // The registration accepted the invitation: after the profile, the invitee lands where it leads.
      if (invitation) rememberAfterSignup(invitation.type === "organization" ? "/orgs" : "/fleets");
      await router.navigate({ to: pending ? "/user/verify-email/pending" : "/signup/profile" });
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: FieldErrors = {
      email: fieldErrors(emailSchema, email)[""],
      password: fieldErrors(passwordSchema, password)[""],
      captcha: captcha.ready ? undefined : t("signup.captcha_required"),
    };
    setErrors(found);
    if (hasErrors(found)) return;
    register.mutate();
  };

  return (
    <AuthFrame
      pageTitle={t("signup.page_title")}
      title={t("signup.title")}
      subtitle={t("login.free_devices")}
      footer={
        <>
          {t("login.have_account")}{" "}
          <TextLink to="/login" search={search.redirect ? { redirect: search.redirect } : {}}>
            {t("login.log_in")}
          </TextLink>
        </>
      }
    >
      <Box component="form" noValidate onSubmit={submit}>
        <Stack spacing={2}>
          {search.saml_error ? <Alert severity="error">{samlErrorText(search.saml_error)}</Alert> : null}
          {invitation ? <Alert severity="info">{t("signup.invitation")}</Alert> : null}
          {register.isError ? (
            <Alert severity="error" role="alert">
              {errorText(register.error)}
            </Alert>
          ) : null}
          <TextField
            label={t("signup.email")}
            type="email"
            name="email"
            autoComplete="email"
            autoFocus
            value={email}
            onChange={(event) => setEmail(event.target.value)}
            error={Boolean(errors.email)}
            helperText={errors.email}
          />
          <PasswordField
            label={t("signup.password")}
            name="password"
            autoComplete="new-password"
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            error={Boolean(errors.password)}
            helperText={errors.password ?? t("signup.password_help")}
          />
          <FormControlLabel
            control={
              <Checkbox checked={newsletterOptOut} onChange={(event) => setNewsletterOptOut(event.target.checked)} />
            }
            label={t("signup.newsletter_opt_out")}
            slotProps={{ typography: { variant: "body2" } }}
          />
          {captcha.element}
          {errors.captcha && !captcha.ready ? (
            <Alert severity="warning" role="alert">
              {errors.captcha}
            </Alert>
          ) : null}
          <Button
            type="submit"
            variant="contained"
            size="large"
            fullWidth
            loading={register.isPending || captcha.loading}
          >
            {t("signup.submit")}
          </Button>
          <SocialButtons redirect={search.redirect} divider="before" />
        </Stack>
      </Box>
    </AuthFrame>
  );
}
