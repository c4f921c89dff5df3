import KeyboardArrowDown from "@mui/icons-material/KeyboardArrowDown";
import KeyboardArrowRight from "@mui/icons-material/KeyboardArrowRight";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Collapse from "@mui/material/Collapse";
import IconButton from "@mui/material/IconButton";
import LinearProgress from "@mui/material/LinearProgress";
import Paper from "@mui/material/Paper";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useParams } from "@tanstack/react-router";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { ErrorPage } from "../../components/error-page.tsx";
import { TextLink } from "../../components/links.tsx";
import { PageHeader } from "../../components/page.tsx";
import { errorText } from "../../lib/errors.ts";
import { formatDate, formatFullDate } from "../../lib/format.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { useCancelCommandRun, useCommandRunLive } from "./data.ts";
import { durationText, type RunView, runIsOver, sortedDevices } from "./model.ts";
import { DeviceStateChip, RunStatusChip, SummaryTiles, useSummarySentence, useTargetText } from "./parts.tsx";

type ViewDevice = RunView["devices"][number];

/** Runs of up to this many devices show every output open; larger ones start folded. */
const OPEN_OUTPUTS_UP_TO = 20;

function Output({ device }: { device: ViewDevice }) {
  const { t } = useTranslation();
  if (device.pieces.length === 0) {
    return (
      <Typography variant="body2" color="text.secondary" sx={{ fontStyle: "italic" }}>
        {t("commands.run.no_output")}
      </Typography>
    );
  }
  return (
    <Box
      component="pre"
      aria-label={t("commands.run.output_of", { device: device.name })}
      sx={{
        m: 0,
        p: 1.5,
        maxHeight: 320,
        overflow: "auto",
        borderRadius: 1,
        bgcolor: "action.hover",
        fontFamily: MONO_FONT_STACK,
        fontSize: 13,
        lineHeight: 1.5,
        whiteSpace: "pre-wrap",
        wordBreak: "break-all",
      }}
    >
      {device.truncated ? (
        <Box component="span" sx={{ color: "text.secondary", display: "block" }}>
          {t("commands.run.truncated")}
        </Box>
      ) : null}
      {device.pieces.map((piece, index) => (
        <Box
          // Pieces only ever grow at the end: the index is stable.
          // biome-ignore lint/suspicious/noArrayIndexKey: see above
          key={index}
          component="span"
          data-stream={piece.stream ?? "output"}
          sx={piece.stream === "stderr" ? { color: "error.main" } : undefined}
        >
          {piece.text}
        </Box>
      ))}
    </Box>
  );
}

function DeviceRow(props: { device: ViewDevice; open: boolean; onToggle: () => void }) {
  const { t } = useTranslation();
  const { device } = props;
  const label = props.open ? t("commands.run.hide_output") : t("commands.run.show_output");
  return (
    <>
      <TableRow sx={{ "& > td": { borderBottom: props.open ? 0 : undefined } }}>
        <TableCell padding="checkbox">
          <Tooltip title={label}>
            <IconButton size="small" onClick={props.onToggle} aria-expanded={props.open} aria-label={label}>
              {props.open ? <KeyboardArrowDown fontSize="small" /> : <KeyboardArrowRight fontSize="small" />}
            </IconButton>
          </Tooltip>
        </TableCell>
        <TableCell>
          <TextLink to={`/devices/${device.uuid}` as "/"} underline="hover" sx={{ fontWeight: 600 }}>
            {device.name || device.uuid.slice(0, 7)}
          </TextLink>
        </TableCell>
        <TableCell>
          <DeviceStateChip state={device.state} />
        </TableCell>
        <TableCell align="right" sx={{ fontVariantNumeric: "tabular-nums" }}>
          {device.exit_code ?? "–"}
        </TableCell>
        <TableCell align="right" sx={{ fontVariantNumeric: "tabular-nums", whiteSpace: "nowrap" }}>
          {durationText(device.duration_ms)}
        </TableCell>
        <TableCell sx={{ color: "text.secondary", pl: 4 }}>{device.reason ?? ""}</TableCell>
      </TableRow>
      <TableRow>
        <TableCell colSpan={6} sx={{ py: 0, ...(props.open ? {} : { borderBottom: 0 }) }}>
          <Collapse in={props.open} unmountOnExit>
            <Box sx={{ pb: 1.5, pl: 7 }}>
              <Output device={device} />
            </Box>
          </Collapse>
        </TableCell>
      </TableRow>
    </>
  );
}

