import {
  type CheckReport,
  checksNeedNewerOs,
  DIAGNOSTICS_POLL_MS,
  type DiagnosticsAction,
  type DiagnosticsState,
  diagnosticsRunning,
  HEALTH_CHECKS_POLL_MS,
  supervisorTargetStateVersion,
} from "@flotilla/domain";
import CheckCircleOutlined from "@mui/icons-material/CheckCircleOutlined";
import ErrorOutlined from "@mui/icons-material/ErrorOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import CircularProgress from "@mui/material/CircularProgress";
import Paper from "@mui/material/Paper";
import Tab from "@mui/material/Tab";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tabs from "@mui/material/Tabs";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { PageHeader } from "../../components/page.tsx";
import { errorText } from "../../lib/errors.ts";
import { formatDate } from "../../lib/format.ts";
import { type Device, usePageDevice } from "./data.ts";

/** While a run is in progress the report is read every second; otherwise at the spec's pace. */
const IN_PROGRESS_POLL_MS = 1000;
const POLL_MS: Record<DiagnosticsAction, number> = { checks: HEALTH_CHECKS_POLL_MS, diagnose: DIAGNOSTICS_POLL_MS };

/** The device actions service (spec 2 §7): the API itself unless FLOTILLA_DEVICE_ACTIONS_HOST names one. */
function useDiagnostics(device: Device, action: DiagnosticsAction) {
  const { sdk, config } = useServices();
  const baseUrl = config.deviceActionsHost ?? config.apiUrl;
  const url = `/v1/${encodeURIComponent(device.uuid)}/${action}`;
  const queryClient = useQueryClient();
  const queryKey = ["device", device.uuid, "diagnostics", action];
  const report = useQuery({
    queryKey,
    enabled: device.is_connected_to_vpn,
    queryFn: async () => (await sdk.request.send({ method: "GET", url, baseUrl })).body as CheckReport,
    refetchInterval: (query) => (diagnosticsRunning(query.state.data?.status) ? IN_PROGRESS_POLL_MS : POLL_MS[action]),
    refetchIntervalInBackground: false,
    meta: { handlesErrors: true },
  });
  const run = useMutation({
    mutationFn: async () =>
      (await sdk.request.send({ method: "POST", url, baseUrl, body: { parameters: {} } })).body as CheckReport,
    onSuccess: (started) => queryClient.setQueryData(queryKey, started),
  });
  return { report, run };
}

const STATE_COLOURS: Record<DiagnosticsState, "default" | "info" | "success" | "error"> = {
  idle: "default",
  configuring: "info",
  in_progress: "info",
  done: "success",
  error: "error",
};

function RunPanel({ device, action, canRun }: { device: Device; action: DiagnosticsAction; canRun: boolean }) {
  const { t } = useTranslation();
  const { report, run } = useDiagnostics(device, action);
  const data = report.data;
  const online = device.is_connected_to_vpn;
  const inProgress = diagnosticsRunning(data?.status) || run.isPending;
  const hasData = data !== undefined && data.lastRun !== null;
  return (
    <Box>
      <Box sx={{ display: "flex", alignItems: "center", gap: 2, mb: 2 }}>
        <Box sx={{ flex: 1 }}>
          <Typography variant="body2" color="text.secondary">
            {t(`devices.diagnostics.${action}_help`)}
          </Typography>
          <Box sx={{ display: "flex", alignItems: "center", gap: 1, mt: 0.75, flexWrap: "wrap" }}>
            {data ? (
              // The run's state (spec 2 §4): configuring, done, error, idle or in progress.
              <Chip
                size="small"
                variant="outlined"
                color={STATE_COLOURS[data.status]}
                label={t("devices.diagnostics.state", { state: t(`devices.diagnostics.states.${data.status}`) })}
              />
            ) : null}
            {hasData ? (
              <Typography variant="caption" color="text.secondary">
                {t("devices.diagnostics.last_run", { date: formatDate(data.lastRun ?? "") })}
                {data.diagnose_version ? ` · ${data.diagnose_version}` : ""}
              </Typography>
            ) : null}
          </Box>
        </Box>
        <Tooltip title={online ? "" : t("info.device_cloudlink_communication_missing")}>
          <span>
            <Button
              variant="contained"
              loading={run.isPending}
              disabled={!online || !canRun || inProgress || run.isPending}
              onClick={() => run.mutate()}
            >
              {t(`devices.diagnostics.run_${action}`)}
            </Button>
          </span>
        </Tooltip>
      </Box>
      {report.error || run.error ? (
        <Alert severity="error" sx={{ mb: 2 }}>
          {errorText(run.error ?? report.error)}
        </Alert>
      ) : null}
      {data?.status === "error" && data.error ? (
        <Alert severity="error" sx={{ mb: 2 }}>
          {data.error}
        </Alert>
      ) : null}
      <Box sx={{ position: "relative", minHeight: 120 }}>
        {!online && !hasData ? (
          <Typography color="text.secondary">{t("no_data.device_offline_has_no_diagnostics_data")}</Typography>
        ) : !hasData && !inProgress ? (
          <Typography color="text.secondary">{t("no_data.no_check_data_available")}</Typography>
        ) : action === "checks" ? (
          <ChecksTable report={data} />
        ) : (
          <Box
            component="pre"
            aria-label={t("devices.diagnostics.output")}
            sx={{
              m: 0,
              p: 2,
              borderRadius: 1,
              bgcolor: "#0f1419",
              color: "#e6e6e6",
              fontFamily: "ui-monospace, SFMono-Regular, Menlo, monospace",
              fontSize: 13,
              whiteSpace: "pre-wrap",
              minHeight: 120,
            }}
          >
            {data?.stdout ?? ""}
          </Box>
        )}
        {inProgress ? (
          <Box
            role="status"
            aria-label={t("devices.diagnostics.in_progress")}
            sx={{
              position: "absolute",
              inset: 0,
              display: "grid",
              placeItems: "center",
              bgcolor: "rgba(255,255,255,0.7)",
              borderRadius: 1,
            }}
          >
            <Box sx={{ display: "flex", alignItems: "center", gap: 1.5 }}>
              <CircularProgress size={22} />
              <Typography variant="body2">{t("devices.diagnostics.in_progress")}</Typography>
            </Box>
          </Box>
        ) : null}
      </Box>
    </Box>
  );
}

