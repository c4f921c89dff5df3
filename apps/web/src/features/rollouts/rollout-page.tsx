import { durationWords } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import LinearProgress from "@mui/material/LinearProgress";
import Paper from "@mui/material/Paper";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Typography from "@mui/material/Typography";
import { useParams } from "@tanstack/react-router";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { TextLink } from "../../components/links.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { errorText } from "../../lib/errors.ts";
import { formatDate } from "../../lib/format.ts";
import { showToast } from "../../lib/toasts.ts";
import { usePageFleet } from "../fleets/summary-page.tsx";
import {
  type RolloutControl,
  type RolloutDeviceRow,
  type RolloutRow,
  type RolloutWaveRow,
  useFleetRollouts,
  useRollout,
  useRolloutControl,
} from "./data.ts";
import {
  allowedControls,
  DEVICE_STATES,
  type DeviceState,
  deviceState,
  releaseName,
  rolloutProgress,
  soakLeft,
  stateCounts,
} from "./model.ts";
import { RolloutRecovery } from "./recovery.tsx";
import { RolloutProgress, RolloutStatusChip, sentence, WAVE_COLOR } from "./rollout-cards.tsx";

const STATE_COLOR: Record<DeviceState, string> = {
  waiting: "text.disabled",
  downloading: "info.main",
  installing: "secondary.main",
  healthy: "success.main",
  failed: "error.main",
};

function StateCounts({ counts }: { counts: Record<DeviceState, number> }) {
  const { t } = useTranslation();
  return (
    <Box sx={{ display: "flex", gap: 2, flexWrap: "wrap" }}>
      {DEVICE_STATES.map((state) => (
        <Box key={state} sx={{ display: "flex", alignItems: "center", gap: 0.75 }} data-testid={`count-${state}`}>
          <Box sx={{ width: 10, height: 10, borderRadius: "50%", bgcolor: STATE_COLOR[state] }} />
          <Typography variant="body2">
            {t(`rollouts.device_state.${state}`)}: <strong>{counts[state]}</strong>
          </Typography>
        </Box>
      ))}
    </Box>
  );
}

function WaveCard(props: { wave: RolloutWaveRow; rollout: RolloutRow; devices: RolloutDeviceRow[]; current: boolean }) {
  const { t } = useTranslation();
  const { wave, rollout } = props;
  const [open, setOpen] = useState(props.current || wave.state === "failed" || wave.state === "rolled_back");
  const counts = stateCounts(props.devices, wave);
  const policy = rollout.policy.waves[wave.wave_index];
  const soak = rollout.status === "running" && policy ? soakLeft(wave, policy.soak_seconds, Date.now()) : undefined;
  const name = wave.name || t("rollouts.wave_number", { number: wave.wave_index + 1 });
  const sorted = [...props.devices].sort(
    (a, b) =>
      DEVICE_STATES.indexOf(deviceState(b, wave)) - DEVICE_STATES.indexOf(deviceState(a, wave)) ||
      (a.device[0]?.device_name ?? "").localeCompare(b.device[0]?.device_name ?? ""),
  );
  return (
    <Paper
      variant="outlined"
      component="section"
      aria-label={name}
      sx={{ p: 2, borderLeft: 4, borderLeftColor: props.current ? "primary.main" : "divider" }}
    >
      <Box sx={{ display: "flex", alignItems: "center", gap: 1, flexWrap: "wrap" }}>
        <Typography variant="subtitle1" component="h3" sx={{ fontWeight: 600 }}>
          {wave.wave_index + 1}. {name}
        </Typography>
        <Chip size="small" color={WAVE_COLOR[wave.state]} label={t(`rollouts.wave_state.${wave.state}`)} />
        <Typography variant="body2" color="text.secondary">
          {t("rollouts.device_count", { count: wave.device_count })}
        </Typography>
        {policy ? (
          <Typography variant="body2" color="text.secondary">
            ·{" "}
            {t("rollouts.gates", {
              healthy: Math.round(policy.healthy_share * 100),
              halt: Math.round(policy.halt_failure_ratio * 100),
              soak: policy.soak_seconds,
            })}
            {policy.timeout_seconds > 0
              ? ` · ${t("rollouts.timeout", { duration: durationWords(policy.timeout_seconds) })}`
              : ""}
            {wave.is_soak_skipped ? ` · ${t("rollouts.soak_skipped")}` : ""}
          </Typography>
        ) : null}
        <Box sx={{ flex: 1 }} />
        {props.devices.length > 0 ? (
          <Button size="small" onClick={() => setOpen(!open)} aria-expanded={open}>
            {open ? t("rollouts.hide_devices") : t("rollouts.show_devices")}
          </Button>
        ) : null}
      </Box>
      <Box sx={{ mt: 1 }}>
        <StateCounts counts={counts} />
      </Box>
      {soak !== undefined ? (
        <Typography variant="body2" color="success.main" sx={{ mt: 1 }}>
          {soak > 0 ? t("rollouts.soak_left", { duration: durationWords(soak) }) : t("rollouts.soak_done")}
        </Typography>
      ) : null}
      {wave.reason ? (
        <Typography
          variant="body2"
          color={wave.state === "failed" || wave.state === "rolled_back" ? "error" : "text.secondary"}
          sx={{ mt: 1 }}
        >
          {sentence(wave.reason)}
        </Typography>
      ) : null}
      {open && sorted.length > 0 ? (
        <Table size="small" sx={{ mt: 1 }} aria-label={t("rollouts.devices_of", { wave: name })}>
          <TableHead>
            <TableRow>
              <TableCell>{t("rollouts.columns.device")}</TableCell>
              <TableCell>{t("rollouts.columns.state")}</TableCell>
              <TableCell>{t("rollouts.columns.reason")}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {sorted.map((row) => {
              const device = row.device[0];
              const state = deviceState(row, wave);
              return (
                <TableRow key={row.id}>
                  <TableCell>
                    {device ? (
                      <TextLink to={`/devices/${device.uuid}` as "/"} underline="hover">
                        {device.device_name}
                      </TextLink>
                    ) : (
                      "—"
                    )}
                  </TableCell>
                  <TableCell>
                    <Box sx={{ display: "flex", alignItems: "center", gap: 0.75 }}>
                      <Box sx={{ width: 8, height: 8, borderRadius: "50%", bgcolor: STATE_COLOR[state] }} />
                      {t(`rollouts.device_state.${state}`)}
                    </Box>
                  </TableCell>
                  <TableCell sx={{ color: "text.secondary" }}>
                    {row.health === "healthy"
                      ? ""
                      : wave.state === "rolled_back" && row.health !== "failed"
                        ? t("rollouts.back_on_previous")
                        : (row.reason ?? "")}
                  </TableCell>
                </TableRow>
              );
            })}
          </TableBody>
        </Table>
      ) : null}
    </Paper>
  );
}

