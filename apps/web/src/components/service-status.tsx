import OpenInNew from "@mui/icons-material/OpenInNew";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Link from "@mui/material/Link";
import { Fragment } from "react";
import { useTranslation } from "react-i18next";
import { useStatusPage } from "../app-services.tsx";
import { hasDisruption, type StatusIndicator } from "../lib/status-page.ts";
import { headerColors, statusColors } from "../theme.ts";

/** The dot's colour per indicator; grey before the first answer or when the page is unreachable. */
const INDICATOR_COLORS: Record<StatusIndicator, string> = {
  none: statusColors.operational,
  minor: statusColors.configuring,
  maintenance: statusColors.updating,
  major: statusColors.reducedFunctionality,
  critical: statusColors.disconnected,
};

const external = { target: "_blank", rel: "noopener noreferrer" } as const;

/** The status page's own words, or ours for its indicator (or for no answer yet). */
function useStatusDescription(summary: ReturnType<typeof useStatusPage>["summary"]) {
  const { t } = useTranslation();
  if (!summary) return t("status_page.unknown");
  return (
    summary.description || (summary.indicator === "none" ? t("status_page.operational") : t("status_page.disruption"))
  );
}

/** The header's "Service status" entry (spec 1 §2.5), when the deployment has a status page. */
export function ServiceStatusLink() {
  const { t } = useTranslation();
  const { configured, pageUrl, summary } = useStatusPage();
  const description = useStatusDescription(summary);
  if (!configured || !pageUrl) return null;
  return (
    <Button
      component="a"
      href={pageUrl}
      {...external}
      title={t("status_page.link_title", { description })}
      size="small"
      startIcon={
        <Box
          component="span"
          aria-hidden
          data-indicator={summary?.indicator ?? "unknown"}
          sx={{
            width: 8,
            height: 8,
            borderRadius: "50%",
            bgcolor: summary ? INDICATOR_COLORS[summary.indicator] : headerColors.muted,
            boxShadow: "0 0 0 2px rgba(255,255,255,0.08)",
          }}
        />
      }
      sx={{
        color: headerColors.text,
        fontWeight: 500,
        px: 1,
        "& .MuiButton-startIcon": { mr: 0.75 },
        "&:hover": { bgcolor: "rgba(255,255,255,0.08)" },
      }}
    >
      {t("status_page.link")}
    </Button>
  );
}

/**
 * The support drawer's status indicator (spec 3 §7): the dot and the summary's words on a light
 * background, linking to the status page; nothing when the deployment has none.
 */
export function ServiceStatusIndicator() {
  const { t } = useTranslation();
  const { configured, pageUrl, summary } = useStatusPage();
  const description = useStatusDescription(summary);
  if (!configured || !pageUrl) return null;
  return (
    <Link
      href={pageUrl}
      {...external}
      underline="hover"
      color="text.primary"
      aria-label={t("status_page.link_title", { description })}
      sx={{ display: "flex", alignItems: "center", gap: 1, fontSize: 14 }}
    >
      <Box
        component="span"
        aria-hidden
        data-indicator={summary?.indicator ?? "unknown"}
        sx={{
          width: 10,
          height: 10,
          flexShrink: 0,
          borderRadius: "50%",
          bgcolor: summary ? INDICATOR_COLORS[summary.indicator] : "grey.400",
        }}
      />
      <Box component="span" sx={{ flex: 1, "&::first-letter": { textTransform: "uppercase" } }}>
        {description}
      </Box>
      <OpenInNew aria-hidden sx={{ fontSize: 16, color: "text.secondary" }} />
    </Link>
  );
}

/**
 * The status page banner (spec 1 §7): while the status page reports anything but "none", a calm
 * strip with its description and the ongoing incidents, each linking to its page. It can be
 * dismissed; it comes back when the disruption changes.
 */
export function ServiceStatusBanner() {
  const { t } = useTranslation();
  const { summary, dismissed, pageUrl, dismiss } = useStatusPage();
  if (!hasDisruption(summary) || dismissed || !pageUrl) return null;
  const serious = summary.indicator === "major" || summary.indicator === "critical";
  const { incidents } = summary;
  return (
    <Alert
      severity={serious ? "warning" : "info"}
      role="status"
      square
      closeText={t("status_page.dismiss")}
      onClose={dismiss}
      data-indicator={summary.indicator}
      sx={{
        borderRadius: 0,
        py: 0,
        alignItems: "center",
        borderBottom: 1,
        borderColor: serious ? "warning.light" : "info.light",
        "& .MuiAlert-message": { py: 0.75 },
        "& .MuiAlert-icon, & .MuiAlert-action": { py: 0, alignSelf: "center" },
        "& a": { color: "inherit", fontWeight: 600 },
      }}
    >
      <Box component="span" sx={{ fontWeight: 600 }}>
        {summary.description || t("status_page.disruption")}
      </Box>
      {incidents.length > 0 ? (
        <>
          <Box component="span" aria-hidden sx={{ mx: 1, opacity: 0.5 }}>
            ·
          </Box>
          {t("status_page.incidents", { count: incidents.length })}{" "}
          {incidents.map((incident, index) => (
            <Fragment key={`${incident.name} ${incident.url ?? ""}`}>
              {index > 0 ? ", " : null}
              <Link href={incident.url ?? pageUrl} {...external} underline="hover">
                {incident.name}
              </Link>
            </Fragment>
          ))}
        </>
      ) : null}
      <Box component="span" aria-hidden sx={{ mx: 1, opacity: 0.5 }}>
        ·
      </Box>
      <Link href={pageUrl} {...external} underline="always" sx={{ whiteSpace: "nowrap" }}>
        {t("status_page.open")}
        <OpenInNew aria-hidden sx={{ fontSize: 13, ml: 0.375, verticalAlign: "-2px" }} />
      </Link>
    </Alert>
  );
}
