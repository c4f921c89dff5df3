import { DATE_FORMAT, userActionsNeedUpdate } from "@flotilla/domain";
import EditOutlined from "@mui/icons-material/EditOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import LinearProgress from "@mui/material/LinearProgress";
import Link from "@mui/material/Link";
import Stack from "@mui/material/Stack";
import Switch from "@mui/material/Switch";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useQueryClient } from "@tanstack/react-query";
import { format, formatDistanceToNowStrict } from "date-fns";
import { type ReactNode, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk, useServices } from "../../app-services.tsx";
import { TextLink } from "../../components/links.tsx";
import { PageHeader } from "../../components/page.tsx";
import { Facts } from "../../components/settings.tsx";
import { laterDate, SupportAccessBanner } from "../../components/support-access-banner.tsx";
import { type TagRow, TagsDialog } from "../../components/tags-dialog.tsx";
import { errorText } from "../../lib/errors.ts";
import { supportAccessState } from "../../lib/support-access.ts";
import { showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { Card, NameDialog } from "../orgs/ui.tsx";
import { ReleaseVersion } from "../releases/release-status.tsx";
import { type Device, deviceWebUrl, metricLevel, usedPercent, usePageDevice } from "./data.ts";
import { LogSearchCard } from "./logs/log-search.tsx";
import { LogsPanel } from "./logs/logs-panel.tsx";
import { DeviceNotes } from "./notes.tsx";
import { OsVersionItem } from "./os-updates.tsx";
import { ServicesCard } from "./services-card.tsx";
import { DeviceStatusChip } from "./status-chip.tsx";
import { TerminalCard } from "./terminal/terminal-card.tsx";

/** One metric bar: green ≤ 60 %, warning ≤ 80 %, error above (spec 2 §9); CPU and temperature max 100. */
function MetricBar(props: { label: string; percent: number | undefined; detail: string }) {
  const { t } = useTranslation();
  return (
    <Box>
      <Box sx={{ display: "flex", justifyContent: "space-between", mb: 0.5 }}>
        <Typography variant="body2" sx={{ fontWeight: 500 }}>
          {props.label}
        </Typography>
        <Typography variant="body2" color="text.secondary">
          {props.percent === undefined ? t("devices.metrics.no_data") : props.detail}
        </Typography>
      </Box>
      <LinearProgress
        variant="determinate"
        aria-label={props.label}
        value={props.percent ?? 0}
        color={props.percent === undefined ? "inherit" : metricLevel(props.percent)}
        sx={{ height: 8, borderRadius: 4, bgcolor: "action.hover" }}
      />
    </Box>
  );
}

const mb = (value: number | null) =>
  value === null ? "" : value >= 1024 ? `${(value / 1024).toFixed(1)} GB` : `${value} MB`;

function MetricsCard({ device }: { device: Device }) {
  const { t } = useTranslation();
  const memory = usedPercent(device.memory_usage, device.memory_total);
  const storage = usedPercent(device.storage_usage, device.storage_total);
  const cpu = device.cpu_usage === null ? undefined : Math.min(100, Math.max(0, device.cpu_usage));
  const temperature = device.cpu_temp === null ? undefined : Math.min(100, Math.max(0, device.cpu_temp));
  return (
    <Card title={t("devices.metrics.title")}>
      <Stack spacing={1.75}>
        <MetricBar label={t("devices.metrics.cpu")} percent={cpu} detail={`${cpu ?? 0}%`} />
        <MetricBar label={t("devices.metrics.temperature")} percent={temperature} detail={`${temperature ?? 0} °C`} />
        <MetricBar
          label={t("devices.metrics.memory")}
          percent={memory}
          detail={`${mb(device.memory_usage)} / ${mb(device.memory_total)} (${memory ?? 0}%)`}
        />
        <MetricBar
          label={t("devices.metrics.storage")}
          percent={storage}
          detail={`${mb(device.storage_usage)} / ${mb(device.storage_total)} (${storage ?? 0}%)`}
        />
      </Stack>
    </Card>
  );
}

/** Manage tags (spec 2 §2): add, edit and remove a device's tags. */
function DeviceTagsDialog({ device, onClose }: { device: Device; onClose: () => void }) {
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const save = async (rows: TagRow[]) => {
    const keys = rows.map((row) => row.key);
    for (const tag of device.device_tag.filter((tag) => !keys.includes(tag.tag_key)))
      await sdk.models.device.tags.remove(device.uuid, tag.tag_key);
    for (const row of rows) {
      const before = device.device_tag.find((tag) => tag.tag_key === row.key);
      if (before?.value !== row.value) await sdk.models.device.tags.set(device.uuid, row.key, row.value);
    }
    await queryClient.invalidateQueries({ queryKey: ["device", device.uuid] });
  };
  return <TagsDialog texts="devices.tags" tags={device.device_tag} save={save} onClose={onClose} />;
}

function Warnings({ device }: { device: Device }) {
  const { t } = useTranslation();
  const warnings: string[] = [];
  if (device.is_undervolted) warnings.push(t("devices.warnings.undervolted"));
  // Heartbeat online but no cloudlink: actions and terminals cannot reach the device.
  if (device.api_heartbeat_state === "online" && !device.is_connected_to_vpn) {
    warnings.push(t("devices.warnings.cloudlink_missing"));
  }
  if (!device.is_active) warnings.push(t("devices.warnings.inactive"));
  if (userActionsNeedUpdate(device.supervisor_version)) {
    warnings.push(t("errors.device_update_required", { version: device.supervisor_version }));
  }
  if (warnings.length === 0) return null;
  return (
    <Stack spacing={1} sx={{ mb: 2 }}>
      {warnings.map((warning) => (
        <Alert key={warning} severity="warning">
          {warning}
        </Alert>
      ))}
    </Stack>
  );
}

const mono = (value: string | null | undefined) =>
  value ? (
    <Box component="span" sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13 }}>
      {value}
    </Box>
  ) : (
    "—"
  );

