import Box from "@mui/material/Box";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useTranslation } from "react-i18next";
import { type StatusKind, statusColors } from "../../theme.ts";
import type { StatusCounts } from "../fleet-access/data.ts";

/** Device overall statuses in the order people scan them (spec 2 §3, §4). */
export const DEVICE_STATUSES = [
  "operational",
  "updating",
  "configuring",
  "post-provisioning",
  "reduced-functionality",
  "disconnected",
  "inactive",
] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

const COLOR_OF: Record<DeviceStatus, StatusKind> = {
  operational: "operational",
  updating: "updating",
  configuring: "configuring",
  "post-provisioning": "postProvisioning",
  "reduced-functionality": "reducedFunctionality",
  disconnected: "disconnected",
  inactive: "inactive",
};
export const statusColor = (status: DeviceStatus) => statusColors[COLOR_OF[status]];

/** The counts of each status, zero when absent, and their total. */
export function statusBreakdown(counts: StatusCounts | null | undefined) {
  const rows = DEVICE_STATUSES.map((status) => ({ status, count: counts?.[status] ?? 0 }));
  return { rows, total: rows.reduce((sum, row) => sum + row.count, 0) };
}

export function StatusDot({ status }: { status: DeviceStatus }) {
  return (
    <Box
      component="span"
      aria-hidden
      sx={{ width: 8, height: 8, borderRadius: "50%", bgcolor: statusColor(status), flexShrink: 0 }}
    />
  );
}

/** A thin stacked bar of the device statuses (grey track when there are no devices). */
export function StatusBar({ counts, height = 6 }: { counts: StatusCounts | null | undefined; height?: number }) {
  const { t } = useTranslation();
  const { rows, total } = statusBreakdown(counts);
  return (
    <Box
      sx={{ display: "flex", height, borderRadius: height, overflow: "hidden", bgcolor: "action.hover", width: "100%" }}
    >
      {rows
        .filter((row) => row.count > 0)
        .map((row) => (
          <Tooltip key={row.status} title={`${t(`fleets.status.${row.status}`)}: ${row.count}`} disableInteractive>
            <Box sx={{ width: `${(row.count / total) * 100}%`, bgcolor: statusColor(row.status) }} />
          </Tooltip>
        ))}
    </Box>
  );
}

/** Non-zero status counts as dot + number + label, for lists and cards. */
export function StatusCountsInline({ counts }: { counts: StatusCounts | null | undefined }) {
  const { t } = useTranslation();
  const { rows } = statusBreakdown(counts);
  const shown = rows.filter((row) => row.count > 0);
  if (shown.length === 0)
    return (
      <Typography variant="body2" color="text.secondary">
        {t("fleets.no_devices")}
      </Typography>
    );
  return (
    <Box sx={{ display: "flex", flexWrap: "wrap", columnGap: 1.5, rowGap: 0.5 }}>
      {shown.map((row) => (
        <Box key={row.status} sx={{ display: "inline-flex", alignItems: "center", gap: 0.75 }}>
          <StatusDot status={row.status} />
          <Typography variant="body2" sx={{ fontVariantNumeric: "tabular-nums", fontWeight: 600 }}>
            {row.count}
          </Typography>
          <Typography variant="body2" color="text.secondary">
            {t(`fleets.status.${row.status}`)}
          </Typography>
        </Box>
      ))}
    </Box>
  );
}
