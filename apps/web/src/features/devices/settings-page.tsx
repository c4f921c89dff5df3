import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import FormControlLabel from "@mui/material/FormControlLabel";
import Paper from "@mui/material/Paper";
import Switch from "@mui/material/Switch";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk, useServices } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { PageHeader } from "../../components/page.tsx";
import { ErrorNote, Setting, SupportAccessSetting, settingRow, useSubmission } from "../../components/settings.tsx";
import { showToast } from "../../lib/toasts.ts";
import { shortCommit } from "../fleets/releases.ts";
import { versionText } from "../releases/model.ts";
import { DeleteDevicesDialog, MoveDevicesDialog, PinDevicesDialog } from "./actions.tsx";
import { type Device, deviceIsOnline, deviceUrl, localModeProblem, updateAbilities, usePageDevice } from "./data.ts";
import { DeviceNotes } from "./notes.tsx";
import { OsUpdateSetting, SupervisorUpdateSetting } from "./os-updates.tsx";

function useDeviceChange(device: Device) {
  const queryClient = useQueryClient();
  return async (change: () => Promise<unknown>, toast: string) => {
    await change();
    showToast("success", toast);
    await queryClient.invalidateQueries({ queryKey: ["device", device.uuid] });
  };
}

/** Rename (spec 2 §2 Device pages "Settings"): the device's name, saved with balena-sdk's device.rename. */
function RenameSetting({ device }: { device: Device }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const change = useDeviceChange(device);
  const { error, busy, run } = useSubmission();
  const [name, setName] = useState(device.device_name);
  const trimmed = name.trim();
  return (
    <Setting title={t("devices.rename.title")} text={t("devices.settings.rename_text")}>
      <ErrorNote error={error} />
      <Box
        component="form"
        sx={{ ...settingRow, alignItems: "flex-start" }}
        onSubmit={(event) => {
          event.preventDefault();
          void run(() => change(() => sdk.models.device.rename(device.uuid, trimmed), t("devices.rename.done")));
        }}
      >
        <TextField
          size="small"
          label={t("devices.rename.label")}
          value={name}
          onChange={(event) => setName(event.target.value)}
          error={trimmed === ""}
          helperText={trimmed === "" ? t("devices.settings.name_required") : undefined}
          sx={{ flex: 1 }}
        />
        <Button
          type="submit"
          variant="outlined"
          loading={busy}
          disabled={trimmed === "" || trimmed === device.device_name}
        >
          {t("devices.rename.save")}
        </Button>
      </Box>
    </Setting>
  );
}

/** Update notes (spec 2 §2): the same markdown editor as the summary, saved 500 ms after typing stops. */
function NotesSetting({ device }: { device: Device }) {
  const { t } = useTranslation();
  return (
    <Setting title={t("devices.notes.title")} text={t("devices.settings.notes_text")}>
      <DeviceNotes uuid={device.uuid} note={device.note} editable />
    </Setting>
  );
}

function ReleaseSetting({ device }: { device: Device }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const pinned = device.is_pinned_on__release[0];
  const fleet = device.belongs_to__application[0];
  return (
    <Setting title={t("devices.settings.release")} text={t("devices.settings.release_text")}>
      <Box sx={{ ...settingRow, alignItems: "center" }}>
        <Typography variant="body2" sx={{ flex: 1, fontWeight: 500 }} data-testid="device-release">
          {pinned
            ? t("devices.settings.pinned_to", { release: `${versionText(pinned)} · ${shortCommit(pinned.commit)}` })
            : t("devices.settings.tracking")}
        </Typography>
        <Button variant="outlined" onClick={() => setOpen(true)} disabled={!fleet}>
          {t("devices.settings.change_release")}
        </Button>
      </Box>
      {open && fleet ? <PinDevicesDialog fleetId={fleet.id} devices={[device]} onClose={() => setOpen(false)} /> : null}
    </Setting>
  );
}