type Confirmed = "abort" | "promote";
const isConfirmed = (action: RolloutControl): action is Confirmed => action === "abort" || action === "promote";

function Controls({ rollout, fleetId, canSteer }: { rollout: RolloutRow; fleetId: number; canSteer: boolean }) {
  const { t } = useTranslation();
  const control = useRolloutControl(rollout.id, fleetId);
  const [confirm, setConfirm] = useState<Confirmed>();
  const allowed = allowedControls(rollout);
  const run = (action: RolloutControl) =>
    control.mutate(action, {
      onSuccess: () => {
        setConfirm(undefined);
        showToast("success", t(`rollouts.controls.done.${action}`));
      },
    });
  if (!canSteer) return null;
  const buttons: RolloutControl[] = ["pause", "resume", "skip-soak", "promote", "abort"];
  return (
    <>
      <Box sx={{ display: "flex", gap: 1, flexWrap: "wrap" }}>
        {buttons.map((action) => (
          <Button
            key={action}
            variant={action === "abort" ? "outlined" : "outlined"}
            color={action === "abort" ? "error" : "primary"}
            disabled={!allowed[action] || control.isPending}
            loading={control.isPending && control.variables === action && !confirm}
            onClick={() => (isConfirmed(action) ? setConfirm(action) : run(action))}
          >
            {t(`rollouts.controls.${action}`)}
          </Button>
        ))}
      </Box>
      {control.error && !confirm ? (
        <Alert severity="error" sx={{ mt: 1.5 }}>
          {errorText(control.error)}
        </Alert>
      ) : null}
      <ConfirmDialog
        open={confirm !== undefined}
        danger={confirm === "abort"}
        title={confirm ? t(`rollouts.controls.confirm_title.${confirm}`) : ""}
        text={confirm ? t(`rollouts.controls.confirm_text.${confirm}`) : ""}
        confirmLabel={confirm ? t(`rollouts.controls.${confirm}`) : ""}
        busy={control.isPending}
        {...(control.error && confirm ? { error: errorText(control.error) } : {})}
        onConfirm={() => confirm && run(confirm)}
        onClose={() => {
          setConfirm(undefined);
          control.reset();
        }}
      />
    </>
  );
}

/**
 * `/fleets/{id}/rollouts/{rolloutId}` (issue #23): the rollout's waves as a timeline with their
 * devices' counts per state, each wave's devices with the reason when unhealthy, and the controls
 * for those who may steer it (rollout.update). Refreshes every few seconds.
 */
