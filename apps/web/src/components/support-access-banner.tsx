import Alert from "@mui/material/Alert";
import { useQuery } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { useServices } from "../app-services.tsx";
import { sessionQuery } from "../features/auth/session.ts";
import { isSupportStaff } from "../features/auth/token.ts";
import { formatDate } from "../lib/format.ts";
import { supportAccessState } from "../lib/support-access.ts";

/** Whether the signed-in user is platform staff (balena_admin or support_agent, spec 2 §6). */
export function useIsSupportStaff(): boolean {
  const { sdk } = useServices();
  const session = useQuery(sessionQuery(sdk));
  return session.data?.kind === "signed-in" && isSupportStaff(session.data.claims);
}

/** The later of two support access dates: a device is open to support while it or its fleet is. */
export function laterDate(a: string | null | undefined, b: string | null | undefined): string | null {
  if (!a || !b) return a || b || null;
  return new Date(a).getTime() >= new Date(b).getTime() ? a : b;
}

/**
 * Spec 2 §6 "Other rules": platform staff viewing a fleet or a device see an info banner while
 * support access is granted (until when), an error banner when it is not. Others see nothing.
 */
export function SupportAccessBanner({ kind, until }: { kind: "fleet" | "device"; until: string | null }) {
  const { t } = useTranslation();
  const staff = useIsSupportStaff();
  if (!staff) return null;
  const access = supportAccessState(until);
  return access.state === "granted" ? (
    <Alert severity="info" sx={{ mb: 2 }}>
      {t(`support_access_banner.granted_${kind}`, { date: formatDate(access.until) })}
    </Alert>
  ) : (
    <Alert severity="error" sx={{ mb: 2 }}>
      {t(`support_access_banner.missing_${kind}`)}
    </Alert>
  );
}
