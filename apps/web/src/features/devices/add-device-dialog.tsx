import { APP_VERSION } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Checkbox from "@mui/material/Checkbox";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import FormControl from "@mui/material/FormControl";
import FormControlLabel from "@mui/material/FormControlLabel";
import FormLabel from "@mui/material/FormLabel";
import MenuItem from "@mui/material/MenuItem";
import Radio from "@mui/material/Radio";
import RadioGroup from "@mui/material/RadioGroup";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk, useServices } from "../../app-services.tsx";
import { CommandBlock } from "../../components/command-block.tsx";
import { errorText } from "../../lib/errors.ts";
import { saveBlob } from "../../lib/save-blob.ts";
import type { Fleet } from "../fleet-access/data.ts";
import { latestHostOsRelease, useDeviceTypes } from "../fleets/data.ts";
import { type ExpiryChoice, expiryDateFor } from "../preferences/api-key-expiry.ts";
import { type AddDeviceCommon, detectedDeviceType, provisioningKeyName } from "./add-device-common.ts";
import { BalenaOsAddDevice } from "./balenaos-add-device.tsx";

/** Form changes reach the shown commands after 300 ms (spec 2 §9). */
export const ADD_DEVICE_DEBOUNCE_MS = 300;
export const MAX_SIMULATED_DEVICES = 1000;

export interface AgentCommandInput {
  apiUrl: string;
  fleetId: number;
  key: string;
  deviceType: string;
  simulate: boolean;
  count: number;
}

/**
 * The one line a real device runs next to its downloaded config.json: the server's installer puts
 * `flotilla-agent` in /opt/flotilla-agent, registers it and starts its systemd unit (root for both).
 */
export function installerCommand(apiUrl: string): string {
  return `curl -fsSL ${apiUrl}/install.sh | sudo sh -s -- --config config.json`;
}

/** The `flotilla-agent` commands that add a real device, or N simulated ones, to the fleet. */
export function agentCommands(input: AgentCommandInput): string[] {
  const common = `--api ${input.apiUrl} --provisioning-key ${input.key} --fleet ${input.fleetId} --device-type ${input.deviceType}`;
  if (input.simulate) return [`npx flotilla-agent simulate ${common} --count ${input.count}`];
  return [`npx flotilla-agent register ${common}`, "npx flotilla-agent run"];
}

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

/**
 * Add device (spec 2 §2, §7; issue 35): choose a device type compatible with the fleet and the
 * device's operating system — Debian or Raspberry Pi OS running flotilla-agent, or balenaOS with
 * balena's own Supervisor — then download its configuration (or a configured balenaOS image).
 */
