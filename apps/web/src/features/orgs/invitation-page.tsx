import Box from "@mui/material/Box";
import CircularProgress from "@mui/material/CircularProgress";
import Typography from "@mui/material/Typography";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate, useParams } from "@tanstack/react-router";
import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";

/**
 * `/organization/invitation/{token}` and `/invitation/{token}` (spec 1 §2.1, spec 3 §2): accepts
 * the invitation, then `/orgs` (organization) or `/fleets` (fleet); an invalid or expired one goes
 * there too, with the error. Signed-out visitors reach this page again after login or sign-up.
 */
function InvitationPage({ kind }: { kind: "organization" | "fleet" }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { token } = useParams({ strict: false }) as { token: string };
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const target = kind === "organization" ? "/orgs" : "/fleets";
    const accept =
      kind === "organization"
        ? sdk.models.organization.invite.accept(token)
        : sdk.models.application.invite.accept(token);
    accept.then(
      async () => {
        showToast("success", t("orgs.invitation_accepted"));
        await queryClient.invalidateQueries();
        await navigate({ to: target, replace: true });
      },
      async (error: unknown) => {
        showToast("error", errorText(error));
        await navigate({ to: target, replace: true });
      },
    );
  }, [kind, token, sdk, navigate, queryClient, t]);
  return (
    <Box sx={{ display: "grid", placeItems: "center", minHeight: 240, gap: 2 }}>
      <CircularProgress size={28} />
      <Typography color="text.secondary">{t("orgs.accepting_invitation")}</Typography>
    </Box>
  );
}

export const OrganizationInvitationPage = () => <InvitationPage kind="organization" />;
export const FleetInvitationPage = () => <InvitationPage kind="fleet" />;
