import CloseOutlined from "@mui/icons-material/CloseOutlined";
import DeleteSweepOutlined from "@mui/icons-material/DeleteSweepOutlined";
import DownloadOutlined from "@mui/icons-material/DownloadOutlined";
import OpenInFullOutlined from "@mui/icons-material/OpenInFullOutlined";
import SearchOutlined from "@mui/icons-material/SearchOutlined";
import VerticalAlignBottomOutlined from "@mui/icons-material/VerticalAlignBottomOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogContentText from "@mui/material/DialogContentText";
import DialogTitle from "@mui/material/DialogTitle";
import FormControlLabel from "@mui/material/FormControlLabel";
import IconButton from "@mui/material/IconButton";
import InputAdornment from "@mui/material/InputAdornment";
import Paper from "@mui/material/Paper";
import Switch from "@mui/material/Switch";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../../app-services.tsx";
import { errorText } from "../../../lib/errors.ts";
import { showToast } from "../../../lib/toasts.ts";
import { usePreference } from "../../../lib/use-preference.ts";
import { MONO_FONT_STACK } from "../../../theme.ts";
import { useFleetServices } from "../../variables/data.ts";
import type { Device } from "../data.ts";
import {
  canSaveFiles,
  filterLines,
  formatLogLine,
  formatLogTime,
  LOG_BUFFER_SIZE,
  LOG_FILTER_DEBOUNCE_MS,
  type LogLine,
  NO_LOGS_AFTER_MS,
  RingBuffer,
  type ShownLine,
  serviceColorIndex,
} from "./model.ts";
import { clearDeviceLogs, fetchLogHistory, keepLogStream, type LogConnectionState, readLogStream } from "./stream.ts";

const ROW_HEIGHT = 20;
const OVERSCAN = 20;
/** Incoming lines are added to the view at most this often (200 lines/s stay smooth). */
const FLUSH_MS = 100;
const LOG_BG = "#0d1117";
const LOG_FG = "#d1d9e0";
const SERVICE_COLORS = ["#79c0ff", "#7ee787", "#d2a8ff", "#ffa657", "#56d4dd", "#f778ba", "#e3b341", "#a5d6ff"];
const SYSTEM_COLOR = "#8b949e";
const STDERR_COLOR = "#ff7b72";

type KeyedLine = LogLine & { key: number };

/**
 * The device's log stream in a bounded buffer (5000 lines, oldest dropped): lines arriving are
 * collected and added every 100 ms, so a busy device re-renders the panel ten times a second at most.
 */
function useLiveLogs(uuid: string, enabled: boolean) {
  const { sdk, config } = useServices();
  const buffer = useRef(new RingBuffer<KeyedLine>(LOG_BUFFER_SIZE));
  const pending = useRef<LogLine[]>([]);
  const nextKey = useRef(0);
  const flushTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const [version, setVersion] = useState(0);
  const [connection, setConnection] = useState<LogConnectionState>({ state: "connecting" });
  const [silentSince, setSilentSince] = useState(() => Date.now());
  const [quiet, setQuiet] = useState(false);

  const flush = useCallback(() => {
    flushTimer.current = undefined;
    const lines = pending.current;
    pending.current = [];
    if (lines.length === 0) return;
    buffer.current.push(...lines.map((line) => ({ ...line, key: nextKey.current++ })));
    setVersion((value) => value + 1);
  }, []);

  const add = useCallback(
    (line: LogLine) => {
      pending.current.push(line);
      flushTimer.current ??= setTimeout(flush, FLUSH_MS);
    },
    [flush],
  );

  useEffect(() => {
    if (!enabled) return;
    const stop = keepLogStream({
      open: async (count, signal, onOpen) => {
        const token = (await sdk.auth.getToken()) ?? "";
        await readLogStream({ apiUrl: config.apiUrl, uuid, token, count, signal, onOpen, onLine: add });
      },
      onState: setConnection,
      // While the stream cannot be opened, the history (logs.history) fills the panel.
      onFirstFailure: () => {
        fetchLogHistory(sdk, config.apiUrl, uuid).then(
          (lines) => {
            if (buffer.current.length === 0 && pending.current.length === 0) for (const line of lines) add(line);
          },
          () => undefined,
        );
      },
    });
    return () => {
      stop();
      if (flushTimer.current !== undefined) clearTimeout(flushTimer.current);
      flushTimer.current = undefined;
      pending.current = [];
    };
  }, [enabled, uuid, sdk, config.apiUrl, add]);

  // "No logs yet" once 3 s passed without a line (spec 2 §4).
  useEffect(() => {
    setQuiet(false);
    const timer = setTimeout(() => setQuiet(true), Math.max(0, silentSince + NO_LOGS_AFTER_MS - Date.now()));
    return () => clearTimeout(timer);
  }, [silentSince]);

  const clear = useCallback(() => {
    buffer.current.clear();
    pending.current = [];
    setSilentSince(Date.now());
    setVersion((value) => value + 1);
  }, []);

  return { buffer: buffer.current, version, connection, quiet, clear };
}

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