export function AddDeviceDialog({ fleet, onClose }: { fleet: Fleet; onClose: () => void }) {
  const { t } = useTranslation();
  const deviceTypes = useDeviceTypes();
  const fleetType = fleet.is_for__device_type[0];
  // Devices of another CPU architecture cannot join the fleet (spec 2 §5).
  const architecture = fleetType?.is_of__cpu_architecture[0]?.slug;
  const compatible = (deviceTypes.data ?? []).filter(
    (type) => architecture === undefined || type.is_of__cpu_architecture[0]?.slug === architecture,
  );
  const [deviceType, setDeviceType] = useState(fleetType?.slug ?? "");
  const detected = detectedDeviceType(deviceTypes.data, fleetType?.slug);
  const chosen = compatible.find((type) => type.slug === deviceType);
  const latestOs = chosen ? latestHostOsRelease(chosen) : undefined;
  const [system, setSystem] = useState<"agent" | "balenaos">("agent");
  const [expiry, setExpiry] = useState<ExpiryChoice>("30");
  const systemLabel = useId();
  const header = (
    <>
      {detected && "error" in detected ? <Alert severity="error">{t(detected.error)}</Alert> : null}
      <TextField
        select
        size="small"
        label={t("devices.add.device_type")}
        value={chosen ? deviceType : ""}
        onChange={(event) => setDeviceType(event.target.value)}
        helperText={
          chosen
            ? [
                t("devices.add.architecture", { arch: chosen.is_of__cpu_architecture[0]?.slug ?? "—" }),
                latestOs
                  ? t("devices.add.latest_os", { version: latestOs.raw_version })
                  : t("devices.add.no_latest_os"),
              ].join(" · ")
            : undefined
        }
      >
        {compatible.map((type) => (
          <MenuItem key={type.slug} value={type.slug}>
            {type.name}
          </MenuItem>
        ))}
      </TextField>
      <FormControl>
        <FormLabel id={systemLabel} sx={{ typography: "body2", fontWeight: 500 }}>
          {t("devices.add.system")}
        </FormLabel>
        <RadioGroup
          row
          aria-labelledby={systemLabel}
          value={system}
          onChange={(event) => setSystem(event.target.value as typeof system)}
        >
          <FormControlLabel value="agent" control={<Radio size="small" />} label={t("devices.add.system_agent")} />
          <FormControlLabel
            value="balenaos"
            control={<Radio size="small" />}
            label={t("devices.add.system_balenaos")}
          />
        </RadioGroup>
      </FormControl>
    </>
  );
  const expirySelect = (disabled: boolean) => (
    <TextField
      select
      size="small"
      label={t("devices.add.key_expiry")}
      value={expiry}
      disabled={disabled}
      onChange={(event) => setExpiry(event.target.value as ExpiryChoice)}
    >
      {(["1", "7", "30", "90", "never"] as const).map((value) => (
        <MenuItem key={value} value={value}>
          {value === "never" ? t("devices.add.never") : t("devices.add.days", { count: Number(value) })}
        </MenuItem>
      ))}
    </TextField>
  );
  const common: AddDeviceCommon = { fleet, deviceType, expiry, header, expirySelect, onClose };
  return (
    <Dialog open onClose={onClose} maxWidth="sm" fullWidth>
      <DialogTitle>{t("devices.add.title", { fleet: fleet.app_name })}</DialogTitle>
      {system === "agent" ? <AgentAddDevice {...common} /> : <BalenaOsAddDevice {...common} />}
    </Dialog>
  );
}

/**
 * A device running flotilla-agent: a provisioning key with an expiry, then the agent's commands —
 * for a real device (config.json and the installer) or a number of simulated ones.
 */