/** The public URL toggle of the summary card, with the link while it is on. */
function PublicUrlItem({ device, url, editable }: { device: Device; url: string; editable: boolean }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState(false);
  const toggle = async (on: boolean) => {
    setBusy(true);
    try {
      await (on ? sdk.models.device.enableDeviceUrl(device.uuid) : sdk.models.device.disableDeviceUrl(device.uuid));
      showToast("success", on ? t("devices.settings.public_url_on") : t("devices.settings.public_url_off"));
      await queryClient.invalidateQueries({ queryKey: ["device", device.uuid] });
    } catch (error) {
      showToast("error", errorText(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Box component="span" sx={{ display: "inline-flex", alignItems: "center", gap: 1, flexWrap: "wrap" }}>
      <Switch
        size="small"
        checked={device.is_web_accessible}
        disabled={!editable || busy}
        onChange={(event) => void toggle(event.target.checked)}
        slotProps={{ input: { "aria-label": t("devices.settings.public_url") } }}
      />
      {device.is_web_accessible ? (
        <Link href={url} target="_blank" rel="noreferrer">
          {url}
        </Link>
      ) : (
        t("devices.off")
      )}
    </Box>
  );
}

/** `/devices/{uuid}` (spec 2 §2 "Device pages"): the summary card, metrics, tags and notes. */
export function DeviceSummaryPage() {
  const { t } = useTranslation();
  const { config, sdk } = useServices();
  const queryClient = useQueryClient();
  const { device, abilities } = usePageDevice();
  const [renaming, setRenaming] = useState(false);
  const [tagging, setTagging] = useState(false);
  const [logFilter, setLogFilter] = useState<{ text: string; at: number }>();
  if (!device) return null;
  const fleet = device.belongs_to__application[0];
  // The device's own target (a halted rollout leaves it on the previous release), not the fleet's.
  const target = device.should_be_running__release[0];
  const support = supportAccessState(device.is_accessible_by_support_until__date);
  const url = deviceWebUrl(device, config.deviceUrlsBaseDomain);
  // A release links to its page under the device's fleet (spec 2 §2 "Device pages").
  const releaseLink = (
    release: { id: number; raw_version: string; is_final?: boolean; commit: string } | undefined,
    key: string,
  ) =>
    release && fleet ? (
      <TextLink key={key} to={`/fleets/${fleet.id}/releases/${release.id}` as "/"} underline="hover">
        <ReleaseVersion release={release} />
        <Box component="span" sx={{ fontFamily: MONO_FONT_STACK, fontSize: 12.5, color: "text.secondary", ml: 0.75 }}>
          {release.commit.slice(0, 7)}
        </Box>
      </TextLink>
    ) : (
      "—"
    );
  const since = (value: string | null) =>
    value ? formatDistanceToNowStrict(new Date(value), { addSuffix: true }) : "";
  return (
    <>
      <PageHeader
        title={device.device_name}
        description={t("devices.summary_description")}
        actions={
          abilities.update ? (
            <Button variant="outlined" startIcon={<EditOutlined />} onClick={() => setRenaming(true)}>
              {t("devices.rename.title")}
            </Button>
          ) : undefined
        }
      />
      <SupportAccessBanner
        kind="device"
        until={laterDate(
          device.is_accessible_by_support_until__date,
          device.belongs_to__application[0]?.is_accessible_by_support_until__date,
        )}
      />
      <Warnings device={device} />
      <Box sx={{ display: "grid", gap: 2, gridTemplateColumns: { xs: "1fr", lg: "1.3fr 1fr" }, alignItems: "start" }}>
        <Card title={t("devices.card")}>
          <Facts
            rows={[
              [t("devices.fields.status"), <DeviceStatusChip key="status" device={device} />],
              [
                t("devices.fields.fleet"),
                fleet ? (
                  <TextLink key="fleet" to="/fleets/$fleetId" params={{ fleetId: String(fleet.id) }} underline="hover">
                    {fleet.app_name}
                  </TextLink>
                ) : (
                  "—"
                ),
              ],
              [t("devices.fields.online"), device.is_connected_to_vpn ? t("devices.online") : t("devices.offline")],
              [t("devices.fields.heartbeat"), t(`devices.heartbeat.${device.api_heartbeat_state ?? "unknown"}`)],
              [
                t("devices.fields.last_connected"),
                device.last_connectivity_event
                  ? `${format(new Date(device.last_connectivity_event), DATE_FORMAT)} (${since(device.last_connectivity_event)})`
                  : "—",
              ],
              [t("devices.fields.uuid"), mono(device.uuid)],
              [t("devices.fields.device_type"), device.is_of__device_type[0]?.name ?? "—"],
              [
                t("devices.fields.update_status"),
                device.update_status
                  ? device.last_update_status_event
                    ? t("devices.update_status_for", {
                        status: device.update_status,
                        duration: formatDistanceToNowStrict(new Date(device.last_update_status_event)),
                      })
                    : device.update_status
                  : "—",
              ],
              [t("devices.fields.os_version"), <OsVersionItem key="os" device={device} />],
              [t("devices.fields.os_variant"), device.os_variant ?? "—"],
              [t("devices.fields.supervisor_version"), device.supervisor_version ?? "—"],
              [t("devices.fields.current_release"), releaseLink(device.is_running__release[0], "current")],
              [
                t("devices.fields.target_release"),
                target ? (
                  <span key="target">
                    {releaseLink(target, "target")}
                    {device.is_pinned_on__release[0] ? ` (${t("devices.pinned")})` : ""}
                  </span>
                ) : (
                  "—"
                ),
              ],
              [
                t("devices.fields.support_access"),
                support.state === "off"
                  ? t("fleets.support.off")
                  : support.state === "granted"
                    ? t("fleets.support.granted_until", { date: format(support.until, DATE_FORMAT) })
                    : t("fleets.support.expired_on", { date: format(support.until, DATE_FORMAT) }),
              ],
              [t("devices.fields.active"), device.is_active ? t("devices.active") : t("devices.inactive")],
              [t("devices.fields.local_mode"), device.is_in_local_mode ? t("devices.local_mode_on") : t("devices.off")],
              // The public URL toggle only when the device has a web URL (spec 2 §2 "Summary card fields").
              ...(url
                ? ([
                    [
                      t("devices.fields.public_url"),
                      <PublicUrlItem key="url" device={device} url={url} editable={abilities.update} />,
                    ],
                  ] as Array<[string, ReactNode]>)
                : []),
              [t("devices.fields.local_ip"), mono(device.ip_address)],
              [t("devices.fields.public_ip"), mono(device.public_address)],
              [t("devices.fields.mac"), mono(device.mac_address)],
            ]}
          />
        </Card>
        <Stack spacing={2}>
          <MetricsCard device={device} />
          <Card
            title={t("devices.tags.title", { count: device.device_tag.length })}
            action={
              abilities.tags ? (
                <Button size="small" onClick={() => setTagging(true)}>
                  {t("devices.tags.manage")}
                </Button>
              ) : undefined
            }
          >
            {device.device_tag.length === 0 ? (
              <Typography variant="body2" color="text.secondary">
                {t("devices.tags.none")}
              </Typography>
            ) : (
              <Box sx={{ display: "flex", flexWrap: "wrap", gap: 1 }}>
                {device.device_tag.map((tag) => (
                  <Tooltip key={tag.id} title={`${tag.tag_key}: ${tag.value}`}>
                    <Chip size="small" label={tag.value ? `${tag.tag_key}: ${tag.value}` : tag.tag_key} />
                  </Tooltip>
                ))}
              </Box>
            )}
          </Card>
          <Card title={t("devices.notes.title")}>
            <DeviceNotes uuid={device.uuid} note={device.note} editable={abilities.update} />
          </Card>
        </Stack>
      </Box>
      <Box sx={{ mt: 2 }}>
        <ServicesCard
          device={device}
          canControl={abilities.supervisor}
          onShowLogs={(service) => {
            setLogFilter({ text: service, at: Date.now() });
            document.getElementById("device-logs")?.scrollIntoView({ behavior: "smooth", block: "start" });
          }}
        />
      </Box>
      <Box id="device-logs" sx={{ mt: 2 }}>
        <LogsPanel device={device} canClear={abilities.clearLogs} filterRequest={logFilter} />
      </Box>
      {fleet ? (
        <Box sx={{ mt: 2 }}>
          <LogSearchCard scope={{ device: device.uuid }} fleetId={fleet.id} />
        </Box>
      ) : null}
      {abilities.ssh || abilities.sshHost ? (
        <Box sx={{ mt: 2 }}>
          <TerminalCard device={device} canHost={abilities.sshHost} canService={abilities.ssh} />
        </Box>
      ) : null}
      <NameDialog
        open={renaming}
        title={t("devices.rename.title")}
        label={t("devices.rename.label")}
        submitLabel={t("devices.rename.save")}
        initial={device.device_name}
        onSubmit={async (name) => {
          await sdk.models.device.rename(device.uuid, name);
          await queryClient.invalidateQueries({ queryKey: ["device", device.uuid] });
          showToast("success", t("devices.rename.done"));
        }}
        onClose={() => setRenaming(false)}
      />
      {tagging ? <DeviceTagsDialog device={device} onClose={() => setTagging(false)} /> : null}
    </>
  );
}
