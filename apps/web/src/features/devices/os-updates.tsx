import {
  compareOsVersions,
  isDiscontinuedDeviceType,
  isEsrVersion,
  newerVersionsRefusal,
  OS_TYPES_CACHE_MS,
  type OsRelease,
  type OsUpdateCategory,
  osUpdateCategory,
  osUpdateTargets,
  parseOsVersion,
  STARTABLE_OS_UPDATE_CATEGORIES,
  supervisorUpdateBlocked,
} from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Checkbox from "@mui/material/Checkbox";
import Chip from "@mui/material/Chip";
import FormControlLabel from "@mui/material/FormControlLabel";
import LinearProgress from "@mui/material/LinearProgress";
import Link from "@mui/material/Link";
import MenuItem from "@mui/material/MenuItem";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk, useServices } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { TextLink } from "../../components/links.tsx";
import { ErrorNote, Setting, settingRow, useSubmission } from "../../components/settings.tsx";
import type { Sdk } from "../../lib/sdk.ts";
import { showToast } from "../../lib/toasts.ts";
import { pineOf } from "../orgs/data.ts";
import { useDeviceBatch } from "./actions.tsx";
import type { Device } from "./data.ts";

/**
 * OS and supervisor updates in the dashboard (spec 2 §2 device settings "group OS update, group
 * supervisor update", §4 OS update target category, §5, §7): the catalogue through balena-sdk
 * (os.getAvailableOsVersions, os.getSupervisorReleasesForCpuArchitecture, cached 10 minutes),
 * the categories from packages/domain, the update through the device actions service.
 */

type UpdatableDevice = Pick<
  Device,
  "id" | "uuid" | "device_name" | "os_version" | "os_variant" | "supervisor_version" | "is_connected_to_vpn"
> & {
  is_of__device_type: Array<{ id: number; slug: string; is_of__cpu_architecture: Array<{ id: number }> }>;
};

/** OS versions per device type, as balena-sdk answers them; OS types are cached 10 minutes (spec 2 §9). */
export function useOsVersions(slugs: string[]) {
  const sdk = useSdk();
  const sorted = [...new Set(slugs)].sort();
  return useQuery({
    queryKey: ["os-versions", sorted],
    enabled: sorted.length > 0,
    staleTime: OS_TYPES_CACHE_MS,
    queryFn: async () => {
      // The host app of each version too: its release page is /apps/{appId}/releases/{releaseId} (spec 2 §2).
      const answer = (await sdk.models.os.getAvailableOsVersions(sorted, {
        $select: ["belongs_to__application"],
      } as never)) as Record<string, OsRelease[]>;
      return Object.fromEntries(sorted.map((slug) => [slug, answer[slug] ?? []])) as Record<string, OsRelease[]>;
    },
  });
}

function useDeviceTypeContract(slug: string | undefined) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["device-type-contract", slug],
    enabled: slug !== undefined,
    staleTime: OS_TYPES_CACHE_MS,
    queryFn: async () =>
      (
        await pineOf(sdk).get<Array<{ contract: unknown }>>({
          resource: "device_type",
          options: { $select: ["contract"], $filter: { slug } },
        })
      )[0]?.contract ?? null,
  });
}

type SupervisorRelease = { id: number; raw_version: string; belongs_to__application?: { __id: number } };

function useSupervisorReleases(architectures: number[]) {
  const sdk = useSdk();
  const sorted = [...new Set(architectures)].sort((a, b) => a - b);
  return useQuery({
    queryKey: ["supervisor-releases", sorted],
    enabled: sorted.length > 0,
    staleTime: OS_TYPES_CACHE_MS,
    queryFn: async () =>
      Object.fromEntries(
        await Promise.all(
          sorted.map(
            async (arch) =>
              [
                arch,
                (await sdk.models.os.getSupervisorReleasesForCpuArchitecture(arch, {
                  $select: ["id", "raw_version", "known_issue_list", "belongs_to__application"],
                })) as SupervisorRelease[],
              ] as const,
          ),
        ),
      ) as Record<number, SupervisorRelease[]>,
  });
}

