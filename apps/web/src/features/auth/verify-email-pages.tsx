import MarkEmailUnreadOutlined from "@mui/icons-material/MarkEmailUnreadOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import CircularProgress from "@mui/material/CircularProgress";
import Stack from "@mui/material/Stack";
import Typography from "@mui/material/Typography";
import { useQuery } from "@tanstack/react-query";
import { getRouteApi, useRouter } from "@tanstack/react-router";
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { FocusCard } from "../../components/auth-frame.tsx";
import { useDocumentTitle } from "../../components/use-document-title.ts";
import { apiErrorCode } from "../../lib/errors.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { logOut, sessionKeys, sessionQuery, startSession } from "./session.ts";

/** Which message the pending page shows after a failed verification (spec 1 §8). */
export function verificationFailure(error: unknown): "invalid" | "issue" {
  return apiErrorCode(error) === "email_verification_invalid" ? "invalid" : "issue";
}

/** Resend requests are debounced by 300 ms (spec 1 §7). */
export const RESEND_DEBOUNCE_MS = 300;

type Progress = "pending" | "inprogress" | "done" | "failed";

const pendingRoute = getRouteApi("/signed-in/user/verify-email/pending");
const tokenRoute = getRouteApi("/user/verify-email/$token/$email");

/** The waiting page for an unverified email (spec 1 §2.1), with a debounced resend. */
export function VerifyEmailPendingPage() {
  const { t } = useTranslation();
  const { sdk, queryClient, config } = useServices();
  const api = useAccountApi();
  const router = useRouter();
  const search = pendingRoute.useSearch();
  const session = useQuery(sessionQuery(sdk));
  const email = session.data?.kind === "signed-in" ? session.data.user.email : undefined;
  const [progress, setProgress] = useState<Progress>("pending");
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);

  useEffect(() => () => clearTimeout(timer.current), []);

  const resend = () => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      setProgress("inprogress");
      api.requestVerificationEmail().then(
        () => setProgress("done"),
        () => setProgress("failed"),
      );
    }, RESEND_DEBOUNCE_MS);
  };

  const leave = async () => {
    await logOut(queryClient, sdk, config.apiUrl);
    await router.navigate({ to: "/login", search: {} });
  };

  return (
    <FocusCard
      pageTitle={t("verify_email.pending_title")}
      title={t("verify_email.pending_title")}
      icon={<MarkEmailUnreadOutlined />}
    >
      <Stack spacing={2.5}>
        {search.error ? (
          <Alert severity="error" role="alert">
            {search.error === "invalid" ? t("errors.verification_link_invalid") : t("errors.verification_issue")}
          </Alert>
        ) : null}
        <Typography color="text.secondary">
          {email ? t("verify_email.pending_text", { email }) : t("verify_email.pending_text_no_email")}
        </Typography>
        {progress === "done" ? (
          <Alert severity="success" role="status">
            {t("verify_email.resent")}
          </Alert>
        ) : null}
        {progress === "failed" ? (
          <Alert severity="error" role="alert">
            {t("verify_email.resend_failed")}
          </Alert>
        ) : null}
        <Box sx={{ display: "flex", gap: 1, flexWrap: "wrap" }}>
          <Button variant="contained" onClick={resend} loading={progress === "inprogress"}>
            {t("verify_email.resend")}
          </Button>
          <Button onClick={() => void leave()}>{t("verify_email.log_out")}</Button>
        </Box>
      </Stack>
    </FocusCard>
  );
}

/**
 * `/user/verify-email/{token}/{email}` (spec 1 §2.1): verifies, keeps the fresh token and goes
 * on to /signup/profile; an error goes to the pending page with its message.
 */
export function VerifyEmailTokenPage() {
  const { t } = useTranslation();
  useDocumentTitle(t("verify_email.verifying"));
  const { sdk, queryClient } = useServices();
  const router = useRouter();
  const { token, email } = tokenRoute.useParams();
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    sdk.auth
      .verifyEmail({ email, token })
      .then(async (sessionToken) => {
        await startSession(queryClient, sdk, sessionToken);
        await router.navigate({ to: "/signup/profile", replace: true });
      })
      .catch(async (error: unknown) => {
        await queryClient.invalidateQueries({ queryKey: sessionKeys.state });
        await router.navigate({
          to: "/user/verify-email/pending",
          // A token the server does not know (or no longer) is "link invalid or expired"; any other
          // failure (a 400 for another reason, the server down) is the generic verification issue (spec 1 §8).
          search: { error: verificationFailure(error) },
          replace: true,
        });
      });
  }, [sdk, queryClient, router, token, email]);

  return (
    <Box sx={{ display: "grid", placeItems: "center", minHeight: "60vh", gap: 2 }}>
      <Stack spacing={2} sx={{ alignItems: "center" }}>
        <CircularProgress size={28} />
        <Typography color="text.secondary">{t("verify_email.verifying")}</Typography>
      </Stack>
    </Box>
  );
}
