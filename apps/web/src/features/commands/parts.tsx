import type { CommandDeviceState, CommandRunStatus, CommandRunSummary, CommandTarget } from "@flotilla/domain";
import Box from "@mui/material/Box";
import Chip, { type ChipProps } from "@mui/material/Chip";
import Typography from "@mui/material/Typography";
import { useTranslation } from "react-i18next";
import { type SummaryCount, shownCounts } from "./model.ts";

/** Small pieces the run page and the runs list share. */

const STATE_COLOR: Record<CommandDeviceState, ChipProps["color"]> = {
  queued: "default",
  waiting_online: "default",
  running: "info",
  succeeded: "success",
  failed: "error",
  timed_out: "warning",
  offline: "default",
  refused: "default",
  cancelled: "default",
};

export function DeviceStateChip({ state }: { state: CommandDeviceState }) {
  const { t } = useTranslation();
  const open = state === "queued" || state === "waiting_online";
  return (
    <Chip
      size="small"
      color={STATE_COLOR[state]}
      variant={open ? "outlined" : "filled"}
      label={t(`commands.state.${state}`)}
    />
  );
}

const STATUS_COLOR: Record<CommandRunStatus, ChipProps["color"]> = {
  running: "info",
  finished: "success",
  cancelled: "default",
};

/** A finished run is green only when every device succeeded; else the counts tell what went wrong. */
export function RunStatusChip({ status, allSucceeded }: { status: CommandRunStatus; allSucceeded: boolean }) {
  const { t } = useTranslation();
  const color = status === "finished" && !allSucceeded ? "warning" : STATUS_COLOR[status];
  return <Chip size="small" color={color} label={t(`commands.status.${status}`)} />;
}

export function useTargetText() {
  const { t } = useTranslation();
  return (target: CommandTarget) =>
    target === "host" ? t("commands.target.host") : t("commands.target.service", { service: target.service });
}

const COUNT_COLOR: Record<SummaryCount, string> = {
  succeeded: "success.main",
  failed: "error.main",
  timed_out: "warning.main",
  offline: "text.secondary",
  refused: "text.secondary",
  cancelled: "text.secondary",
  pending: "info.main",
};

/** "5 succeeded · 0 failed · 0 timed out · 1 offline", the outcome of a run in one line. */
export function useSummarySentence() {
  const { t } = useTranslation();
  return (summary: CommandRunSummary) =>
    shownCounts(summary)
      .map(({ key, count }) => t(`commands.count.${key}`, { count }))
      .join(" · ");
}

/** The counts as tiles: the number large, what it counts under it. */
export function SummaryTiles({ summary }: { summary: CommandRunSummary }) {
  const { t } = useTranslation();
  return (
    <Box sx={{ display: "grid", gridTemplateColumns: "repeat(auto-fill, minmax(120px, 1fr))", gap: 1 }}>
      {shownCounts(summary).map(({ key, count }) => (
        <Box
          key={key}
          data-testid={`count-${key}`}
          sx={{ border: 1, borderColor: "divider", borderRadius: 1, px: 1.5, py: 1, textAlign: "right" }}
        >
          <Typography
            variant="h5"
            component="p"
            sx={{ fontWeight: 600, color: count > 0 ? COUNT_COLOR[key] : "text.disabled", lineHeight: 1.2 }}
          >
            {count}
          </Typography>
          <Typography variant="caption" color="text.secondary">
            {t(`commands.count_label.${key}`)}
          </Typography>
        </Box>
      ))}
    </Box>
  );
}