function PublicUrlSetting({ device }: { device: Device }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { config } = useServices();
  const change = useDeviceChange(device);
  const { error, busy, run } = useSubmission();
  const url = deviceUrl(device.uuid, config.deviceUrlsBaseDomain);
  return (
    <Setting title={t("devices.settings.public_url")} text={t("devices.settings.public_url_text", { url: url ?? "" })}>
      <ErrorNote error={error} />
      <FormControlLabel
        control={
          <Switch
            checked={device.is_web_accessible}
            disabled={busy}
            onChange={(event) => {
              const on = event.target.checked;
              void run(() =>
                change(
                  () =>
                    on
                      ? sdk.models.device.enableDeviceUrl(device.uuid)
                      : sdk.models.device.disableDeviceUrl(device.uuid),
                  on ? t("devices.settings.public_url_on") : t("devices.settings.public_url_off"),
                ),
              );
            }}
          />
        }
        label={device.is_web_accessible ? t("devices.settings.enabled") : t("devices.settings.disabled")}
      />
    </Setting>
  );
}

function LocalModeSetting({ device, allowed }: { device: Device; allowed: boolean }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const change = useDeviceChange(device);
  const { error, busy, run } = useSubmission();
  const problem = localModeProblem(device);
  // Turning local mode off is always possible; turning it on follows spec 2 §5.
  const blocked = !device.is_in_local_mode && problem !== undefined;
  return (
    <Setting title={t("devices.settings.local_mode")} text={t("devices.settings.local_mode_text")}>
      <ErrorNote error={error} />
      {blocked ? (
        <Alert severity="info" sx={{ mb: 1.5 }}>
          {t(`devices.settings.local_mode_${problem}`)}
        </Alert>
      ) : null}
      <FormControlLabel
        control={
          <Switch
            checked={device.is_in_local_mode}
            disabled={busy || blocked || !allowed}
            onChange={(event) => {
              const on = event.target.checked;
              void run(() =>
                change(
                  () =>
                    on
                      ? sdk.models.device.enableLocalMode(device.uuid)
                      : sdk.models.device.disableLocalMode(device.uuid),
                  on ? t("devices.settings.local_mode_on") : t("devices.settings.local_mode_off"),
                ),
              );
            }}
          />
        }
        label={device.is_in_local_mode ? t("devices.settings.enabled") : t("devices.settings.disabled")}
      />
    </Setting>
  );
}

/**
 * Whether the fleet's organization is on a paid plan: `free_plan_device_allowance` is null on a
 * paid plan, and every member may read it (plan data itself is for administrators only).
 */
function usePaidFleetPlan(fleetId: number | undefined) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["fleet", fleetId, "paid-plan"],
    enabled: fleetId !== undefined,
    meta: { handlesErrors: true },
    queryFn: async () => {
      const [fleet] = (await sdk.pine.get({
        resource: "application",
        options: {
          $select: "id",
          $filter: { id: fleetId ?? 0 },
          $expand: { organization: { $select: ["id", "free_plan_device_allowance"] } },
        },
      } as never)) as unknown as Array<{ organization: Array<{ free_plan_device_allowance: number | null }> }>;
      return fleet?.organization[0]?.free_plan_device_allowance === null;
    },
  });
}

