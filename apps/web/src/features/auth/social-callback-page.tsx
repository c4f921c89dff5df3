import Alert from "@mui/material/Alert";
import CircularProgress from "@mui/material/CircularProgress";
import Stack from "@mui/material/Stack";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery } from "@tanstack/react-query";
import { getRouteApi, useRouter } from "@tanstack/react-router";
import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { AuthFrame } from "../../components/auth-frame.tsx";
import { ButtonLink } from "../../components/links.tsx";
import { accountRequest } from "./api.ts";
import { takeReturnUrl } from "./navigation.ts";
import { afterLoginTarget, startSession, storedClaims } from "./session.ts";
import {
  SOCIAL_RETURN_KEY,
  socialCallbackErrorText,
  socialCallbackQuery,
  socialProvidersQuery,
  takeClientState,
} from "./social.ts";

const callbackRoute = getRouteApi("/auth/$provider/callback");

/**
 * `/auth/{provider}/callback` (spec 1 §2.1, §4, §7): the provider sends the browser back here;
 * the page passes the query on to `GET {api}/auth/{provider}/callback` with the client_state the
 * button kept, starts the session with the token it answers (two-factor first when the account
 * has it) and goes where the sign-in was started for, or `/`. A failure is shown in words with
 * the way back to the login page.
 */
export function SocialCallbackPage() {
  const { t } = useTranslation();
  const { sdk, queryClient, config } = useServices();
  const router = useRouter();
  const { provider } = callbackRoute.useParams();
  const providers = useQuery({ ...socialProvidersQuery(config.apiUrl), throwOnError: false });
  const name = providers.data?.find((p) => p.slug === provider)?.name ?? provider;
  const hasQuery = typeof window !== "undefined" && new URLSearchParams(window.location.search).has("state");

  const signIn = useMutation({
    mutationFn: async (search: string) => {
      const query = socialCallbackQuery(search, takeClientState());
      const token = await accountRequest<string>(sdk, config.apiUrl, {
        method: "GET",
        path: `/auth/${encodeURIComponent(provider)}/callback?${query}`,
        auth: false,
      });
      if (typeof token !== "string" || !token) throw new Error("no session token");
      await startSession(queryClient, sdk, token.trim());
      return storedClaims(sdk);
    },
    meta: { reportErrors: false },
    onSuccess: async (claims) => {
      const target = afterLoginTarget(takeReturnUrl(SOCIAL_RETURN_KEY), claims?.id);
      if (claims?.twoFactorRequired) {
        await router.navigate({ to: "/login/two-factor", search: target === "/" ? {} : { redirect: target } });
        return;
      }
      router.history.replace(target);
    },
  });

  // The flow is good once: StrictMode's second effect must not spend it again.
  const sent = useRef(false);
  useEffect(() => {
    if (sent.current || !hasQuery) return;
    sent.current = true;
    signIn.mutate(window.location.search);
  }, [hasQuery, signIn.mutate]);

  const failed = !hasQuery || signIn.isError;
  return (
    <AuthFrame pageTitle={t("social.page_title")} title={failed ? t("social.failed_title") : t("social.title")}>
      {failed ? (
        <Stack spacing={2}>
          <Alert severity="error" role="alert">
            {hasQuery ? socialCallbackErrorText(signIn.error) : t("social.incomplete")}
          </Alert>
          <ButtonLink to="/login" variant="contained" size="large" fullWidth>
            {t("social.back_to_login")}
          </ButtonLink>
        </Stack>
      ) : (
        <Stack direction="row" spacing={1.5} sx={{ alignItems: "center" }}>
          <CircularProgress size={20} />
          <Typography color="text.secondary">{t("social.signing_in", { provider: name })}</Typography>
        </Stack>
      )}
    </AuthFrame>
  );
}