function DeviceTable({ run }: { run: RunView }) {
  const { t } = useTranslation();
  const [toggled, setToggled] = useState<ReadonlySet<number>>(new Set());
  // A device that never ran (offline, refused) has nothing to show: its output starts folded.
  const openByDefault = run.devices.length <= OPEN_OUTPUTS_UP_TO;
  const startsOpen = (device: ViewDevice) => openByDefault && (device.pieces.length > 0 || device.started_at !== null);
  const isOpen = (id: number) => {
    const device = run.devices.find((d) => d.id === id);
    return toggled.has(id) !== (device ? startsOpen(device) : false);
  };
  const toggle = (id: number) =>
    setToggled((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const allOpen = run.devices.every((device) => isOpen(device.id));
  return (
    <Paper variant="outlined" component="section" aria-label={t("commands.run.devices")}>
      <Box sx={{ display: "flex", alignItems: "center", px: 2, py: 1.25, gap: 1 }}>
        <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600 }}>
          {t("commands.run.devices")}
        </Typography>
        <Typography variant="body2" color="text.secondary">
          {t("commands.run.stderr_note")}
        </Typography>
        <Box sx={{ flex: 1 }} />
        <Button
          size="small"
          onClick={() => setToggled(new Set(run.devices.filter((d) => startsOpen(d) === allOpen).map((d) => d.id)))}
        >
          {allOpen ? t("commands.run.collapse_all") : t("commands.run.expand_all")}
        </Button>
      </Box>
      {/* Fixed widths: the columns stay put while states and durations change. */}
      <Table size="small" aria-label={t("commands.run.devices")} sx={{ tableLayout: "fixed" }}>
        <TableHead>
          <TableRow>
            <TableCell padding="checkbox" sx={{ width: 56 }} />
            <TableCell sx={{ width: "24%" }}>{t("commands.columns.device")}</TableCell>
            <TableCell sx={{ width: 210 }}>{t("commands.columns.state")}</TableCell>
            <TableCell align="right" sx={{ width: 90 }}>
              {t("commands.columns.exit_code")}
            </TableCell>
            <TableCell align="right" sx={{ width: 100 }}>
              {t("commands.columns.duration")}
            </TableCell>
            <TableCell sx={{ pl: 4 }}>{t("commands.columns.reason")}</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {sortedDevices(run.devices).map((device) => (
            <DeviceRow key={device.id} device={device} open={isOpen(device.id)} onToggle={() => toggle(device.id)} />
          ))}
        </TableBody>
      </Table>
    </Paper>
  );
}

function CancelButton({
  run,
  onCancelled,
}: {
  run: RunView;
  onCancelled: (next: Parameters<ReturnType<typeof useCommandRunLive>["applySnapshot"]>[0]) => void;
}) {
  const { t } = useTranslation();
  const cancel = useCancelCommandRun(run.id, run.fleet ?? undefined);
  const [confirming, setConfirming] = useState(false);
  return (
    <>
      <Button variant="outlined" color="error" onClick={() => setConfirming(true)}>
        {t("commands.run.cancel")}
      </Button>
      <ConfirmDialog
        open={confirming}
        danger
        title={t("commands.run.cancel_title")}
        text={t("commands.run.cancel_text")}
        confirmLabel={t("commands.run.cancel")}
        busy={cancel.isPending}
        {...(cancel.error ? { error: errorText(cancel.error) } : {})}
        onConfirm={() =>
          cancel.mutate(undefined, {
            onSuccess: (next) => {
              setConfirming(false);
              onCancelled(next);
            },
          })
        }
        onClose={() => {
          setConfirming(false);
          cancel.reset();
        }}
      />
    </>
  );
}

