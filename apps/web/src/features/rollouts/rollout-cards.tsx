import type { RolloutStatus, WaveState } from "@flotilla/domain";
import Box from "@mui/material/Box";
import Chip from "@mui/material/Chip";
import LinearProgress from "@mui/material/LinearProgress";
import Typography from "@mui/material/Typography";
import { useTranslation } from "react-i18next";
import { TextLink } from "../../components/links.tsx";
import { Card } from "../orgs/ui.tsx";
import { type RolloutRow, useFleetRollouts, useReleaseRollouts } from "./data.ts";
import { releaseName, rolloutProgress } from "./model.ts";
import { RolloutRecovery } from "./recovery.tsx";

const STATUS_COLOR: Record<RolloutStatus, "info" | "warning" | "error" | "success" | "default"> = {
  running: "info",
  paused: "warning",
  halted: "error",
  completed: "success",
  aborted: "default",
};
export const WAVE_COLOR: Record<WaveState, "info" | "error" | "success" | "default" | "warning"> = {
  pending: "default",
  active: "info",
  passed: "success",
  failed: "error",
  rolled_back: "warning",
};
export function RolloutStatusChip({ status }: { status: RolloutStatus }) {
  const { t } = useTranslation();
  return <Chip size="small" color={STATUS_COLOR[status]} label={t(`rollouts.status.${status}`)} />;
}

export const rolloutPath = (fleetId: number, rolloutId: number) => `/fleets/${fleetId}/rollouts/${rolloutId}`;

/** A server reason ("wave 1 failed: …") as a sentence. */
export const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The rollout's progress in one line: releases, wave, a bar; for the summaries and the list. */
export function RolloutProgress({ rollout, fleetId }: { rollout: RolloutRow; fleetId: number }) {
  const { t } = useTranslation();
  const progress = rolloutProgress(rollout);
  return (
    <Box>
      <Box sx={{ display: "flex", alignItems: "center", gap: 1, flexWrap: "wrap" }}>
        <RolloutStatusChip status={rollout.status} />
        <Typography variant="body2">
          {t("rollouts.from_to", {
            from: releaseName(rollout.from__release[0]),
            to: releaseName(rollout.to__release[0]),
          })}
        </Typography>
        <Typography variant="body2" color="text.secondary">
          {t("rollouts.wave_of", {
            wave: Math.min(rollout.current_wave + 1, rollout.wave_count),
            count: rollout.wave_count,
          })}
        </Typography>
        <Box sx={{ flex: 1 }} />
        <TextLink to={rolloutPath(fleetId, rollout.id) as "/"} underline="hover" variant="body2">
          {t("rollouts.view")}
        </TextLink>
      </Box>
      <Box sx={{ display: "flex", alignItems: "center", gap: 1, mt: 1 }}>
        <LinearProgress
          variant="determinate"
          value={progress}
          color={rollout.status === "halted" ? "error" : "primary"}
          sx={{ flex: 1, height: 6, borderRadius: 3 }}
          aria-label={t("rollouts.progress")}
        />
        <Typography variant="body2" color="text.secondary" sx={{ minWidth: 40, textAlign: "right" }}>
          {progress} %
        </Typography>
      </Box>
      {rollout.reason && rollout.status !== "running" ? (
        <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
          {sentence(rollout.reason)}
        </Typography>
      ) : null}
    </Box>
  );
}

/**
 * The fleet summary's card: the rollout in progress (running, paused or halted), or the last one
 * when it was aborted and the fleet still names its release; with what to do after a failure.
 */
export function FleetRolloutCard({ fleetId, canSteer }: { fleetId: number; canSteer: boolean }) {
  const { t } = useTranslation();
  const rollouts = useFleetRollouts(fleetId, { top: 1, poll: 10_000 });
  const latest = rollouts.data?.[0];
  if (!latest?.is_in_effect || latest.status === "completed") return null;
  const title = t(latest.status === "aborted" ? "rollouts.card_title_aborted" : "rollouts.card_title");
  return (
    <Card title={title} label={title}>
      <RolloutProgress rollout={latest} fleetId={fleetId} />
      <RolloutRecovery rollout={latest} fleetId={fleetId} canSteer={canSteer} />
    </Card>
  );
}

/** The release summary's card: the rollout bringing this release, while it is in progress. */
export function ReleaseRolloutCard({ releaseId, fleetId }: { releaseId: number; fleetId: number }) {
  const { t } = useTranslation();
  const rollouts = useReleaseRollouts(releaseId);
  const latest = rollouts.data?.[0];
  if (!latest?.is_in_effect || latest.status === "completed") return null;
  const title = t(latest.status === "aborted" ? "rollouts.card_title_aborted" : "rollouts.card_title");
  return (
    <Card title={title} label={title}>
      <RolloutProgress rollout={latest} fleetId={fleetId} />
    </Card>
  );
}