/**
 * Starts an OS update through the device actions service: `POST /v2/{uuid}/resinhup` with the
 * target version, detached (spec 2 §7); anything but "triggered" is "Cannot start the update process".
 */
export async function startOsUpdate(sdk: Sdk, baseUrl: string, uuid: string, version: string, cannotStart: string) {
  const answer = await sdk.request.send({
    method: "POST",
    url: `/v2/${uuid}/resinhup`,
    baseUrl,
    body: { parameters: { target_version: version } },
  });
  if ((answer.body as { status?: unknown } | null)?.status !== "triggered") throw new Error(cannotStart);
}

const deviceFacts = (device: UpdatableDevice) => ({
  deviceType: device.is_of__device_type[0]?.slug ?? "",
  isOnline: device.is_connected_to_vpn,
  osVersion: device.os_version,
  osVariant: device.os_variant,
});

function CategoryChip({ category }: { category: OsUpdateCategory }) {
  const { t } = useTranslation();
  const startable = STARTABLE_OS_UPDATE_CATEGORIES.includes(category);
  return (
    <Chip
      size="small"
      variant="outlined"
      color={startable ? "primary" : category === "up_to_date" ? "success" : "default"}
      label={t(`devices.os_update.category.${category}`)}
    />
  );
}

const versionLabel = (release: OsRelease, esr: string) =>
  release.osType === "esr" ? `${release.raw_version} (${esr})` : release.raw_version;

/** Device settings: the OS update section (spec 2 §2, §4, §5, §8). */
export function OsUpdateSetting({ device }: { device: Device }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { config } = useServices();
  const queryClient = useQueryClient();
  const slug = device.is_of__device_type[0]?.slug;
  const versions = useOsVersions(slug ? [slug] : []);
  const contract = useDeviceTypeContract(slug);
  const { error, busy, run } = useSubmission();
  const [chosen, setChosen] = useState("");
  const [takeoverConfirmed, setTakeoverConfirmed] = useState(false);
  const releases = (slug ? versions.data?.[slug] : undefined) ?? [];
  const facts = deviceFacts(device);
  // The setting lists what could be started once the device is online.
  const online = { ...facts, isOnline: true };
  const targets = osUpdateTargets(online, releases).filter((target) =>
    STARTABLE_OS_UPDATE_CATEGORIES.includes(target.category),
  );
  const refusal = newerVersionsRefusal(online, releases);
  const current = parseOsVersion(device.os_version);
  const target = chosen || targets[0]?.target.raw_version || "";
  const assessment = target ? osUpdateCategory(facts, releases, target) : undefined;
  const parseable = current !== undefined;
  const updating = device.status === "Updating";
  const start = () =>
    void run(async () => {
      await startOsUpdate(
        sdk,
        config.deviceActionsHost ?? config.apiUrl,
        device.uuid,
        target,
        t("devices.os_update.cannot_start"),
      );
      showToast("success", t("devices.os_update.started", { version: target }));
      setTakeoverConfirmed(false);
      await queryClient.invalidateQueries({ queryKey: ["device", device.uuid] });
    });
  return (
    <Setting title={t("devices.os_update.title")} text={t("devices.os_update.text")}>
      <ErrorNote error={error} />
      <Box sx={{ display: "grid", gap: 1.5 }}>
        <Typography variant="body2" data-testid="current-os-version">
          {t("devices.os_update.current", { version: device.os_version ?? t("devices.os_update.unknown") })}
        </Typography>
        {contract.data && isDiscontinuedDeviceType(contract.data) ? (
          <Alert severity="warning">{t("warnings.discontinued_os_for_device_type")}</Alert>
        ) : null}
        {updating ? (
          <Box role="status" aria-label={t("devices.os_update.in_progress")}>
            <Typography variant="body2">
              {t("devices.os_update.in_progress_at", { progress: device.download_progress ?? 0 })}
            </Typography>
            <LinearProgress variant="determinate" value={device.download_progress ?? 0} sx={{ mt: 0.5 }} />
          </Box>
        ) : !parseable ? (
          <Alert severity="error">{t("devices.os_update.unparseable")}</Alert>
        ) : versions.isSuccess && releases.length === 0 ? (
          <Alert severity="info">{t("devices.os_update.not_supported_for_type", { type: slug ?? "" })}</Alert>
        ) : versions.isSuccess && targets.length === 0 && refusal ? (
          <Alert severity="info">
            {`${t("devices.os_update.version_not_supported_for_type", { version: current?.version, type: slug ?? "" })} ${refusal}.`}
          </Alert>
        ) : versions.isSuccess && targets.length === 0 ? (
          <Alert severity="success">{t("devices.os_update.up_to_date")}</Alert>
        ) : targets.length > 0 ? (
          <>
            <Box sx={{ ...settingRow, alignItems: "center" }}>
              <TextField
                select
                size="small"
                label={t("devices.os_update.target")}
                value={target}
                onChange={(event) => {
                  setChosen(event.target.value);
                  setTakeoverConfirmed(false);
                }}
                sx={{ minWidth: 220 }}
              >
                {targets.map(({ target: release }) => (
                  <MenuItem key={release.raw_version} value={release.raw_version}>
                    {versionLabel(release, t("devices.os_update.esr"))}
                  </MenuItem>
                ))}
              </TextField>
              {assessment ? <CategoryChip category={assessment.category} /> : null}
            </Box>
            {assessment?.category === "offline" ? (
              <Alert severity="info">{t("devices.os_update.offline")}</Alert>
            ) : null}
            {assessment?.category === "updatable_with_switch_to_esr" ? (
              <Alert severity="info">{t("devices.os_update.esr_switch")}</Alert>
            ) : null}
            {assessment?.takeover ? (
              <TakeoverWarning confirmed={takeoverConfirmed} onConfirmed={setTakeoverConfirmed} />
            ) : null}
            <Box>
              <Button
                variant="contained"
                disableElevation
                disabled={
                  busy ||
                  !assessment ||
                  !STARTABLE_OS_UPDATE_CATEGORIES.includes(assessment.category) ||
                  (assessment.takeover === true && !takeoverConfirmed)
                }
                onClick={start}
              >
                {t("devices.os_update.start")}
              </Button>
            </Box>
          </>
        ) : null}
      </Box>
    </Setting>
  );
}