/**
 * `/fleets/{id}/commands/{runId}` (docs/bulk-commands.md): the command, its target, who started
 * it and when, its status and counts, and each device's state, exit code, duration and output,
 * followed live on the run's event stream.
 */
export function CommandRunPage() {
  const { t } = useTranslation();
  const targetText = useTargetText();
  const sentence = useSummarySentence();
  const params = useParams({ strict: false }) as { runId?: string };
  const runId = Number(params.runId);
  const live = useCommandRunLive(Number.isInteger(runId) ? runId : undefined);
  const run = live.run;
  if (live.error) return <ErrorPage error={live.error} />;
  if (!run) return <LinearProgress aria-label={t("commands.run.loading")} />;
  const over = runIsOver(run);
  return (
    <>
      <PageHeader
        title={t("commands.run.title", { id: run.id })}
        description={t("commands.run.description", {
          target: targetText(run.target),
          count: run.summary.total,
        })}
        actions={over ? undefined : <CancelButton run={run} onCancelled={live.applySnapshot} />}
      />
      <Paper variant="outlined" component="section" aria-label={t("commands.run.overview")} sx={{ p: 2.5, mb: 2 }}>
        <Box
          component="pre"
          aria-label={t("commands.form.command")}
          sx={{
            m: 0,
            mb: 2,
            px: 1.5,
            py: 1,
            borderRadius: 1,
            bgcolor: "action.hover",
            fontFamily: MONO_FONT_STACK,
            fontSize: 14,
            whiteSpace: "pre-wrap",
            wordBreak: "break-all",
          }}
        >
          <Box component="span" sx={{ color: "text.secondary", userSelect: "none" }}>
            ${" "}
          </Box>
          {run.command}
        </Box>
        <Box sx={{ display: "flex", alignItems: "center", gap: 1.5, flexWrap: "wrap", mb: 2 }}>
          <RunStatusChip status={run.status} allSucceeded={run.summary.succeeded === run.summary.total} />
          <Typography variant="body2" color="text.secondary">
            {t("commands.run.started_by", { user: run.created_by_username ?? t("commands.run.someone") })}{" "}
            <Tooltip title={formatFullDate(run.created_at)}>
              <span>{formatDate(run.created_at)}</span>
            </Tooltip>
            {" · "}
            {t("commands.run.limits", { timeout: run.timeout_s, concurrency: run.concurrency })}
            {run.queue_window_s > 0
              ? ` · ${t("commands.run.queue_window", { minutes: Math.round(run.queue_window_s / 60) })}`
              : ""}
          </Typography>
          {!over && !live.live ? (
            <Typography variant="body2" color="warning.main">
              {t("commands.run.reconnecting")}
            </Typography>
          ) : null}
        </Box>
        <Typography variant="body1" sx={{ fontWeight: 600, mb: 1 }} data-testid="run-summary">
          {t("commands.run.summary", { count: run.summary.total, counts: sentence(run.summary) })}
        </Typography>
        {!over ? (
          <LinearProgress
            variant="determinate"
            value={run.summary.total > 0 ? ((run.summary.total - run.summary.pending) / run.summary.total) * 100 : 0}
            aria-label={t("commands.run.progress")}
            sx={{ height: 6, borderRadius: 3, mb: 1.5 }}
          />
        ) : null}
        <SummaryTiles summary={run.summary} />
        {run.status === "cancelled" ? (
          <Alert severity="info" sx={{ mt: 2 }}>
            {t("commands.run.cancelled_note")}
          </Alert>
        ) : null}
      </Paper>
      <DeviceTable run={run} />
    </>
  );
}
