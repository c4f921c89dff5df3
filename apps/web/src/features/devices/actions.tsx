import { envVarNameProblem } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogContentText from "@mui/material/DialogContentText";
import DialogTitle from "@mui/material/DialogTitle";
import List from "@mui/material/List";
import ListItem from "@mui/material/ListItem";
import MenuItem from "@mui/material/MenuItem";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { TextLink } from "../../components/links.tsx";
import { useSubmission } from "../../components/settings.tsx";
import { showToast } from "../../lib/toasts.ts";
import { useApplicationList } from "../fleets/data.ts";
import { fleetCan, fleetRoleOf } from "../orgs/access.ts";
import { ReleasePicker, TRACK_FLEET } from "../releases/release-picker.tsx";
import { batchReport, runBatch } from "./batch.ts";
import type { Device } from "./data.ts";

/** Tag writes run 50 at a time (spec 2 §9); other device actions 10 at a time. */
export const TAG_CONCURRENCY = 50;
export const ACTION_CONCURRENCY = 10;

export type SupervisorAction = "identify" | "restart" | "purge" | "reboot" | "shutdown";
/** Reboot and shutdown take a force flag that overrides an update lock (spec 2 §4, §7). */
export const FORCEABLE: readonly SupervisorAction[] = ["reboot", "shutdown"];

type Sdk = ReturnType<typeof useSdk>;

function runSupervisor(sdk: Sdk, action: SupervisorAction, uuid: string, force: boolean) {
  const device = sdk.models.device;
  switch (action) {
    case "identify":
      return device.identify(uuid);
    case "restart":
      return device.restartApplication(uuid);
    case "purge":
      return device.purge(uuid);
    case "reboot":
      return device.reboot(uuid, { force });
    case "shutdown":
      return device.shutdown(uuid, { force });
  }
}

/**
 * Runs an action over devices with the batch semantics of spec 2 §4: success when one item
 * succeeds, "Operation failed with: …" when all fail, a warning naming how many failed, and for
 * an update lock a question whether to force. Returns true when something succeeded.
 */
export function useDeviceBatch() {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const report = async <T,>(
    items: readonly T[],
    action: (item: T) => Promise<unknown>,
    success: string,
    concurrency = ACTION_CONCURRENCY,
  ) => {
    const result = await runBatch(items, action, concurrency);
    const outcome = batchReport(result);
    await queryClient.invalidateQueries({ queryKey: ["fleet-devices"] });
    await queryClient.invalidateQueries({ queryKey: ["device"] });
    // "update_required" is named by the caller with links to the devices (UserActionDeniedDialog),
    // "locked" asks whether to force; failures of another kind next to them get their own toast.
    // A success toast only when every item succeeded.
    if (outcome.severity === "success") showToast("success", success);
    else if (outcome.severity === "error") showToast("error", outcome.message);
    else if (outcome.severity === "warning") {
      showToast("warning", t("devices.batch.partial", { count: outcome.failedCount, message: outcome.message }));
    } else if (outcome.others) {
      showToast(
        "warning",
        t("devices.batch.partial", { count: outcome.others.count, message: outcome.others.message }),
      );
    }
    return { outcome, result };
  };
  return report;
}

