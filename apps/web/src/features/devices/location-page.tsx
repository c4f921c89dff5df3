import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import FormControlLabel from "@mui/material/FormControlLabel";
import Paper from "@mui/material/Paper";
import Radio from "@mui/material/Radio";
import RadioGroup from "@mui/material/RadioGroup";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { PageHeader } from "../../components/page.tsx";
import { ErrorNote, useSubmission } from "../../components/settings.tsx";
import { showToast } from "../../lib/toasts.ts";
import { statusColor } from "../fleets/status.tsx";
import { type Device, usePageDevice } from "./data.ts";
import { DeviceMap } from "./device-map.tsx";

type Mode = "auto" | "manual";

/** Latitude and longitude accept only numbers (spec 2 §5). */
export const isCoordinate = (value: string, limit: number) =>
  /^-?\d+(\.\d+)?$/.test(value.trim()) && Math.abs(Number(value)) <= limit;

/**
 * Whether the location can be saved (spec 2 §5): not while saving, not without permission, not
 * when nothing changed, not with an empty or non-numeric latitude or longitude.
 */
export function locationSaveDisabled(input: {
  mode: Mode;
  latitude: string;
  longitude: string;
  saving: boolean;
  allowed: boolean;
  device: Pick<Device, "custom_latitude" | "custom_longitude">;
}): boolean {
  if (input.saving || !input.allowed) return true;
  const hasCustom = Boolean(input.device.custom_latitude && input.device.custom_longitude);
  if (input.mode === "auto") return !hasCustom;
  if (input.latitude.trim() === "" || input.longitude.trim() === "") return true;
  if (!isCoordinate(input.latitude, 90) || !isCoordinate(input.longitude, 180)) return true;
  return (
    input.latitude.trim() === input.device.custom_latitude && input.longitude.trim() === input.device.custom_longitude
  );
}

/** `/devices/{uuid}/location` (spec 2 §2, §4 "Custom location"). */
export function DeviceLocationPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const { device, abilities } = usePageDevice();
  const [editing, setEditing] = useState(false);
  const [mode, setMode] = useState<Mode>();
  const [latitude, setLatitude] = useState<string>();
  const [longitude, setLongitude] = useState<string>();
  const { error, busy, run } = useSubmission();
  if (!device) return null;
  const custom = Boolean(device.custom_latitude && device.custom_longitude);
  const currentMode: Mode = mode ?? (custom ? "manual" : "auto");
  const lat = latitude ?? device.custom_latitude ?? "";
  const lng = longitude ?? device.custom_longitude ?? "";
  const shownLat = currentMode === "manual" ? lat : (device.latitude ?? "");
  const shownLng = currentMode === "manual" ? lng : (device.longitude ?? "");
  const position: [number, number] | undefined =
    isCoordinate(shownLat, 90) && isCoordinate(shownLng, 180) ? [Number(shownLat), Number(shownLng)] : undefined;
  const reset = () => {
    setMode(undefined);
    setLatitude(undefined);
    setLongitude(undefined);
    setEditing(false);
  };
  const save = () =>
    void run(async () => {
      if (currentMode === "manual") {
        await sdk.models.device.setCustomLocation(device.uuid, { latitude: lat.trim(), longitude: lng.trim() });
      } else {
        await sdk.models.device.unsetCustomLocation(device.uuid);
      }
      await queryClient.invalidateQueries({ queryKey: ["device", device.uuid] });
      showToast("success", t("devices.location.saved"));
      reset();
    });
  const disabled = locationSaveDisabled({
    mode: currentMode,
    latitude: lat,
    longitude: lng,
    saving: busy,
    allowed: abilities.update,
    device,
  });
  return (
    <>
      <PageHeader
        title={t("devices.location.title")}
        description={t("devices.location.description")}
        actions={
          abilities.update && !editing ? (
            <Button variant="outlined" onClick={() => setEditing(true)}>
              {t("devices.location.edit")}
            </Button>
          ) : undefined
        }
      />
      {!position && !editing ? (
        <Alert severity="info" sx={{ mb: 2 }}>
          {t("devices.errors.location_not_determined")}
        </Alert>
      ) : null}
      <Box sx={{ display: "grid", gap: 2, gridTemplateColumns: { xs: "1fr", lg: editing ? "2fr 1fr" : "1fr" } }}>
        <DeviceMap
          label={t("devices.location.map")}
          points={
            position
              ? [{ key: device.uuid, position, label: device.device_name, color: statusColor(device.overall_status) }]
              : []
          }
          center={position}
          zoom={position ? 6 : 2}
          // A click while the options are open switches to manual and fills the coordinates (spec 2 §4).
          onMapClick={
            editing
              ? (clickedLat, clickedLng) => {
                  setMode("manual");
                  setLatitude(clickedLat.toFixed(6));
                  setLongitude(clickedLng.toFixed(6));
                }
              : undefined
          }
        />
        {editing ? (
          <Paper variant="outlined" component="section" aria-label={t("devices.location.options")} sx={{ p: 2 }}>
            <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, mb: 1 }}>
              {t("devices.location.options")}
            </Typography>
            <ErrorNote error={error} />
            <RadioGroup value={currentMode} onChange={(event) => setMode(event.target.value as Mode)}>
              <FormControlLabel value="auto" control={<Radio />} label={t("devices.location.auto")} />
              <FormControlLabel value="manual" control={<Radio />} label={t("devices.location.manual")} />
            </RadioGroup>
            {currentMode === "manual" ? (
              <Box sx={{ display: "grid", gap: 1.5, mt: 1 }}>
                <TextField
                  size="small"
                  label={t("devices.location.latitude")}
                  value={lat}
                  onChange={(event) => setLatitude(event.target.value)}
                  error={lat.trim() !== "" && !isCoordinate(lat, 90)}
                  helperText={
                    lat.trim() !== "" && !isCoordinate(lat, 90) ? t("devices.location.numbers_only") : undefined
                  }
                  slotProps={{ htmlInput: { inputMode: "decimal" } }}
                />
                <TextField
                  size="small"
                  label={t("devices.location.longitude")}
                  value={lng}
                  onChange={(event) => setLongitude(event.target.value)}
                  error={lng.trim() !== "" && !isCoordinate(lng, 180)}
                  helperText={
                    lng.trim() !== "" && !isCoordinate(lng, 180) ? t("devices.location.numbers_only") : undefined
                  }
                  slotProps={{ htmlInput: { inputMode: "decimal" } }}
                />
                <Typography variant="caption" color="text.secondary">
                  {t("devices.location.click_hint")}
                </Typography>
              </Box>
            ) : null}
            <Box sx={{ display: "flex", gap: 1, justifyContent: "flex-end", mt: 2 }}>
              <Button onClick={reset}>{t("confirm.cancel")}</Button>
              <Button variant="contained" disabled={disabled} loading={busy} onClick={save}>
                {t("devices.location.save")}
              </Button>
            </Box>
          </Paper>
        ) : null}
      </Box>
    </>
  );
}
