import { configVarNameProblem, envVarNameProblem, envVarNamespaceNotice, type VariableRules } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import Link from "@mui/material/Link";
import Paper from "@mui/material/Paper";
import Stack from "@mui/material/Stack";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TablePagination from "@mui/material/TablePagination";
import TableRow from "@mui/material/TableRow";
import Typography from "@mui/material/Typography";
import type { TFunction } from "i18next";
import { type ReactNode, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { TextLink } from "../../components/links.tsx";
import { PageHeader } from "../../components/page.tsx";
import { MONO_FONT_STACK } from "../../theme.ts";
import { usePageDevice } from "../devices/data.ts";
import { fleetAbilities } from "../fleet-access/data.ts";
import { usePageFleet } from "../fleets/summary-page.tsx";
import { fleetCan, fleetRoleOf } from "../orgs/access.ts";
import {
  asInherited,
  type DeviceOverride,
  deviceConfigWriter,
  deviceEnvWriter,
  fleetConfigWriter,
  fleetEnvWriter,
  useDeviceConfigVars,
  useDeviceEnvVars,
  useDeviceOverrides,
  useFleetConfigVars,
  useFleetEnvVars,
  useFleetServices,
  useRefetchVariables,
} from "./data.ts";
import { rulesOf, schemaValueField, useConfigVarSchema } from "./schema.tsx";
import { VariablesEditor } from "./variables-editor.tsx";

/** Batch saves: 50 calls at a time, 10 from the configuration pages (spec 2 §7). */
const ENV_CONCURRENCY = 50;
const CONFIG_CONCURRENCY = 10;
/** The device-overrides dialog shows 5 rows per page (spec 2 §2). */
export const OVERRIDES_PAGE_SIZE = 5;

function nameRule(kind: "env" | "config", rules: VariableRules, t: TFunction) {
  return (name: string, taken: string[]) =>
    (kind === "env" ? envVarNameProblem(name, rules) : configVarNameProblem(name, rules)) ??
    (taken.includes(name) ? t("variables.already_exists") : undefined);
}

function OverridesDialog(props: { name: string; overrides: DeviceOverride[]; onClose: () => void }) {
  const { t } = useTranslation();
  const [page, setPage] = useState(0);
  const rows = props.overrides.slice(page * OVERRIDES_PAGE_SIZE, (page + 1) * OVERRIDES_PAGE_SIZE);
  return (
    <Dialog open onClose={props.onClose} maxWidth="sm" fullWidth>
      <DialogTitle>{t("variables.overrides_title", { name: props.name })}</DialogTitle>
      <DialogContent>
        <Table size="small" aria-label={t("variables.overrides_title", { name: props.name })}>
          <TableBody>
            {rows.map((row) => (
              <TableRow key={row.id}>
                <TableCell sx={{ pl: 0 }}>
                  <TextLink to="/devices/$uuid" params={{ uuid: row.device.uuid }} underline="hover">
                    {row.device.device_name}
                  </TextLink>
                </TableCell>
                <TableCell sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13, wordBreak: "break-all" }}>
                  {row.value}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
        <TablePagination
          component="div"
          count={props.overrides.length}
          page={page}
          rowsPerPage={OVERRIDES_PAGE_SIZE}
          rowsPerPageOptions={[OVERRIDES_PAGE_SIZE]}
          onPageChange={(_event, next) => setPage(next)}
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onClose}>{t("devices.notes.close")}</Button>
      </DialogActions>
    </Dialog>
  );
}

/** A column counting the devices that override a fleet variable, opening the overrides dialog. */
function useOverridesColumn(overrides: DeviceOverride[] | undefined) {
  const { t } = useTranslation();
  const [open, setOpen] = useState<string>();
  const column = {
    title: t("variables.device_overrides"),
    cell: (row: { name: string }) => {
      const count = (overrides ?? []).filter((override) => override.name === row.name).length;
      return count === 0 ? (
        <Box component="span" sx={{ color: "text.disabled" }}>
          0
        </Box>
      ) : (
        <Link component="button" type="button" variant="body2" onClick={() => setOpen(row.name)}>
          {t("variables.overrides_count", { count })}
        </Link>
      );
    },
  };
  const dialog = open ? (
    <OverridesDialog
      name={open}
      overrides={(overrides ?? []).filter((override) => override.name === open)}
      onClose={() => setOpen(undefined)}
    />
  ) : null;
  return { column, dialog };
}

/** `/fleets/{id}/envvars` (spec 2 §2): fleet-wide and per-service environment variables. */
export function FleetEnvVarsPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { fleet } = usePageFleet();
  const vars = useFleetEnvVars(fleet?.id);
  const services = useFleetServices(fleet?.id);
  const overrides = useDeviceOverrides(fleet?.id, "env");
  const schema = useConfigVarSchema(fleet?.is_for__device_type[0]?.slug);
  const refetch = useRefetchVariables();
  const { column, dialog } = useOverridesColumn(overrides.data);
  const header = (
    <PageHeader title={t("variables.fleet_env_title")} description={t("variables.fleet_env_description")} />
  );
  if (!fleet) return null;
  if (!vars.data) return vars.isError ? <LoadFailed header={header} retry={() => vars.refetch()} /> : null;
  const role = fleetRoleOf(fleet.user_access_roles.map((row) => row.role));
  return (
    <>
      {header}
      <VariablesEditor
        label={t("variables.env_label")}
        stored={vars.data}
        services={services.data}
        writer={fleetEnvWriter(sdk, fleet.id)}
        concurrency={ENV_CONCURRENCY}
        canEdit={fleetCan(role, "application_environment_variable", "create")}
        nameProblem={nameRule("env", rulesOf(schema.data), t)}
        nameNotice={(name) => envVarNamespaceNotice(name, rulesOf(schema.data))}
        extraColumn={column}
        onApplied={refetch}
        emptyText={t("variables.none")}
      />
      {dialog}
    </>
  );
}