/** A supervisor action over devices, with the update-lock force prompt for reboot and shutdown. */
export function SupervisorActionDialog(props: {
  action: SupervisorAction | undefined;
  devices: Array<Pick<Device, "uuid" | "device_name">>;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const report = useDeviceBatch();
  const { busy, run: whileBusy } = useSubmission();
  const [locked, setLocked] = useState<string[]>();
  const [denied, setDenied] = useState<string[]>();
  const action = props.action;
  const close = () => {
    setLocked(undefined);
    setDenied(undefined);
    props.onClose();
  };
  const run = async (uuids: string[], force: boolean) => {
    if (!action) return;
    await whileBusy(async () => {
      const { outcome, result } = await report(
        uuids,
        (uuid) => runSupervisor(sdk, action, uuid, force),
        t(`devices.actions.${action}_done`),
      );
      if (outcome.severity === "locked" && FORCEABLE.includes(action)) {
        setLocked(result.failed.map((failure) => failure.item));
        return;
      }
      if (outcome.severity === "update_required") {
        setDenied(outcome.denied);
        return;
      }
      if (outcome.severity === "locked") showToast("warning", t("devices.errors.update_lock"));
      close();
    });
  };
  if (!action) return null;
  const danger = action === "purge" || action === "reboot" || action === "shutdown";
  if (denied) return <UserActionDeniedDialog uuids={denied} onClose={close} />;
  if (locked) {
    return (
      <ConfirmDialog
        open
        danger
        title={t(`devices.actions.${action}`)}
        text={t("devices.errors.update_lock")}
        items={props.devices.filter((d) => locked.includes(d.uuid)).map((d) => d.device_name)}
        confirmLabel={t("devices.actions.force", { action: t(`devices.actions.${action}`) })}
        busy={busy}
        onConfirm={() => void run(locked, true)}
        onClose={close}
      />
    );
  }
  return (
    <ConfirmDialog
      open
      danger={danger}
      title={t(`devices.actions.${action}`)}
      text={t(`devices.actions.${action}_text`, { count: props.devices.length })}
      items={props.devices.map((device) => device.device_name)}
      confirmLabel={t(`devices.actions.${action}`)}
      busy={busy}
      onConfirm={() =>
        void run(
          props.devices.map((device) => device.uuid),
          false,
        )
      }
      onClose={close}
    />
  );
}

type MovableDevice = Pick<Device, "uuid" | "device_name" | "os_version" | "is_pinned_on__release"> & {
  belongs_to__application: Array<{ id: number }>;
  is_of__device_type: Array<{ is_of__cpu_architecture: Array<{ id: number }> }>;
};

/** OS versions below 2.12.0 lose the old fleet's persistent data on a move (spec 2 §5, §9). */
export function losesPersistentData(osVersion: string | null): boolean {
  const match = /(\d+)\.(\d+)\.(\d+)/.exec(osVersion ?? "");
  if (!match) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major < 2 || (major === 2 && minor < 12);
}

/**
 * Move devices to another fleet (spec 2 §5, §6, §7): only fleets of the same CPU architecture
 * where the user may move devices; a pinned release stays behind (warning); old OS versions
 * lose persistent data (warning).
 */
export function MoveDevicesDialog(props: {
  devices: MovableDevice[];
  onClose: () => void;
  onMoved?: (fleetId: number) => void;
}) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const report = useDeviceBatch();
  const fleets = useApplicationList("fleet");
  const [target, setTarget] = useState("");
  const [touched, setTouched] = useState(false);
  const { busy, run: whileBusy } = useSubmission();
  const current = new Set(props.devices.map((device) => device.belongs_to__application[0]?.id));
  const architectures = new Set(props.devices.map((d) => d.is_of__device_type[0]?.is_of__cpu_architecture[0]?.id));
  // Only fleets of the devices' CPU architecture, where the user may move devices in (spec 2 §6, §7).
  const candidates = (fleets.data ?? []).filter(
    (fleet) =>
      (!current.has(fleet.id) || current.size > 1) &&
      [...architectures].every((id) => id === fleet.is_for__device_type[0]?.is_of__cpu_architecture[0]?.id) &&
      fleetCan(fleetRoleOf(fleet.user_access_roles.map((row) => row.role)), "device", "move"),
  );
  const pinned = props.devices.some((device) => device.is_pinned_on__release.length > 0);
  const oldOs = props.devices.some((device) => losesPersistentData(device.os_version));
  const submit = async () => {
    setTouched(true);
    if (!target) return;
    const fleetId = Number(target);
    await whileBusy(async () => {
      const { outcome } = await report(
        props.devices.map((device) => device.uuid),
        (uuid) => sdk.models.device.move(uuid, fleetId),
        t("devices.move.done"),
      );
      if (outcome.severity !== "error") {
        props.onClose();
        props.onMoved?.(fleetId);
      }
    });
  };
  return (
    <ConfirmDialog
      open
      title={t("devices.move.title")}
      items={props.devices.map((device) => device.device_name)}
      confirmLabel={t("devices.move.confirm")}
      busy={busy}
      onConfirm={() => void submit()}
      onClose={props.onClose}
    >
      <Box sx={{ display: "grid", gap: 2 }}>
        {touched && !target ? <Alert severity="error">{t("devices.move.all_fields")}</Alert> : null}
        <MoveTargetField loaded={Boolean(fleets.data)} candidates={candidates} value={target} onChange={setTarget} />
        {pinned ? <Alert severity="warning">{t("devices.move.pinned_warning")}</Alert> : null}
        {oldOs ? <Alert severity="warning">{t("devices.move.old_os_warning")}</Alert> : null}
      </Box>
    </ConfirmDialog>
  );
}

