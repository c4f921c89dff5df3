import type { ReleaseStatusDisplay } from "@flotilla/domain";
import Box from "@mui/material/Box";
import Chip from "@mui/material/Chip";
import CircularProgress from "@mui/material/CircularProgress";
import { alpha } from "@mui/material/styles";
import Typography from "@mui/material/Typography";
import { useTranslation } from "react-i18next";
import { statusColors } from "../../theme.ts";
import { isDraft, shownStatus, versionText } from "./model.ts";

/** One colour per shown status (DESIGN §5): succeeded green, running blue, failed red, cancelled grey, local amber. */
const COLORS: Record<ReleaseStatusDisplay, string> = {
  succeeded: statusColors.operational,
  running: statusColors.updating,
  failed: statusColors.disconnected,
  cancelled: statusColors.inactive,
  local: statusColors.configuring,
};

/** A release's status as it shows (spec 2 §4), a running build with a spinner. */
export function ReleaseStatus(props: {
  release: { status: string; update_timestamp?: string | null; start_timestamp?: string | null; created_at?: string };
}) {
  const { t } = useTranslation();
  const shown = shownStatus(props.release);
  return (
    <Box
      component="span"
      data-status={shown}
      sx={{ display: "inline-flex", alignItems: "center", gap: 0.75, color: COLORS[shown], fontWeight: 500 }}
    >
      {shown === "running" ? (
        <CircularProgress size={10} thickness={6} sx={{ color: "inherit" }} aria-hidden />
      ) : (
        <Box component="span" aria-hidden sx={{ width: 8, height: 8, borderRadius: "50%", bgcolor: COLORS[shown] }} />
      )}
      <Typography component="span" variant="body2" sx={{ color: "text.primary", fontWeight: 500 }}>
        {t(`releases.status.${shown}`)}
      </Typography>
    </Box>
  );
}

const flag = (label: string, color: string) => (
  <Chip
    size="small"
    label={label}
    sx={{
      height: 20,
      fontSize: 11,
      fontWeight: 600,
      color,
      bgcolor: alpha(color, 0.1),
      border: 1,
      borderColor: alpha(color, 0.3),
    }}
  />
);

/**
 * A release's version where releases are named (device pages, the fleet's releases card, pickers):
 * a draft shows its semver and a Draft flag (its raw version carries balena's creation time).
 */
export function ReleaseVersion(props: { release: { raw_version: string; is_final?: boolean } }) {
  const { t } = useTranslation();
  return (
    <>
      {versionText(props.release)}
      {isDraft(props.release) ? (
        <Box component="span" sx={{ ml: 0.75, display: "inline-flex", verticalAlign: "middle" }}>
          {flag(t("releases.draft"), statusColors.configuring)}
        </Box>
      ) : null}
    </>
  );
}

/** Small flags next to a release: draft and invalidated (spec 2 §4: an invalidated release is flagged). */
export function ReleaseFlags(props: { release: { is_final: boolean; is_invalidated: boolean } }) {
  const { t } = useTranslation();
  return (
    <Box component="span" sx={{ display: "inline-flex", gap: 0.5 }}>
      {props.release.is_final ? null : flag(t("releases.draft"), statusColors.configuring)}
      {props.release.is_invalidated ? flag(t("releases.invalidated"), statusColors.disconnected) : null}
    </Box>
  );
}