/** Device settings: the supervisor update section (spec 2 §2, §5, §7). */
export function SupervisorUpdateSetting({ device }: { device: Device }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const arch = device.is_of__device_type[0]?.is_of__cpu_architecture[0]?.id;
  const releases = useSupervisorReleases(arch === undefined ? [] : [arch]);
  const { error, busy, run } = useSubmission();
  const [chosen, setChosen] = useState("");
  const options = (arch === undefined ? undefined : releases.data?.[arch]) ?? [];
  const blocked = supervisorUpdateBlocked(device.os_version);
  const runningRelease = options.find((release) => release.raw_version === device.supervisor_version);
  const value = chosen || options[0]?.raw_version || "";
  const submit = () =>
    void run(async () => {
      await sdk.models.device.pinToSupervisorRelease(device.uuid, value);
      showToast("success", t("devices.supervisor_update.done", { version: value }));
      await queryClient.invalidateQueries({ queryKey: ["device", device.uuid] });
    });
  return (
    <Setting title={t("devices.supervisor_update.title")} text={t("devices.supervisor_update.text")}>
      <ErrorNote error={error} />
      <Box sx={{ display: "grid", gap: 1.5 }}>
        <Typography variant="body2" data-testid="current-supervisor-version">
          {t("devices.supervisor_update.current", { version: device.supervisor_version ?? "—" })}
          {/* The supervisor release's page is under /apps/ (spec 2 §2 Route table). */}
          {runningRelease?.belongs_to__application ? (
            <>
              {" · "}
              <TextLink
                to={`/apps/${runningRelease.belongs_to__application.__id}/releases/${runningRelease.id}` as "/"}
                underline="hover"
              >
                {t("devices.supervisor_update.release_page")}
              </TextLink>
            </>
          ) : null}
        </Typography>
        {blocked ? (
          <Alert severity="warning">{t("warnings.cannot_update_esr_supervisor")}</Alert>
        ) : (
          <Box sx={{ ...settingRow, alignItems: "center" }}>
            <TextField
              select
              size="small"
              label={t("devices.supervisor_update.release")}
              value={value}
              onChange={(event) => setChosen(event.target.value)}
              sx={{ minWidth: 220 }}
            >
              {options.map((release) => (
                <MenuItem key={release.id} value={release.raw_version}>
                  {release.raw_version}
                  {release.raw_version === device.supervisor_version
                    ? ` (${t("devices.supervisor_update.running")})`
                    : ""}
                </MenuItem>
              ))}
            </TextField>
            <Button
              variant="outlined"
              sx={{ flexShrink: 0, whiteSpace: "nowrap" }}
              disabled={busy || !value || value === device.supervisor_version}
              onClick={submit}
            >
              {t("devices.supervisor_update.start")}
            </Button>
          </Box>
        )}
      </Box>
    </Setting>
  );
}

