import { supervisorMajor, USER_ACTIONS_MIN_SUPERVISOR_MAJOR } from "@flotilla/domain";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import CircularProgress from "@mui/material/CircularProgress";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { errorText } from "../../lib/errors.ts";
import { t as translate } from "../../lib/i18n.ts";
import { pollingOptions } from "../../lib/query-client.ts";
import { showToast } from "../../lib/toasts.ts";
import { Card } from "../orgs/ui.tsx";
import { versionText } from "../releases/model.ts";
import type { Device } from "./data.ts";

export type ServiceControl = "start" | "stop" | "restart";
const DONE = { start: "started", stop: "stopped", restart: "restarted" } as const;

/** One service as the device reports it (balena-sdk getWithServiceDetails' current_services_by_app). */
export type ServiceRow = {
  name: string;
  imageId: number;
  status: string;
  downloadProgress: number | null;
  version: string | null;
};

const normal = (status: string) => status.trim().toLowerCase();

/** Spec 2 §4 "Container buttons": start off while running, stop off when exited or stopped, restart off when exited. */
export function controlDisabled(control: ServiceControl, status: string): boolean {
  const state = normal(status);
  if (control === "start") return state === "running";
  if (control === "stop") return state === "exited" || state === "stopped";
  return state === "exited";
}

/**
 * Service status colours (spec 2 §4): running and idle green, stopped red, others blue. An exited
 * container is stopped too (Flotilla's reading: the simulator and the supervisor say "exited").
 */
export function serviceStatusColour(status: string): "success" | "error" | "info" {
  const state = normal(status);
  if (state === "running" || state === "idle") return "success";
  if (state === "stopped" || state === "exited") return "error";
  return "info";
}

/** A failed control: the device may no longer run the service (spec 2 §8 errors.service_not_found). */
export function serviceErrorText(error: unknown, service: string): string {
  const missing = error instanceof Error && /Service not found/.test(error.message);
  return missing ? translate("errors.service_not_found", { service }) : errorText(error);
}

/** Container controls only for supervisor 7 or later, or when the device runs several services (spec 2 §4, §9). */
export function showsContainerControls(supervisorVersion: string | null, serviceCount: number): boolean {
  return (supervisorMajor(supervisorVersion) ?? 0) >= USER_ACTIONS_MIN_SUPERVISOR_MAJOR || serviceCount > 1;
}

type CurrentServices = Record<
  string,
  Array<{ image_id: number; status: string; download_progress: number | null; raw_version?: string | null }>
>;

export function useServiceRows(uuid: string) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["device", uuid, "services"],
    ...pollingOptions(),
    queryFn: async (): Promise<ServiceRow[]> => {
      const details = await sdk.models.device.getWithServiceDetails(uuid, { $select: ["id", "uuid"] });
      // balena-sdk groups them by fleet slug; a device belongs to one fleet.
      const byApp =
        (details as unknown as { current_services_by_app?: Record<string, CurrentServices> }).current_services_by_app ??
        {};
      const services: CurrentServices = Object.assign({}, ...Object.values(byApp));
      return Object.entries(services).flatMap(([name, installs]) => {
        const newest = installs[0];
        return newest
          ? [
              {
                name,
                imageId: newest.image_id,
                status: newest.status,
                downloadProgress: newest.download_progress,
                version: newest.raw_version ? versionText({ raw_version: newest.raw_version }) : null,
              },
            ]
          : [];
      });
    },
  });
}

/**
 * The device's services (spec 2 §2 "Container table"): status with its colour (and progress while
 * downloading), start, stop, restart and show logs per service.
 */
export function ServicesCard(props: { device: Device; canControl: boolean; onShowLogs: (service: string) => void }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const rows = useServiceRows(props.device.uuid);
  const [busy, setBusy] = useState<string>();
  const services = rows.data ?? [];
  const controls = showsContainerControls(props.device.supervisor_version, services.length);
  const blocked = !props.canControl
    ? t("devices.errors.not_allowed")
    : !props.device.is_connected_to_vpn
      ? t("devices.errors.must_be_online")
      : undefined;

  const run = async (control: ServiceControl, service: ServiceRow) => {
    setBusy(`${control}:${service.name}`);
    try {
      const call = {
        start: sdk.models.device.startService,
        stop: sdk.models.device.stopService,
        restart: sdk.models.device.restartService,
      }[control];
      await call(props.device.uuid, service.imageId);
      showToast("success", t(`devices.services.${DONE[control]}`, { service: service.name }));
      await queryClient.invalidateQueries({ queryKey: ["device", props.device.uuid, "services"] });
    } catch (error) {
      showToast("error", serviceErrorText(error, service.name));
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <Card title={t("devices.services.title", { count: services.length })}>
      {services.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {rows.isLoading ? t("devices.services.loading") : t("devices.services.none")}
        </Typography>
      ) : (
        <Table size="small" aria-label={t("devices.services.table")}>
          <TableHead>
            <TableRow>
              <TableCell>{t("devices.services.service")}</TableCell>
              <TableCell>{t("devices.services.status")}</TableCell>
              <TableCell>{t("devices.services.release")}</TableCell>
              <TableCell align="right">{t("devices.services.actions")}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {services.map((service) => (
              <TableRow key={service.name}>
                <TableCell sx={{ fontWeight: 600 }}>{service.name}</TableCell>
                <TableCell>
                  <Box sx={{ display: "inline-flex", alignItems: "center", gap: 0.75 }}>
                    <Box
                      component="span"
                      sx={{
                        width: 8,
                        height: 8,
                        borderRadius: "50%",
                        bgcolor: `${serviceStatusColour(service.status)}.main`,
                      }}
                    />
                    {service.status}
                    {service.downloadProgress !== null && normal(service.status) !== "running"
                      ? ` (${service.downloadProgress}%)`
                      : ""}
                  </Box>
                </TableCell>
                <TableCell>{service.version ?? "—"}</TableCell>
                <TableCell align="right" sx={{ whiteSpace: "nowrap" }}>
                  {controls
                    ? (["start", "stop", "restart"] as const).map((control) => (
                        <Tooltip key={control} title={blocked ?? ""}>
                          <span>
                            <Button
                              size="small"
                              aria-label={t(`devices.services.${control}_named`, { service: service.name })}
                              disabled={
                                blocked !== undefined || busy !== undefined || controlDisabled(control, service.status)
                              }
                              // The control that is running shows it until the device has answered.
                              aria-busy={busy === `${control}:${service.name}`}
                              startIcon={
                                busy === `${control}:${service.name}` ? (
                                  <CircularProgress size={12} color="inherit" />
                                ) : undefined
                              }
                              onClick={() => run(control, service)}
                            >
                              {t(`devices.services.${control}`)}
                            </Button>
                          </span>
                        </Tooltip>
                      ))
                    : null}
                  <Button
                    size="small"
                    aria-label={t("devices.services.logs_named", { service: service.name })}
                    onClick={() => props.onShowLogs(service.name)}
                  >
                    {t("devices.services.logs")}
                  </Button>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
    </Card>
  );
}