function ConnectionBadge({ connection }: { connection: LogConnectionState }) {
  const { t } = useTranslation();
  const [color, text] =
    connection.state === "live"
      ? ["success.main", t("devices.logs.live")]
      : connection.state === "connecting"
        ? ["text.disabled", t("devices.logs.connecting")]
        : ["warning.main", t("devices.logs.retrying", { seconds: connection.delayMs / 1000 })];
  return (
    <Box
      role="status"
      sx={{ display: "inline-flex", alignItems: "center", gap: 0.75, fontSize: 13, color: "text.secondary" }}
    >
      <Box component="span" sx={{ width: 8, height: 8, borderRadius: "50%", bgcolor: color }} />
      {text}
    </Box>
  );
}

/** The lines, drawn as a window of fixed-height rows over the whole list (only visible rows are in the DOM). */
function LogView(props: {
  lines: ShownLine[];
  utc: boolean;
  timestamps: boolean;
  height: number | string;
  empty: string | undefined;
}) {
  const { t } = useTranslation();
  const scroller = useRef<HTMLDivElement>(null);
  const [viewport, setViewport] = useState({ top: 0, height: 400 });
  const [follow, setFollow] = useState(true);
  const { lines } = props;

  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element) return;
    const measure = () => setViewport({ top: element.scrollTop, height: element.clientHeight });
    measure();
    const observer = typeof ResizeObserver === "function" ? new ResizeObserver(measure) : undefined;
    observer?.observe(element);
    return () => observer?.disconnect();
  }, []);

  // Following the tail: new lines keep the view at the bottom.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs again whenever the lines change
  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element || !follow) return;
    element.scrollTop = element.scrollHeight;
    setViewport({ top: element.scrollTop, height: element.clientHeight });
  }, [lines, follow]);

  const onScroll = () => {
    const element = scroller.current;
    if (!element) return;
    setViewport({ top: element.scrollTop, height: element.clientHeight });
    setFollow(element.scrollHeight - element.scrollTop - element.clientHeight < ROW_HEIGHT * 2);
  };

  const first = Math.max(0, Math.floor(viewport.top / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(lines.length, Math.ceil((viewport.top + viewport.height) / ROW_HEIGHT) + OVERSCAN);
  const visible = lines.slice(first, last);
  const timeWidth = props.utc ? "23ch" : "19ch";

  return (
    <Box sx={{ position: "relative" }}>
      <Box
        ref={scroller}
        onScroll={onScroll}
        role="log"
        aria-label={t("devices.logs.region")}
        aria-live="off"
        tabIndex={0}
        sx={{
          height: props.height,
          overflow: "auto",
          bgcolor: LOG_BG,
          color: LOG_FG,
          fontFamily: MONO_FONT_STACK,
          fontSize: 12.5,
          borderRadius: 1,
          py: 0.5,
          "&:focus-visible": { outline: "2px solid", outlineColor: "primary.main" },
        }}
      >
        {lines.length === 0 ? (
          props.empty ? (
            <Box sx={{ p: 2, color: SYSTEM_COLOR, fontFamily: "inherit" }}>{props.empty}</Box>
          ) : null
        ) : (
          <Box sx={{ height: lines.length * ROW_HEIGHT, minWidth: "100%", width: "max-content" }}>
            <Box sx={{ height: first * ROW_HEIGHT }} />
            {visible.map((line) => (
              <Box
                key={line.key}
                data-log-line=""
                data-system={line.isSystem || undefined}
                data-stderr={line.isStdErr || undefined}
                sx={{
                  display: "flex",
                  height: ROW_HEIGHT,
                  lineHeight: `${ROW_HEIGHT}px`,
                  whiteSpace: "pre",
                  px: 1.5,
                  borderLeft: "3px solid",
                  borderLeftColor: line.isStdErr ? STDERR_COLOR : "transparent",
                  bgcolor: line.isStdErr ? "rgba(255,123,114,0.08)" : undefined,
                  "&:hover": { bgcolor: "rgba(255,255,255,0.05)" },
                }}
              >
                {props.timestamps ? (
                  <Box component="span" sx={{ width: timeWidth, flex: "none", color: "#6e7681", mr: 2 }}>
                    {formatLogTime(line.timestamp, props.utc)}
                  </Box>
                ) : null}
                <Box
                  component="span"
                  title={line.isSystem ? t("devices.logs.system") : line.service}
                  sx={{
                    width: "14ch",
                    flex: "none",
                    mr: 2,
                    overflow: "hidden",
                    textOverflow: "ellipsis",
                    color: line.isSystem
                      ? SYSTEM_COLOR
                      : SERVICE_COLORS[serviceColorIndex(line.service, SERVICE_COLORS.length)],
                    fontWeight: 600,
                  }}
                >
                  {line.isSystem ? t("devices.logs.system") : line.service}
                </Box>
                <Box
                  component="span"
                  sx={{
                    color: line.isStdErr ? STDERR_COLOR : line.isSystem ? SYSTEM_COLOR : LOG_FG,
                    fontStyle: line.isSystem ? "italic" : undefined,
                  }}
                >
                  {line.isStdErr ? (
                    <Box component="span" sx={{ fontSize: 10.5, mr: 1, opacity: 0.8 }}>
                      {t("devices.logs.stderr")}
                    </Box>
                  ) : null}
                  {line.message.replace(/\r?\n$/, "")}
                </Box>
              </Box>
            ))}
          </Box>
        )}
      </Box>
      {!follow && lines.length > 0 ? (
        <Button
          size="small"
          variant="contained"
          startIcon={<VerticalAlignBottomOutlined />}
          onClick={() => setFollow(true)}
          sx={{ position: "absolute", right: 24, bottom: 12 }}
        >
          {t("devices.logs.follow")}
        </Button>
      ) : null}
    </Box>
  );
}

function fileNameOf(device: Pick<Device, "device_name" | "uuid">) {
  const name = device.device_name.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") || "device";
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-");
  return `${name}-${device.uuid.slice(0, 7)}-logs-${stamp}.log`;
}

function saveText(fileName: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/plain;charset=utf-8" }));
  const anchor = document.createElement("a");
  anchor.href = url;
  anchor.download = fileName;
  anchor.rel = "noopener";
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Live logs of a device (spec 2 §2): filter, UTC, timestamps, download, clear and expand. */
export function LogsPanel({
  device,
  canClear,
  filterRequest,
}: {
  device: Device;
  canClear: boolean;
  /** A filter asked from outside (the services table's "show logs"); `at` makes a repeat count. */
  filterRequest?: { text: string; at: number };
}) {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const localMode = device.is_in_local_mode;
  const fleetId = device.belongs_to__application[0]?.id;
  const services = useFleetServices(fleetId);
  const { buffer, version, connection, quiet, clear } = useLiveLogs(device.uuid, !localMode);
  const [utc, setUtc] = usePreference("deviceLogsUtc");
  const [timestamps, setTimestamps] = usePreference("deviceLogsTimestamps");
  const [filterInput, setFilterInput] = useState("");
  const filter = useDebounced(filterInput, LOG_FILTER_DEBOUNCE_MS);
  useEffect(() => {
    if (filterRequest) setFilterInput(filterRequest.text);
  }, [filterRequest]);
  const [expanded, setExpanded] = useState(false);
  const [clearing, setClearing] = useState(false);
  const [clearBusy, setClearBusy] = useState(false);
  const [clearError, setClearError] = useState<string>();
  const savable = useMemo(() => canSaveFiles(), []);

  const serviceNames = useMemo(
    () => new Map((services.data ?? []).map((service) => [service.id, service.name])),
    [services.data],
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` marks a change inside the buffer
  const all = useMemo(
    () =>
      buffer.toArray().map(
        (line): ShownLine => ({
          ...line,
          service: line.serviceId === null ? "" : (serviceNames.get(line.serviceId) ?? `#${line.serviceId}`),
        }),
      ),
    [buffer, version, serviceNames],
  );
  const shown = useMemo(() => filterLines(all, filter), [all, filter]);

  if (localMode) {
    return (
      <Paper variant="outlined" component="section" aria-label={t("devices.logs.title")} sx={{ p: 2 }}>
        <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, mb: 1.5 }}>
          {t("devices.logs.title")}
        </Typography>
        <Alert severity="info">{t("warnings.logs_not_available_in_local_mode")}</Alert>
      </Paper>
    );
  }

  const download = () => {
    const text = shown.map((line) => formatLogLine(line, { utc, timestamps: true })).join("\n");
    saveText(fileNameOf(device), text ? `${text}\n` : "");
  };

  const confirmClear = async () => {
    setClearBusy(true);
    setClearError(undefined);
    try {
      await clearDeviceLogs(sdk, config.apiUrl, device.uuid);
      clear();
      setClearing(false);
      showToast("success", t("devices.logs.cleared"));
    } catch (error) {
      setClearError(errorText(error));
    } finally {
      setClearBusy(false);
    }
  };

  const empty =
    all.length === 0
      ? quiet
        ? t("devices.logs.no_logs_yet")
        : undefined
      : shown.length === 0
        ? t("devices.logs.no_match", { filter })
        : undefined;

  const toolbar = (
    <Box sx={{ display: "flex", flexWrap: "wrap", alignItems: "center", gap: 1.5, mb: 1.5 }}>
      <TextField
        size="small"
        label={t("devices.logs.filter")}
        placeholder={t("devices.logs.filter_placeholder")}
        value={filterInput}
        onChange={(event) => setFilterInput(event.target.value)}
        sx={{ width: { xs: "100%", sm: 280 } }}
        slotProps={{
          input: {
            startAdornment: (
              <InputAdornment position="start">
                <SearchOutlined fontSize="small" />
              </InputAdornment>
            ),
          },
        }}
      />
      <FormControlLabel
        control={<Switch size="small" checked={timestamps} onChange={(_event, on) => setTimestamps(on)} />}
        label={t("devices.logs.timestamps")}
        sx={{ mx: 0, gap: 0.5 }}
      />
      <FormControlLabel
        control={<Switch size="small" checked={utc} onChange={(_event, on) => setUtc(on)} />}
        label={t("devices.logs.utc")}
        sx={{ mx: 0, gap: 0.5 }}
      />
      <Box sx={{ flex: 1 }} />
      <Typography variant="body2" color="text.secondary" sx={{ fontVariantNumeric: "tabular-nums" }}>
        {filter.trim()
          ? t("devices.logs.count", { shown: shown.length.toLocaleString(), total: all.length.toLocaleString() })
          : t("devices.logs.count_all", { total: all.length.toLocaleString() })}
      </Typography>
      <ConnectionBadge connection={connection} />
      <Box sx={{ display: "flex", gap: 0.5 }}>
        {savable ? (
          <Tooltip title={t("devices.logs.download")}>
            <IconButton size="small" aria-label={t("devices.logs.download")} onClick={download}>
              <DownloadOutlined fontSize="small" />
            </IconButton>
          </Tooltip>
        ) : null}
        {canClear ? (
          <Tooltip title={t("devices.logs.clear")}>
            <IconButton
              size="small"
              aria-label={t("devices.logs.clear")}
              onClick={() => {
                setClearError(undefined);
                setClearing(true);
              }}
            >
              <DeleteSweepOutlined fontSize="small" />
            </IconButton>
          </Tooltip>
        ) : null}
        {expanded ? (
          <Tooltip title={t("devices.logs.collapse")}>
            <IconButton size="small" aria-label={t("devices.logs.collapse")} onClick={() => setExpanded(false)}>
              <CloseOutlined fontSize="small" />
            </IconButton>
          </Tooltip>
        ) : (
          <Tooltip title={t("devices.logs.expand")}>
            <IconButton size="small" aria-label={t("devices.logs.expand")} onClick={() => setExpanded(true)}>
              <OpenInFullOutlined fontSize="small" />
            </IconButton>
          </Tooltip>
        )}
      </Box>
    </Box>
  );

  const retryNotice =
    connection.state === "retrying" && connection.error !== undefined ? (
      <Alert severity="warning" sx={{ mb: 1.5, py: 0 }}>
        {t("devices.logs.retrying_detail", { error: errorText(connection.error), seconds: connection.delayMs / 1000 })}
      </Alert>
    ) : null;

  const view = (height: number | string) => (
    <>
      {toolbar}
      {retryNotice}
      <LogView lines={shown} utc={utc} timestamps={timestamps} height={height} empty={empty} />
    </>
  );

  return (
    <>
      <Paper variant="outlined" component="section" aria-label={t("devices.logs.title")} sx={{ p: 2, minWidth: 0 }}>
        <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, mb: 1 }}>
          {t("devices.logs.title")}
        </Typography>
        {expanded ? null : view(360)}
      </Paper>
      <Dialog fullScreen open={expanded} onClose={() => setExpanded(false)} aria-label={t("devices.logs.title")}>
        <DialogTitle sx={{ pb: 1 }}>
          {t("devices.logs.title")} · {device.device_name}
        </DialogTitle>
        <DialogContent sx={{ display: "flex", flexDirection: "column", pt: "8px !important" }}>
          {expanded ? view("calc(100vh - 150px)") : null}
        </DialogContent>
      </Dialog>
      <Dialog open={clearing} onClose={() => setClearing(false)} maxWidth="xs" fullWidth>
        <DialogTitle>{t("devices.logs.clear_title")}</DialogTitle>
        <DialogContent>
          {clearError ? (
            <Alert severity="error" sx={{ mb: 2 }}>
              {clearError}
            </Alert>
          ) : null}
          <DialogContentText>{t("devices.logs.clear_body", { name: device.device_name })}</DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setClearing(false)}>{t("confirm.cancel")}</Button>
          <Button color="error" variant="contained" loading={clearBusy} onClick={() => void confirmClear()}>
            {t("devices.logs.clear_confirm")}
          </Button>
        </DialogActions>
      </Dialog>
    </>
  );
}