/**
 * Batch "Update OS" (spec 2 §4 "OS update target category", "Batch actions"): choose a target
 * version; every selected device shows its category for it, and only the updatable ones update.
 */
export function OsUpdateDevicesDialog(props: { devices: UpdatableDevice[]; onClose: () => void }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { config } = useServices();
  const report = useDeviceBatch();
  const { busy, run } = useSubmission();
  const slugs = props.devices.flatMap((d) => (d.is_of__device_type[0] ? [d.is_of__device_type[0].slug] : []));
  const versions = useOsVersions(slugs);
  const [target, setTarget] = useState("");
  const [takeoverConfirmed, setTakeoverConfirmed] = useState(false);
  const all = new Map<string, OsRelease>();
  for (const list of Object.values(versions.data ?? {}))
    for (const release of list) all.set(release.raw_version, release);
  const offered = [...all.values()].sort((a, b) =>
    (parseOsVersion(b.raw_version)?.major ?? 0) !== (parseOsVersion(a.raw_version)?.major ?? 0)
      ? (parseOsVersion(b.raw_version)?.major ?? 0) - (parseOsVersion(a.raw_version)?.major ?? 0)
      : b.raw_version.localeCompare(a.raw_version, undefined, { numeric: true }),
  );
  const rows = props.devices.map((device) => ({
    device,
    assessment: target
      ? osUpdateCategory(deviceFacts(device), versions.data?.[device.is_of__device_type[0]?.slug ?? ""] ?? [], target)
      : undefined,
  }));
  const updatable = rows.filter(
    (row) => row.assessment && STARTABLE_OS_UPDATE_CATEGORIES.includes(row.assessment.category),
  );
  const takeover = updatable.some((row) => row.assessment?.takeover);
  const submit = () =>
    void run(async () => {
      const { outcome } = await report(
        updatable.map((row) => row.device.uuid),
        (uuid) =>
          startOsUpdate(
            sdk,
            config.deviceActionsHost ?? config.apiUrl,
            uuid,
            target,
            t("devices.os_update.cannot_start"),
          ),
        t("devices.os_update.started_many", { count: updatable.length, version: target }),
      );
      if (outcome.severity !== "error") props.onClose();
    });
  return (
    <ConfirmDialog
      open
      title={t("devices.os_update.batch_title")}
      confirmLabel={t("devices.os_update.batch_confirm", { count: updatable.length })}
      busy={busy}
      confirmDisabled={updatable.length === 0 || (takeover && !takeoverConfirmed)}
      onConfirm={submit}
      onClose={props.onClose}
    >
      <Box sx={{ display: "grid", gap: 2, pt: 1 }}>
        <TextField
          select
          size="small"
          label={t("devices.os_update.target")}
          value={target}
          onChange={(event) => {
            setTarget(event.target.value);
            setTakeoverConfirmed(false);
          }}
        >
          {offered.map((release) => (
            <MenuItem key={release.raw_version} value={release.raw_version}>
              {versionLabel(release, t("devices.os_update.esr"))}
            </MenuItem>
          ))}
        </TextField>
        <DeviceCategories
          label={t("devices.os_update.categories")}
          versionHeader={t("devices.os_update.os_version")}
          rows={rows.map(({ device, assessment }) => ({
            device,
            version: device.os_version,
            category: assessment ? <CategoryChip category={assessment.category} /> : null,
          }))}
        />
        {[
          ...new Set(
            rows
              .filter((row) => row.assessment?.category === "version_not_available")
              .map((row) => row.device.is_of__device_type[0]?.slug ?? ""),
          ),
        ].map((type) => (
          <Alert key={type} severity="info">
            {t("devices.os_update.version_not_supported_for_type", { version: target, type })}
          </Alert>
        ))}
        {target && updatable.length === 0 ? (
          <Alert severity="info">{t("devices.os_update.none_updatable")}</Alert>
        ) : null}
        {rows.some((row) => row.assessment?.category === "updatable_with_switch_to_esr") ? (
          <Alert severity="info">{t("devices.os_update.esr_switch")}</Alert>
        ) : null}
        {takeover ? <TakeoverWarning confirmed={takeoverConfirmed} onConfirmed={setTakeoverConfirmed} /> : null}
      </Box>
    </ConfirmDialog>
  );
}