function AgentAddDevice({ fleet, deviceType, expiry, header, expirySelect, onClose }: AddDeviceCommon) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { config } = useServices();
  const queryClient = useQueryClient();
  const [simulate, setSimulate] = useState(false);
  const [count, setCount] = useState("3");
  const [key, setKey] = useState<string>();
  const [configSaved, setConfigSaved] = useState(false);
  const [error, setError] = useState<string>();
  const countNumber = Number(count);
  const countValid = Number.isInteger(countNumber) && countNumber >= 1 && countNumber <= MAX_SIMULATED_DEVICES;
  const form = useDebounced({ deviceType, simulate, count: countValid ? countNumber : 1 }, ADD_DEVICE_DEBOUNCE_MS);
  const create = useMutation({
    meta: { reportErrors: false },
    mutationFn: async () => {
      const expiryDate = expiryDateFor(expiry, "");
      if (!expiryDate.ok) throw new Error(t(`preferences.tokens.${expiryDate.error}`));
      return sdk.models.application.generateProvisioningKey({
        slugOrUuidOrId: fleet.id,
        keyExpiryDate: expiryDate.expiryDate as string,
        keyName: provisioningKeyName(t),
      });
    },
    onSuccess: async (created) => {
      setKey(created);
      setError(undefined);
      await queryClient.invalidateQueries({ queryKey: ["fleet", fleet.id, "provisioning-keys"] });
    },
    onError: (caught) => setError(errorText(caught)),
  });
  // A real device: its configuration file (balena-sdk os.getConfig) carries a new provisioning key.
  const download = useMutation({
    meta: { reportErrors: false },
    mutationFn: async () => {
      const expiryDate = expiryDateFor(expiry, "");
      if (!expiryDate.ok) throw new Error(t(`preferences.tokens.${expiryDate.error}`));
      const options = {
        version: APP_VERSION,
        deviceType,
        provisioningKeyName: provisioningKeyName(t),
        ...(expiryDate.expiryDate ? { provisioningKeyExpiryDate: expiryDate.expiryDate } : {}),
      };
      return sdk.models.os.getConfig(fleet.id, options as Parameters<typeof sdk.models.os.getConfig>[1]);
    },
    onSuccess: async (config) => {
      saveBlob(new Blob([`${JSON.stringify(config, null, 2)}\n`], { type: "application/json" }), "config.json");
      setConfigSaved(true);
      setError(undefined);
      await queryClient.invalidateQueries({ queryKey: ["fleet", fleet.id, "provisioning-keys"] });
    },
    onError: (caught) => setError(errorText(caught)),
  });
  const shownKey = simulate ? key : undefined;
  const finished = simulate ? key !== undefined : configSaved;
  return (
    <>
      <DialogContent>
        <Stack spacing={2} sx={{ pt: 1 }}>
          {header}
          {expirySelect(simulate && finished)}
          <Box sx={{ display: "flex", alignItems: "center", gap: 2 }}>
            <FormControlLabel
              control={<Checkbox checked={simulate} onChange={(event) => setSimulate(event.target.checked)} />}
              label={t("devices.add.simulate")}
            />
            {simulate ? (
              <TextField
                size="small"
                type="number"
                label={t("devices.add.count")}
                value={count}
                onChange={(event) => setCount(event.target.value)}
                error={!countValid}
                helperText={countValid ? undefined : t("devices.add.count_invalid", { max: MAX_SIMULATED_DEVICES })}
                sx={{ width: 160 }}
                slotProps={{ htmlInput: { min: 1, max: MAX_SIMULATED_DEVICES } }}
              />
            ) : null}
          </Box>
          {error ? <Alert severity="error">{error}</Alert> : null}
          {shownKey ? (
            <>
              <Typography variant="body2" color="text.secondary">
                {t("devices.add.simulate_help")}
              </Typography>
              <CommandBlock
                label={t("devices.add.commands")}
                copyLabel={t("devices.add.copy")}
                copiedText={t("devices.add.copied")}
                lines={agentCommands({
                  apiUrl: config.apiUrl,
                  fleetId: fleet.id,
                  key: shownKey,
                  deviceType: form.deviceType,
                  simulate: true,
                  count: form.count,
                })}
              />
              <Alert severity="info">{t("devices.add.key_shown_once")}</Alert>
            </>
          ) : null}
          {!simulate && configSaved ? (
            <>
              <Typography variant="body2" color="text.secondary">
                {t("devices.add.install_help")}
              </Typography>
              <CommandBlock
                label={t("devices.add.installer")}
                copyLabel={t("devices.add.copy")}
                copiedText={t("devices.add.copied")}
                lines={[installerCommand(config.apiUrl)]}
              />
              <Alert severity="info">{t("devices.add.config_secret")}</Alert>
            </>
          ) : null}
          {finished ? null : (
            <Typography variant="body2" color="text.secondary">
              {simulate ? t("devices.add.key_help") : t("devices.add.config_help")}
            </Typography>
          )}
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{finished ? t("devices.add.done") : t("confirm.cancel")}</Button>
        {simulate && !finished ? (
          <Button variant="contained" loading={create.isPending} disabled={!deviceType} onClick={() => create.mutate()}>
            {t("devices.add.create_key")}
          </Button>
        ) : null}
        {simulate ? null : (
          <Button
            variant={configSaved ? "outlined" : "contained"}
            loading={download.isPending}
            disabled={!deviceType}
            onClick={() => download.mutate()}
          >
            {configSaved ? t("devices.add.download_again") : t("devices.add.download_config")}
          </Button>
        )}
      </DialogActions>
    </>
  );
}