/** `/fleets/{id}/config` (spec 2 §2 "Fleet configuration page"): configuration and custom variables, device overrides. */
export function FleetConfigPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { fleet } = usePageFleet();
  const vars = useFleetConfigVars(fleet?.id);
  const overrides = useDeviceOverrides(fleet?.id, "config");
  const schema = useConfigVarSchema(fleet?.is_for__device_type[0]?.slug);
  const refetch = useRefetchVariables();
  const { column, dialog } = useOverridesColumn(overrides.data);
  const header = (
    <PageHeader title={t("variables.fleet_config_title")} description={t("variables.fleet_config_description")} />
  );
  if (!fleet) return null;
  if (!vars.data) return vars.isError ? <LoadFailed header={header} retry={() => vars.refetch()} /> : null;
  const abilities = fleetAbilities(fleet);
  const role = fleetRoleOf(fleet.user_access_roles.map((row) => row.role));
  const known = Object.keys(schema.data?.configVarSchema.properties ?? {});
  return (
    <>
      {header}
      <Stack spacing={2}>
        <VariablesEditor
          label={t("variables.config_label")}
          stored={vars.data}
          writer={fleetConfigWriter(sdk, fleet.id)}
          concurrency={CONFIG_CONCURRENCY}
          canEdit={abilities.read && fleetCan(role, "application_config_variable", "create")}
          nameProblem={nameRule("config", rulesOf(schema.data), t)}
          suggestions={known}
          valueField={schemaValueField(schema.data, t)}
          extraColumn={column}
          onApplied={refetch}
          emptyText={t("variables.none_config")}
        />
        <KnownConfiguration schema={schema.data} set={new Set(vars.data.map((row) => row.name))} />
      </Stack>
      {dialog}
    </>
  );
}

/**
 * A variables page whose list could not be loaded: the toast said why (spec 2 §8); the page keeps
 * its header and offers to try again instead of the error page.
 */
function LoadFailed(props: { header: ReactNode; retry: () => void }) {
  const { t } = useTranslation();
  return (
    <>
      {props.header}
      <Alert
        severity="error"
        variant="outlined"
        action={
          <Button color="inherit" size="small" onClick={props.retry}>
            {t("variables.load_retry")}
          </Button>
        }
      >
        {t("variables.load_failed")}
      </Alert>
    </>
  );
}