/** A takeover (advanced update) loses data and cannot roll back (spec 2 §5): confirmed before it starts. */
function TakeoverWarning(props: { confirmed: boolean; onConfirmed: (confirmed: boolean) => void }) {
  const { t } = useTranslation();
  return (
    <Alert severity="warning">
      {t("devices.os_update.takeover")}
      <FormControlLabel
        sx={{ display: "flex", mt: 1 }}
        control={
          <Checkbox
            size="small"
            checked={props.confirmed}
            onChange={(event) => props.onConfirmed(event.target.checked)}
          />
        }
        label={t("devices.os_update.takeover_confirm")}
      />
    </Alert>
  );
}

/** The selected devices of a group update, each with its version and what the update does to it. */
function DeviceCategories(props: {
  label: string;
  versionHeader: string;
  rows: Array<{ device: UpdatableDevice; version: string | null; category: ReactNode }>;
}) {
  const { t } = useTranslation();
  return (
    <Table size="small" aria-label={props.label}>
      <TableHead>
        <TableRow>
          <TableCell>{t("devices.os_update.device")}</TableCell>
          <TableCell>{props.versionHeader}</TableCell>
          <TableCell>{t("devices.os_update.category_column")}</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {props.rows.map(({ device, version, category }) => (
          <TableRow key={device.uuid}>
            <TableCell>{device.device_name}</TableCell>
            <TableCell>{version ?? "—"}</TableCell>
            <TableCell>{category ?? "—"}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

/** Batch "Update supervisor": one version for every selected device (per architecture); ESR devices are skipped. */
export function SupervisorUpdateDevicesDialog(props: { devices: UpdatableDevice[]; onClose: () => void }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const report = useDeviceBatch();
  const { busy, run } = useSubmission();
  const architectures = props.devices.flatMap((d) => d.is_of__device_type[0]?.is_of__cpu_architecture[0]?.id ?? []);
  const releases = useSupervisorReleases(architectures);
  const [version, setVersion] = useState("");
  const versions = [...new Set(Object.values(releases.data ?? {}).flatMap((list) => list.map((r) => r.raw_version)))];
  const rows = props.devices.map((device) => {
    const arch = device.is_of__device_type[0]?.is_of__cpu_architecture[0]?.id ?? -1;
    const available = (releases.data?.[arch] ?? []).some((release) => release.raw_version === version);
    const state: "esr" | "not_found" | "current" | "updatable" | undefined = isEsrVersion(device.os_version)
      ? "esr"
      : !version
        ? undefined
        : !available
          ? "not_found"
          : device.supervisor_version === version
            ? "current"
            : "updatable";
    return { device, state };
  });
  const updatable = rows.filter((row) => row.state === "updatable");
  const submit = () =>
    void run(async () => {
      const { outcome } = await report(
        updatable.map((row) => row.device.uuid),
        (uuid) => sdk.models.device.pinToSupervisorRelease(uuid, version),
        t("devices.supervisor_update.done_many", { count: updatable.length, version }),
      );
      if (outcome.severity !== "error") props.onClose();
    });
  return (
    <ConfirmDialog
      open
      title={t("devices.supervisor_update.batch_title")}
      confirmLabel={t("devices.supervisor_update.batch_confirm", { count: updatable.length })}
      busy={busy}
      confirmDisabled={updatable.length === 0}
      onConfirm={submit}
      onClose={props.onClose}
    >
      <Box sx={{ display: "grid", gap: 2, pt: 1 }}>
        <TextField
          select
          size="small"
          label={t("devices.supervisor_update.release")}
          value={version}
          onChange={(event) => setVersion(event.target.value)}
        >
          {versions.map((raw) => (
            <MenuItem key={raw} value={raw}>
              {raw}
            </MenuItem>
          ))}
        </TextField>
        <DeviceCategories
          label={t("devices.supervisor_update.devices")}
          versionHeader={t("devices.supervisor_update.version")}
          rows={rows.map(({ device, state }) => ({
            device,
            version: device.supervisor_version,
            category: state ? (
              <Chip
                size="small"
                variant="outlined"
                color={state === "updatable" ? "primary" : state === "current" ? "success" : "default"}
                label={t(`devices.supervisor_update.state.${state}`)}
              />
            ) : null,
          }))}
        />
        {rows.some((row) => row.state === "esr") ? (
          <Alert severity="warning">{t("warnings.cannot_update_esr_supervisor")}</Alert>
        ) : null}
      </Box>
    </ConfirmDialog>
  );
}

/** balenaOS's public changelog (meta-balena), the notes of every OS version in the catalogue. */
const OS_CHANGELOG_URL = "https://github.com/balena-os/meta-balena/blob/master/CHANGELOG.md";

/**
 * The host OS version on the device summary (spec 2 §2): a link to the OS changelog and a badge
 * with the version's release line (current, next, sunset, outdated; ESR) from the catalogue.
 */
export function OsVersionItem({ device }: { device: Pick<Device, "os_version" | "is_of__device_type"> }) {
  const { t } = useTranslation();
  const slug = device.is_of__device_type[0]?.slug;
  const versions = useOsVersions(slug ? [slug] : []);
  const running = parseOsVersion(device.os_version);
  if (!device.os_version) return <>—</>;
  const release = running
    ? (versions.data?.[slug ?? ""] ?? []).find((candidate) => {
        const parsed = parseOsVersion(candidate.raw_version);
        return parsed !== undefined && compareOsVersions(parsed, running) === 0;
      })
    : undefined;
  const line = (release as { line?: string } | undefined)?.line;
  const page = release as { id?: number; belongs_to__application?: { __id: number } } | undefined;
  const hostApp = page?.belongs_to__application?.__id;
  return (
    <Box sx={{ display: "inline-flex", gap: 1, alignItems: "center", flexWrap: "wrap" }}>
      {/* Clickable: the OS release's page under /apps/ (spec 2 §2), then the changelog link. */}
      {page?.id && hostApp ? (
        <TextLink
          to={`/apps/${hostApp}/releases/${page.id}` as "/"}
          underline="hover"
          aria-label={t("devices.os_version.release_page", { version: device.os_version })}
        >
          {device.os_version}
        </TextLink>
      ) : (
        <span>{device.os_version}</span>
      )}
      <Link
        href={OS_CHANGELOG_URL}
        target="_blank"
        rel="noreferrer"
        variant="body2"
        aria-label={t("devices.os_version.changelog", { version: device.os_version })}
      >
        {t("devices.os_version.changelog_short")}
      </Link>
      {line && ["current", "next", "sunset", "outdated"].includes(line) ? (
        <Chip
          size="small"
          variant="outlined"
          color={line === "outdated" ? "warning" : line === "current" ? "success" : "default"}
          label={t(`devices.os_version.line.${line as "current" | "next" | "sunset" | "outdated"}`)}
        />
      ) : null}
      {release?.osType === "esr" ? <Chip size="small" variant="outlined" label={t("devices.os_version.esr")} /> : null}
    </Box>
  );
}