export function RolloutPage() {
  const { t } = useTranslation();
  const { fleet, fleetId, abilities } = usePageFleet();
  const params = useParams({ strict: false }) as { rolloutId?: string };
  const rolloutId = Number(params.rolloutId);
  const query = useRollout(Number.isInteger(rolloutId) ? rolloutId : undefined);
  const rollout = query.data;
  if (query.isError) return <Alert severity="error">{errorText(query.error)}</Alert>;
  if (query.isSuccess && !rollout) return <Alert severity="warning">{t("rollouts.not_found")}</Alert>;
  if (!rollout || !fleet) return <LinearProgress aria-label={t("rollouts.loading")} />;
  const waves = [...rollout.rollout_wave].sort((a, b) => a.wave_index - b.wave_index);
  const open = ["running", "paused", "halted"].includes(rollout.status);
  return (
    <>
      <PageHeader
        title={t("rollouts.title", { id: rollout.id })}
        description={t("rollouts.from_to", {
          from: releaseName(rollout.from__release[0]),
          to: releaseName(rollout.to__release[0]),
        })}
      />
      <Paper variant="outlined" sx={{ p: 2.5, mb: 2 }} component="section" aria-label={t("rollouts.overview")}>
        <Box sx={{ display: "flex", alignItems: "center", gap: 1.5, flexWrap: "wrap", mb: 1.5 }}>
          <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600 }}>
            {t("rollouts.status_label")}
          </Typography>
          <RolloutStatusChip status={rollout.status} />
          <Typography variant="body2" color="text.secondary">
            {t("rollouts.started", { date: formatDate(rollout.created_at) })}
            {rollout.ended_at ? ` · ${t("rollouts.ended", { date: formatDate(rollout.ended_at) })}` : ""}
          </Typography>
        </Box>
        {rollout.reason ? (
          <Alert
            severity={rollout.status === "halted" ? "error" : rollout.status === "completed" ? "success" : "info"}
            sx={{ mb: 1.5 }}
          >
            {sentence(rollout.reason)}
          </Alert>
        ) : null}
        <Box sx={{ display: "flex", alignItems: "center", gap: 1, mb: open && abilities.steerRollout ? 2 : 0 }}>
          <LinearProgress
            variant="determinate"
            value={rolloutProgress(rollout)}
            color={rollout.status === "halted" ? "error" : "primary"}
            sx={{ flex: 1, height: 8, borderRadius: 4 }}
            aria-label={t("rollouts.progress")}
          />
          <Typography variant="body2" sx={{ minWidth: 110, textAlign: "right" }} data-testid="rollout-progress">
            {t("rollouts.progress_value", { percent: rolloutProgress(rollout) })}
          </Typography>
        </Box>
        {open ? <Controls rollout={rollout} fleetId={fleetId} canSteer={abilities.steerRollout} /> : null}
        <RolloutRecovery rollout={rollout} fleetId={fleetId} canSteer={abilities.steerRollout} />
      </Paper>
      <Box
        sx={{ display: "grid", gap: 1.5 }}
        component="ol"
        aria-label={t("rollouts.waves")}
        style={{ listStyle: "none", padding: 0, margin: 0 }}
      >
        {waves.map((wave) => (
          <Box component="li" key={wave.id}>
            <WaveCard
              wave={wave}
              rollout={rollout}
              current={open && wave.wave_index === rollout.current_wave}
              devices={rollout.rollout_device.filter((row) => row.wave_index === wave.wave_index)}
            />
          </Box>
        ))}
      </Box>
    </>
  );
}

/** `/fleets/{id}/rollouts`: the fleet's rollouts, newest first. */
export function FleetRolloutsPage() {
  const { t } = useTranslation();
  const { fleet, fleetId } = usePageFleet();
  const rollouts = useFleetRollouts(fleetId);
  if (!fleet) return null;
  return (
    <>
      <PageHeader title={t("rollouts.list_title")} description={t("rollouts.list_text")} />
      {rollouts.isError ? <Alert severity="error">{errorText(rollouts.error)}</Alert> : null}
      {rollouts.isSuccess && rollouts.data.length === 0 ? (
        <EmptyState icon={null} title={t("rollouts.none")} text={t("rollouts.none_text")} />
      ) : null}
      <Box sx={{ display: "grid", gap: 1.5 }}>
        {rollouts.data?.map((rollout) => (
          <Paper key={rollout.id} variant="outlined" sx={{ p: 2 }}>
            <Typography variant="subtitle2" sx={{ fontWeight: 600, mb: 1 }}>
              {t("rollouts.title", { id: rollout.id })} · {formatDate(rollout.created_at)}
            </Typography>
            <RolloutProgress rollout={rollout} fleetId={fleetId} />
          </Paper>
        ))}
      </Box>
    </>
  );
}
