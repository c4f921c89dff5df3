import Alert from "@mui/material/Alert";
import Button from "@mui/material/Button";
import { useTranslation } from "react-i18next";
import { useBuildOutdated, useConnectivity } from "../app-services.tsx";
import { ServiceStatusBanner } from "./service-status.tsx";

/**
 * Page-wide banners (spec 1 §2.5, §7): offline (with retry), dashboard version out of date (with
 * refresh), and the status page's disruption notice.
 */
export function AppBanners() {
  const { t } = useTranslation();
  const { offline, checkNow } = useConnectivity();
  const outdated = useBuildOutdated();
  return (
    <>
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
      <ServiceStatusBanner />
    </>
  );
}
