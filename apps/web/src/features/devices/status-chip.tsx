import Box from "@mui/material/Box";
import Typography from "@mui/material/Typography";
import { useTranslation } from "react-i18next";
import { DEVICE_STATUSES, type DeviceStatus, StatusDot } from "../fleets/status.tsx";
import type { Device } from "./data.ts";

const known = (status: string): status is DeviceStatus => (DEVICE_STATUSES as readonly string[]).includes(status);

/** A device's overall status in its colour (spec 2 §4), with the progress while it updates or provisions. */
export function DeviceStatusChip({ device }: { device: Pick<Device, "overall_status" | "overall_progress"> }) {
  const { t } = useTranslation();
  const status = known(device.overall_status) ? device.overall_status : "disconnected";
  const progress =
    (status === "updating" || status === "configuring") && device.overall_progress !== null
      ? ` · ${device.overall_progress}%`
      : "";
  return (
    <Box sx={{ display: "inline-flex", alignItems: "center", gap: 1, height: "100%" }}>
      <StatusDot status={status} />
      <Typography variant="body2" component="span" data-status={status}>
        {t(`fleets.status.${status}`)}
        {progress}
      </Typography>
    </Box>
  );
}