function ChecksTable({ report }: { report: CheckReport | undefined }) {
  const { t } = useTranslation();
  return (
    <Table size="small" aria-label={t("devices.diagnostics.tabs.checks")}>
      <TableHead>
        <TableRow>
          <TableCell>{t("devices.diagnostics.check")}</TableCell>
          <TableCell>{t("devices.diagnostics.result")}</TableCell>
          <TableCell>{t("devices.diagnostics.status")}</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {(report?.checks ?? []).map((check) => (
          <TableRow key={check.name}>
            <TableCell sx={{ fontFamily: "ui-monospace, SFMono-Regular, Menlo, monospace" }}>{check.name}</TableCell>
            <TableCell>
              <Box sx={{ display: "inline-flex", alignItems: "center", gap: 0.75 }}>
                {check.success ? (
                  <CheckCircleOutlined fontSize="small" color="success" />
                ) : (
                  <ErrorOutlined fontSize="small" color="error" />
                )}
                {t(check.success ? "devices.diagnostics.passed" : "devices.diagnostics.failed")}
              </Box>
            </TableCell>
            <TableCell>{check.status}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

/** The supervisor's own state and the target state it was given (spec 2 §7: v2 below supervisor 13). */
function SupervisorStatePanel({ device }: { device: Device }) {
  const { t } = useTranslation();
  const { sdk } = useServices();
  const state = useQuery({
    queryKey: ["device", device.uuid, "supervisor-state"],
    enabled: device.is_connected_to_vpn,
    queryFn: () => sdk.models.device.getSupervisorState(device.uuid),
    meta: { handlesErrors: true },
  });
  const version = supervisorTargetStateVersion(device.supervisor_version);
  const target = useQuery({
    queryKey: ["device", device.uuid, "supervisor-target-state", version],
    queryFn: () => sdk.models.device.getSupervisorTargetState(device.uuid, version),
    meta: { handlesErrors: true },
  });
  const block = (value: unknown) => (
    <Box
      component="pre"
      sx={{ m: 0, p: 2, borderRadius: 1, bgcolor: "grey.100", fontSize: 12, overflow: "auto", maxHeight: 360 }}
    >
      {JSON.stringify(value, null, 2)}
    </Box>
  );
  return (
    <Box sx={{ display: "grid", gap: 3 }}>
      <Box component="section" aria-label={t("devices.diagnostics.supervisor_state")}>
        <Typography variant="subtitle2" component="h3" sx={{ mb: 1 }}>
          {t("devices.diagnostics.supervisor_state")}
        </Typography>
        {!device.is_connected_to_vpn ? (
          <Typography color="text.secondary">{t("no_data.device_offline_has_no_diagnostics_data")}</Typography>
        ) : state.error ? (
          // "No online device(s) found" is shown as the supervisor says it (spec 2 §8).
          <Alert severity="error">{errorText(state.error)}</Alert>
        ) : (
          block(state.data ?? {})
        )}
      </Box>
      <Box component="section" aria-label={t("devices.diagnostics.target_state")}>
        <Typography variant="subtitle2" component="h3" sx={{ mb: 1 }}>
          {t("devices.diagnostics.target_state")}
        </Typography>
        {target.error ? (
          <Alert severity="error">{`${t("errors.supervisor_target_state_error")} ${errorText(target.error)}`}</Alert>
        ) : target.data === undefined ? null : Object.keys(target.data ?? {}).length === 0 ? (
          <Typography color="text.secondary">{t("devices.diagnostics.no_target")}</Typography>
        ) : (
          block(target.data)
        )}
      </Box>
    </Box>
  );
}

const TABS = ["checks", "diagnose", "supervisor"] as const;

/** `/devices/{uuid}/diagnostics` (spec 2 §2, needs device.access_diagnostics): health checks, diagnostics, supervisor state. */
export function DeviceDiagnosticsPage() {
  const { t } = useTranslation();
  const { device, abilities } = usePageDevice();
  const [tab, setTab] = useState<(typeof TABS)[number]>("checks");
  if (!device) return null;
  return (
    <>
      <PageHeader title={t("devices.diagnostics.title")} description={t("devices.diagnostics.description")} />
      {checksNeedNewerOs(device.os_version) ? (
        <Alert severity="warning" sx={{ mb: 2 }}>
          {t("devices.diagnostics.old_os")}
        </Alert>
      ) : null}
      <Paper variant="outlined">
        <Tabs
          value={tab}
          onChange={(_event, value) => setTab(value)}
          sx={{ px: 2, borderBottom: 1, borderColor: "divider" }}
        >
          {TABS.map((name) => (
            <Tab key={name} value={name} label={t(`devices.diagnostics.tabs.${name}`)} />
          ))}
        </Tabs>
        <Box sx={{ p: 2.5 }}>
          {tab === "supervisor" ? (
            <SupervisorStatePanel device={device} />
          ) : (
            <RunPanel key={tab} device={device} action={tab} canRun={abilities.diagnostics} />
          )}
        </Box>
      </Paper>
    </>
  );
}