/** The configuration the device type knows and its defaults, for the variables not set. */
function KnownConfiguration(props: { schema: ReturnType<typeof useConfigVarSchema>["data"]; set: Set<string> }) {
  const { t } = useTranslation();
  const entries = Object.entries(props.schema?.configVarSchema.properties ?? {}).filter(
    ([name]) => !props.set.has(name),
  );
  if (entries.length === 0) return null;
  return (
    <Paper variant="outlined" component="section" aria-label={t("variables.defaults")}>
      <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, px: 2, py: 1.5 }}>
        {t("variables.defaults")}
      </Typography>
      <Table size="small" aria-label={t("variables.defaults")}>
        <TableBody>
          {entries.map(([name, property]) => (
            <TableRow key={name}>
              <TableCell sx={{ pl: 2, fontFamily: MONO_FONT_STACK, fontSize: 13 }}>{name}</TableCell>
              <TableCell sx={{ color: "text.secondary" }}>{property.description}</TableCell>
              <TableCell sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13, color: "text.secondary" }}>
                {property.default === undefined ? "—" : String(property.default)}
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </Paper>
  );
}

/** `/devices/{uuid}/envvars`: the device's own variables, and the fleet's it inherits (overridable). */
export function DeviceEnvVarsPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { device } = usePageDevice();
  const fleetId = device?.belongs_to__application[0]?.id;
  const own = useDeviceEnvVars(device?.id);
  const fleetVars = useFleetEnvVars(fleetId);
  const services = useFleetServices(fleetId);
  const schema = useConfigVarSchema(device?.is_of__device_type[0]?.slug);
  const refetch = useRefetchVariables();
  const header = (
    <PageHeader title={t("variables.device_env_title")} description={t("variables.device_env_description")} />
  );
  if (!device) return null;
  if (!own.data) return own.isError ? <LoadFailed header={header} retry={() => own.refetch()} /> : null;
  const role = fleetRoleOf((device.belongs_to__application[0]?.user_access_roles ?? []).map((row) => row.role));
  const installed = new Set(own.data.installs.map((install) => install.serviceId));
  return (
    <>
      {header}
      <VariablesEditor
        label={t("variables.env_label")}
        stored={own.data.stored}
        inherited={asInherited(fleetVars.data)}
        services={(services.data ?? []).filter((service) => installed.has(service.id))}
        writer={deviceEnvWriter(sdk, device.id, own.data.installs)}
        concurrency={ENV_CONCURRENCY}
        canEdit={fleetCan(role, "device_environment_variable", "create")}
        nameProblem={nameRule("env", rulesOf(schema.data), t)}
        nameNotice={(name) => envVarNamespaceNotice(name, rulesOf(schema.data))}
        onApplied={refetch}
        emptyText={t("variables.none")}
      />
    </>
  );
}

/** `/devices/{uuid}/config`: the device's configuration variables over the fleet's. */
export function DeviceConfigPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { device } = usePageDevice();
  const fleetId = device?.belongs_to__application[0]?.id;
  const own = useDeviceConfigVars(device?.id);
  const fleetVars = useFleetConfigVars(fleetId);
  const schema = useConfigVarSchema(device?.is_of__device_type[0]?.slug);
  const refetch = useRefetchVariables();
  const header = (
    <PageHeader title={t("variables.device_config_title")} description={t("variables.device_config_description")} />
  );
  if (!device) return null;
  if (!own.data) return own.isError ? <LoadFailed header={header} retry={() => own.refetch()} /> : null;
  const role = fleetRoleOf((device.belongs_to__application[0]?.user_access_roles ?? []).map((row) => row.role));
  return (
    <>
      {header}
      <VariablesEditor
        label={t("variables.config_label")}
        stored={own.data}
        inherited={asInherited(fleetVars.data)}
        writer={deviceConfigWriter(sdk, device.id)}
        concurrency={CONFIG_CONCURRENCY}
        canEdit={fleetCan(role, "device_config_variable", "create")}
        nameProblem={nameRule("config", rulesOf(schema.data), t)}
        suggestions={Object.keys(schema.data?.configVarSchema.properties ?? {})}
        valueField={schemaValueField(schema.data, t)}
        onApplied={refetch}
        emptyText={t("variables.none_config")}
      />
    </>
  );
}
