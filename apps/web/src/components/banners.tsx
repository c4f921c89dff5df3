import Alert from "@mui/material/Alert";
import Button from "@mui/material/Button";
import { useNavigate } from "@tanstack/react-router";
import { useSyncExternalStore } from "react";
import { useTranslation } from "react-i18next";
import { useBuildOutdated, useConnectivity } from "../app-services.tsx";
import {
  passwordTooLong as readPasswordTooLong,
  subscribePasswordTooLong,
} from "../features/auth/password-too-long.ts";
import { useThrottled } from "../lib/throttle-notice.ts";
import { ServiceStatusBanner } from "./service-status.tsx";

/**
 * Page-wide banners (spec 1 §2.5, §7): offline (with retry), dashboard version out of date (with
 * refresh), the status page's disruption notice, and the password-too-long prompt.
 */
export function AppBanners() {
  const { t } = useTranslation();
  const { offline, checkNow } = useConnectivity();
  const outdated = useBuildOutdated();
  const passwordTooLong = useSyncExternalStore(subscribePasswordTooLong, readPasswordTooLong, () => false);
  const throttled = useThrottled();
  const navigate = useNavigate();
  return (
    <>
      {passwordTooLong ? (
        <Alert
          severity="warning"
          role="alert"
          square
          sx={{ py: 0, borderRadius: 0 }}
          action={
            <Button
              color="inherit"
              size="small"
              variant="outlined"
              onClick={() => void navigate({ to: "/preferences/details" })}
            >
              {t("banners.password_too_long_action")}
            </Button>
          }
        >
          {t("errors.password_too_long")}
        </Alert>
      ) : null}
      {offline ? (
        <Alert
          severity="warning"
          variant="filled"
          role="alert"
          square
          sx={{ py: 0, borderRadius: 0 }}
          action={
            <Button color="inherit" size="small" variant="outlined" onClick={checkNow}>
              {t("banners.offline_retry")}
            </Button>
          }
        >
          {t("banners.offline")}
        </Alert>
      ) : null}
      {outdated ? (
        <Alert
          severity="info"
          variant="filled"
          role="status"
          square
          sx={{ py: 0, borderRadius: 0 }}
          action={
            <Button color="inherit" size="small" variant="outlined" onClick={() => window.location.reload()}>
              {t("banners.outdated_refresh")}
            </Button>
          }
        >
          {t("banners.outdated")}
        </Alert>
      ) : null}
      {throttled ? (
        <Alert severity="info" role="status" square sx={{ py: 0, borderRadius: 0 }}>
          {t("banners.throttled")}
        </Alert>
      ) : null}
      <ServiceStatusBanner />
    </>
  );
}