/** Pin devices to one of the fleet's releases, or set them back to track the fleet's release (spec 2 §4). */
export function PinDevicesDialog(props: {
  fleetId: number;
  devices: Array<Pick<Device, "uuid" | "device_name">>;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const report = useDeviceBatch();
  const [choice, setChoice] = useState(TRACK_FLEET);
  const { busy, run: whileBusy } = useSubmission();
  const submit = async () => {
    await whileBusy(async () => {
      const { outcome } = await report(
        props.devices.map((device) => device.uuid),
        (uuid) =>
          choice === TRACK_FLEET
            ? sdk.models.device.trackApplicationRelease(uuid)
            : sdk.models.device.pinToRelease(uuid, Number(choice)),
        choice === TRACK_FLEET ? t("devices.pin.tracking") : t("devices.pin.pinned"),
      );
      if (outcome.severity !== "error") props.onClose();
    });
  };
  return (
    <ConfirmDialog
      open
      title={t("devices.pin.title")}
      items={props.devices.map((device) => device.device_name)}
      confirmLabel={t("devices.pin.confirm")}
      busy={busy}
      onConfirm={() => void submit()}
      onClose={props.onClose}
    >
      <ReleasePicker
        fleetId={props.fleetId}
        kind="device"
        label={t("devices.pin.release")}
        value={choice}
        onChange={setChoice}
      />
    </ConfirmDialog>
  );
}

/** Set one tag on several devices, 50 writes at a time (spec 2 §9). */
export function TagDevicesDialog(props: { devices: Array<Pick<Device, "uuid" | "device_name">>; onClose: () => void }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const report = useDeviceBatch();
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const { busy, run: whileBusy } = useSubmission();
  const submit = async () => {
    if (!key.trim()) return;
    await whileBusy(async () => {
      await report(
        props.devices.map((device) => device.uuid),
        (uuid) => sdk.models.device.tags.set(uuid, key.trim(), value),
        t("devices.tags.saved"),
        TAG_CONCURRENCY,
      );
      props.onClose();
    });
  };
  return (
    <ConfirmDialog
      open
      title={t("devices.tags.add_title")}
      items={props.devices.map((device) => device.device_name)}
      confirmLabel={t("devices.tags.save")}
      confirmDisabled={!key.trim()}
      busy={busy}
      onConfirm={() => void submit()}
      onClose={props.onClose}
    >
      <TagFields tagKey={key} value={value} onKey={setKey} onValue={setValue} />
    </ConfirmDialog>
  );
}

/** Delete devices (spec 2 §7); the list refreshes, a device page goes to its fleet. */
export function DeleteDevicesDialog(props: {
  devices: Array<Pick<Device, "uuid" | "device_name">>;
  onClose: () => void;
  onDeleted?: () => void;
}) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const report = useDeviceBatch();
  const { busy, run: whileBusy } = useSubmission();
  const submit = async () => {
    await whileBusy(async () => {
      const { outcome } = await report(
        props.devices.map((device) => device.uuid),
        (uuid) => sdk.models.device.remove(uuid),
        t("devices.delete.done", { count: props.devices.length }),
      );
      if (outcome.severity !== "error") {
        props.onClose();
        props.onDeleted?.();
      }
    });
  };
  return (
    <ConfirmDialog
      open
      danger
      title={t("devices.delete.title", { count: props.devices.length })}
      text={t("devices.delete.text")}
      items={props.devices.map((device) => device.device_name)}
      confirmLabel={t("devices.delete.confirm")}
      confirmText={props.devices.length === 1 ? props.devices[0]?.device_name : undefined}
      busy={busy}
      onConfirm={() => void submit()}
      onClose={props.onClose}
    />
  );
}

/**
 * Set or remove one environment variable on several devices at once (issue 8's bulk edit),
 * 50 writes at a time with the batch semantics of spec 2 §4.
 */
