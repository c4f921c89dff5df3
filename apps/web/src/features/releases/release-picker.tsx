import Box from "@mui/material/Box";
import Chip from "@mui/material/Chip";
import MenuItem from "@mui/material/MenuItem";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useTranslation } from "react-i18next";
import { formatDate } from "../../lib/format.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { type PickerRelease, usePickerReleases } from "./data.ts";
import { releaseLabel, versionText } from "./model.ts";

/** The special entries: "Track latest" for fleets, "No release" (the fleet's release) for devices (decision 5). */
export const TRACK_LATEST = "latest";
export const TRACK_FLEET = "track";

export interface CurrentRelease {
  id: number;
  commit: string;
  raw_version: string;
  is_invalidated?: boolean;
}

/** The picker's entries: the special one, the selectable releases, and the current choice when it is no longer selectable. */
export function pickerEntries(releases: readonly PickerRelease[], current: CurrentRelease | undefined) {
  const stale = current !== undefined && !releases.some((release) => release.id === current.id) ? current : undefined;
  return { releases, stale };
}

/**
 * A release picker (spec 2 §4 "Release rules", §7 "Releases"): successful, valid releases of
 * the fleet with their build date, known issues and tags; "Track latest" for a fleet, "No
 * release" (run the fleet's release) for a device. A current release that was invalidated since
 * shows flagged and cannot be chosen again.
 */
export function ReleasePicker(props: {
  fleetId: number;
  kind: "fleet" | "device";
  label: string;
  value: string;
  onChange: (value: string) => void;
  current?: CurrentRelease | undefined;
  disabled?: boolean;
  fullWidth?: boolean;
  sx?: object;
}) {
  const { t } = useTranslation();
  const picker = usePickerReleases(props.fleetId);
  const { releases, stale } = pickerEntries(picker.data ?? [], props.current);
  const special = props.kind === "fleet" ? TRACK_LATEST : TRACK_FLEET;
  const labelOf = (value: unknown) => {
    if (value === special)
      return props.kind === "fleet" ? t("releases.picker.track_latest") : t("releases.picker.no_release");
    const release =
      releases.find((r) => String(r.id) === value) ?? (stale && String(stale.id) === value ? stale : undefined);
    return release ? releaseLabel(release) : "";
  };
  return (
    <TextField
      select
      size="small"
      fullWidth={props.fullWidth ?? true}
      label={props.label}
      value={props.value}
      disabled={props.disabled}
      onChange={(event) => props.onChange(event.target.value)}
      sx={props.sx}
      slotProps={{ select: { renderValue: labelOf, MenuProps: { slotProps: { paper: { sx: { maxHeight: 420 } } } } } }}
    >
      <MenuItem value={special}>
        <Box>
          <Typography variant="body2" sx={{ fontWeight: 600 }}>
            {props.kind === "fleet" ? t("releases.picker.track_latest") : t("releases.picker.no_release")}
          </Typography>
          <Typography variant="caption" color="text.secondary">
            {props.kind === "fleet" ? t("releases.picker.track_latest_hint") : t("releases.picker.track_fleet_hint")}
          </Typography>
        </Box>
      </MenuItem>
      {stale ? (
        <MenuItem value={String(stale.id)} disabled>
          <Box sx={{ display: "flex", alignItems: "center", gap: 1 }}>
            <Typography variant="body2">{releaseLabel(stale)}</Typography>
            {stale.is_invalidated ? (
              <Chip
                size="small"
                color="error"
                variant="outlined"
                label={t("releases.picker.invalidated")}
                sx={{ height: 18, fontSize: 11 }}
              />
            ) : null}
          </Box>
        </MenuItem>
      ) : null}
      {releases.map((release) => (
        <MenuItem
          key={release.id}
          value={String(release.id)}
          sx={{ alignItems: "flex-start" }}
          // Read as "1.2.3 (abcdef1)", then its known issues.
          aria-label={[
            releaseLabel(release),
            release.known_issue_list ? t("releases.picker.known_issues", { text: release.known_issue_list }) : "",
          ]
            .filter(Boolean)
            .join(". ")}
        >
          <Box sx={{ minWidth: 0, maxWidth: 520 }}>
            <Box sx={{ display: "flex", alignItems: "baseline", gap: 1 }}>
              <Typography variant="body2" sx={{ fontWeight: 600 }}>
                {versionText(release)}
              </Typography>
              <Typography variant="caption" sx={{ fontFamily: MONO_FONT_STACK, color: "text.secondary" }}>
                {release.commit.slice(0, 7)}
              </Typography>
              {release.end_timestamp ? (
                <Typography variant="caption" color="text.secondary">
                  {t("releases.picker.built", { date: formatDate(release.end_timestamp) })}
                </Typography>
              ) : null}
            </Box>
            {release.known_issue_list ? (
              <Typography variant="caption" color="warning.main" sx={{ display: "block", whiteSpace: "normal" }}>
                {t("releases.picker.known_issues", { text: release.known_issue_list })}
              </Typography>
            ) : null}
            {release.release_tag.length > 0 ? (
              <Box sx={{ display: "flex", flexWrap: "wrap", gap: 0.5, mt: 0.5 }}>
                {release.release_tag.map((tag) => (
                  <Chip
                    key={tag.id}
                    size="small"
                    label={tag.value ? `${tag.tag_key}: ${tag.value}` : tag.tag_key}
                    sx={{ height: 18, fontSize: 11 }}
                  />
                ))}
              </Box>
            ) : null}
          </Box>
        </MenuItem>
      ))}
    </TextField>
  );
}