function DeactivateSetting({ device }: { device: Device }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const change = useDeviceChange(device);
  const { error, busy, run } = useSubmission();
  const [confirming, setConfirming] = useState(false);
  // Only an offline device can be deactivated (spec 2 §8 errors.device_must_be_offline); the server refuses too.
  const online = deviceIsOnline(device);
  const paid = usePaidFleetPlan(device.belongs_to__application[0]?.id);
  // "Needs a paid plan." only where the plan is not one (spec 2 §6); the server refuses it there too.
  const onFreePlan = paid.data === false;
  return (
    <Setting
      title={t("devices.settings.deactivate")}
      text={
        onFreePlan
          ? `${t("devices.settings.deactivate_text")} ${t("devices.settings.deactivate_paid_only")}`
          : t("devices.settings.deactivate_text")
      }
    >
      <ErrorNote error={error} />
      {device.is_active ? (
        <>
          {online ? (
            <Alert severity="info" sx={{ mb: 1.5 }}>
              {t("errors.device_must_be_offline")}
            </Alert>
          ) : null}
          <Button
            variant="outlined"
            color="warning"
            disabled={online || onFreePlan}
            onClick={() => setConfirming(true)}
          >
            {t("devices.settings.deactivate")}
          </Button>
        </>
      ) : (
        <Typography variant="body2" color="text.secondary">
          {t("devices.errors.already_inactive")}
        </Typography>
      )}
      <ConfirmDialog
        open={confirming}
        title={t("devices.settings.deactivate")}
        text={t("devices.settings.deactivate_fee")}
        items={[device.device_name]}
        confirmLabel={t("devices.settings.deactivate")}
        busy={busy}
        onConfirm={() =>
          void run(() =>
            change(() => sdk.models.device.deactivate(device.uuid), t("devices.settings.deactivated")),
          ).then(() => setConfirming(false))
        }
        onClose={() => setConfirming(false)}
      />
    </Setting>
  );
}

/** `/devices/{uuid}/settings` (spec 2 §2): the device's settings and its danger zone. */
export function DeviceSettingsPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { device, abilities } = usePageDevice();
  const [dialog, setDialog] = useState<"move" | "delete">();
  if (!device) return null;
  const updates = updateAbilities(device.belongs_to__application[0]?.user_access_roles);
  const fleetId = device.belongs_to__application[0]?.id;
  const toFleet = (id: number | undefined) =>
    void navigate({ to: "/fleets/$fleetId", params: { fleetId: String(id ?? fleetId ?? "") }, replace: true });
  return (
    <>
      <PageHeader title={t("devices.settings.title")} description={t("devices.settings.description")} />
      <Paper variant="outlined" sx={{ mb: 3 }}>
        {abilities.update ? <RenameSetting key={device.device_name} device={device} /> : null}
        {abilities.update ? <NotesSetting device={device} /> : null}
        {abilities.update ? <ReleaseSetting device={device} /> : null}
        {abilities.update ? <PublicUrlSetting device={device} /> : null}
        <LocalModeSetting device={device} allowed={abilities.localMode} />
        {abilities.update ? <DeviceSupportAccess device={device} /> : null}
        {updates.osUpdate ? <OsUpdateSetting device={device} /> : null}
        {updates.supervisorUpdate ? <SupervisorUpdateSetting device={device} /> : null}
        {abilities.move ? (
          <Setting title={t("devices.move.title")} text={t("devices.move.text")}>
            <Button variant="outlined" onClick={() => setDialog("move")}>
              {t("devices.move.confirm")}
            </Button>
          </Setting>
        ) : null}
        {abilities.deactivate ? <DeactivateSetting device={device} /> : null}
      </Paper>
      {abilities.delete ? (
        <Paper variant="outlined" sx={{ borderColor: "error.light" }}>
          <Setting title={t("devices.delete.title", { count: 1 })} text={t("devices.delete.text")}>
            <Button variant="outlined" color="error" onClick={() => setDialog("delete")}>
              {t("devices.delete.confirm")}
            </Button>
          </Setting>
        </Paper>
      ) : null}
      {dialog === "move" ? (
        <MoveDevicesDialog devices={[device]} onClose={() => setDialog(undefined)} onMoved={(id) => toFleet(id)} />
      ) : null}
      {dialog === "delete" ? (
        <DeleteDevicesDialog
          devices={[device]}
          onClose={() => setDialog(undefined)}
          onDeleted={() => toFleet(fleetId)}
        />
      ) : null}
    </>
  );
}

function DeviceSupportAccess({ device }: { device: Device }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const change = useDeviceChange(device);
  return (
    <SupportAccessSetting
      text={t("devices.settings.support_text")}
      until={device.is_accessible_by_support_until__date}
      save={(ms, toast) =>
        change(
          () =>
            ms === null
              ? sdk.models.device.revokeSupportAccess(device.uuid)
              : sdk.models.device.grantSupportAccess(device.uuid, ms),
          toast,
        )
      }
    />
  );
}