export function DeviceVariableDialog(props: {
  mode: "set" | "remove";
  devices: Array<Pick<Device, "uuid" | "device_name">>;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const report = useDeviceBatch();
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const [touched, setTouched] = useState(false);
  const { busy, run: whileBusy } = useSubmission();
  const problem = envVarNameProblem(name.trim());
  const submit = async () => {
    setTouched(true);
    if (problem) return;
    await whileBusy(async () => {
      await report(
        props.devices.map((device) => device.uuid),
        (uuid) =>
          props.mode === "set"
            ? sdk.models.device.envVar.set(uuid, name.trim(), value)
            : sdk.models.device.envVar.remove(uuid, name.trim()),
        props.mode === "set" ? t("devices.variable.set_done") : t("devices.variable.remove_done"),
        TAG_CONCURRENCY,
      );
      props.onClose();
    });
  };
  return (
    <ConfirmDialog
      open
      title={props.mode === "set" ? t("devices.variable.set_title") : t("devices.variable.remove_title")}
      items={props.devices.map((device) => device.device_name)}
      confirmLabel={props.mode === "set" ? t("devices.variable.set") : t("devices.variable.remove")}
      danger={props.mode === "remove"}
      busy={busy}
      onConfirm={() => void submit()}
      onClose={props.onClose}
    >
      <Box sx={{ display: "grid", gap: 2 }}>
        <TextField
          size="small"
          label={t("variables.name")}
          value={name}
          onChange={(event) => setName(event.target.value)}
          error={touched && problem !== undefined}
          helperText={touched ? problem : undefined}
          slotProps={{ htmlInput: { spellCheck: false, autoComplete: "off" } }}
        />
        {props.mode === "set" ? (
          <TextField
            size="small"
            label={t("variables.value")}
            value={value}
            onChange={(event) => setValue(event.target.value)}
          />
        ) : null}
      </Box>
    </ConfirmDialog>
  );
}

/**
 * Devices whose supervisor refused a user action because it is too old (spec 2 §8
 * actions_messages.user_action_denied): each named by its short uuid, linked to its page.
 */
export function UserActionDeniedDialog(props: { uuids: readonly string[]; onClose: () => void }) {
  const { t } = useTranslation();
  return (
    <Dialog open onClose={props.onClose} maxWidth="sm" fullWidth>
      <DialogTitle>{t("actions_messages.user_action_denied")}</DialogTitle>
      <DialogContent>
        <DialogContentText>{t("actions_messages.update_required_to_allow_user_actions")}</DialogContentText>
        <List dense aria-label={t("actions_messages.devices_to_update")}>
          {props.uuids.map((uuid) => (
            <ListItem key={uuid} disableGutters>
              <TextLink to="/devices/$uuid" params={{ uuid }} onClick={props.onClose} sx={{ fontFamily: "monospace" }}>
                {uuid.slice(0, 7)}
              </TextLink>
            </ListItem>
          ))}
        </List>
      </DialogContent>
      <DialogActions>
        <Button variant="contained" onClick={props.onClose}>
          {t("form.close")}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

/** The fleet devices move to, among those they may go to (or why there is none). */
export function MoveTargetField(props: {
  loaded: boolean;
  candidates: readonly { id: number; app_name: string }[];
  value: string;
  onChange: (value: string) => void;
}) {
  const { t } = useTranslation();
  return (
    <>
      {props.loaded && props.candidates.length === 0 ? (
        <Alert severity="info">{t("devices.move.no_candidates")}</Alert>
      ) : null}
      <TextField
        select
        size="small"
        label={t("devices.move.fleet")}
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
      >
        {props.candidates.map((fleet) => (
          <MenuItem key={fleet.id} value={String(fleet.id)}>
            {fleet.app_name}
          </MenuItem>
        ))}
      </TextField>
    </>
  );
}

/** A tag's key and value for a batch of devices, with the note that an existing tag is overwritten. */
export function TagFields(props: {
  tagKey: string;
  value: string;
  onKey: (key: string) => void;
  onValue: (value: string) => void;
}) {
  const { t } = useTranslation();
  return (
    <Box sx={{ display: "grid", gap: 2 }}>
      <TextField
        size="small"
        label={t("devices.tags.key")}
        value={props.tagKey}
        onChange={(e) => props.onKey(e.target.value)}
      />
      <TextField
        size="small"
        label={t("devices.tags.value")}
        value={props.value}
        onChange={(e) => props.onValue(e.target.value)}
      />
      <Typography variant="caption" color="text.secondary">
        {t("devices.tags.overwrite_note")}
      </Typography>
    </Box>
  );
}
