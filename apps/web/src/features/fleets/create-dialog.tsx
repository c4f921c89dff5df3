import {
  DEFAULT_DEVICE_TYPE,
  FLEET_TYPE_PILL_KEYS,
  fleetNameProblem,
  fleetTypeState,
  isDiscontinuedDeviceType,
  sortFleetTypes,
} from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import MenuItem from "@mui/material/MenuItem";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { showToast } from "../../lib/toasts.ts";
import { usePreference } from "../../lib/use-preference.ts";
import { type ApplicationClass, organizationCan } from "../orgs/access.ts";
import { pineOf } from "../orgs/data.ts";
import { useSubmission } from "../orgs/ui.tsx";
import {
  classPath,
  useApplicationTypes,
  useDeviceTypes,
  useMyOrganizations,
  useOrgApplicationNames,
  useOrganizationPlan,
} from "./data.ts";
import { FleetTypePill } from "./fleet-type-pill.tsx";
import { suggestName } from "./name-suggestion.ts";

/**
 * The organization the create dialog starts with: the one chosen in the dialog, else the page's
 * (an organization's list), else the one last worked in, else the first the user administers.
 * Only organizations the user administers count.
 */
export function preferredOrganization(
  administered: readonly number[],
  ...candidates: Array<number | undefined>
): number | undefined {
  return candidates.find((id) => id !== undefined && administered.includes(id)) ?? administered[0];
}

/**
 * Create a fleet, app or block (spec 2 §2, §5): a suggested adjective-noun name checked live by
 * the name rules, the device type (raspberrypi4-64 by default, discontinued types marked), the
 * organization (only those the user administers), and the fleet type with its pill. Create stays
 * disabled while anything is invalid; the new resource's page opens.
 */
export function CreateApplicationDialog(props: { kind: ApplicationClass; orgId?: number; onClose: () => void }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const orgs = useMyOrganizations();
  const deviceTypes = useDeviceTypes();
  const types = useApplicationTypes();
  const administered = (orgs.data ?? []).filter((org) => organizationCan(org.role, "application", "create"));
  const [orgId, setOrgId] = useState<number | undefined>();
  const [lastOrganization, setLastOrganization] = usePreference("lastOrganization");
  // Only organizations the user administers can be chosen (an org-scoped list may name another).
  const chosenOrg = preferredOrganization(
    administered.map((org) => org.id),
    orgId,
    props.orgId,
    lastOrganization,
  );
  const names = useOrgApplicationNames(chosenOrg);
  const plan = useOrganizationPlan(chosenOrg);
  const taken = useMemo(
    () => (names.data ?? []).filter((app) => app.is_of__class === props.kind).map((app) => app.app_name),
    [names.data, props.kind],
  );
  const [name, setName] = useState<string>();
  const [deviceTypeSlug, setDeviceTypeSlug] = useState(DEFAULT_DEVICE_TYPE);
  const [typeSlug, setTypeSlug] = useState<string>();
  const { error, busy, run } = useSubmission();

  // The suggestion waits for the organization's names, so it is free there.
  useEffect(() => {
    if (name === undefined && names.isSuccess) setName(suggestName(taken));
  }, [name, names.isSuccess, taken]);

  const deviceType = (deviceTypes.data ?? []).find((type) => type.slug === deviceTypeSlug);
  const isFree = plan.data ? plan.data.free_plan_device_allowance !== null : true;
  const typeOptions = sortFleetTypes(types.data ?? []).map((type) => ({
    type,
    state: fleetTypeState(type, deviceType?.contract, { isFree }),
  }));
  // Microservices when it can be chosen, else the first usable type.
  const usable = typeOptions.filter((option) => option.state === "ok");
  const defaultType = (usable.find((option) => option.type.slug === "microservices") ?? usable[0])?.type.slug;
  const chosenType = typeOptions.find((option) => option.type.slug === (typeSlug ?? defaultType));
  const nameProblem = name === undefined ? undefined : fleetNameProblem(name, props.kind, taken);
  const noAdmin = orgs.isSuccess && administered.length === 0;
  const invalid =
    !name ||
    nameProblem !== undefined ||
    !deviceType ||
    !chosenOrg ||
    !chosenType ||
    chosenType.state !== "ok" ||
    noAdmin;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (invalid || !deviceType || !chosenOrg || !chosenType || !name) return;
    await run(async () => {
      const created = await pineOf(sdk).post<{ id?: number }>({
        resource: "application",
        body: {
          app_name: name,
          organization: chosenOrg,
          is_for__device_type: deviceType.id,
          application_type: chosenType.type.id,
          is_of__class: props.kind,
        },
      });
      if (!created?.id) throw new Error(t("fleets.could_not_find_id"));
      showToast("success", t("fleets.created", { name }));
      setLastOrganization(chosenOrg);
      await queryClient.invalidateQueries({ queryKey: ["applications"] });
      await queryClient.invalidateQueries({ queryKey: ["orgs"] });
      props.onClose();
      await navigate({ to: `${classPath(props.kind)}/${created.id}` as "/" });
    });
  };

  const title = t(`fleets.create_title.${props.kind}`);
  return (
    <Dialog open onClose={props.onClose} maxWidth="sm" fullWidth>
      <Box component="form" noValidate onSubmit={submit}>
        <DialogTitle>{title}</DialogTitle>
        <DialogContent>
          <Stack spacing={2.25} sx={{ pt: 1 }}>
            {noAdmin ? (
              <Alert severity="info">{t("fleets.contact_administrator")}</Alert>
            ) : (
              <>
                {error ? <Alert severity="error">{error}</Alert> : null}
                <TextField
                  label={t(`fleets.name_label.${props.kind}`)}
                  value={name ?? ""}
                  autoFocus
                  fullWidth
                  onChange={(event) => setName(event.target.value)}
                  error={nameProblem !== undefined}
                  helperText={nameProblem ?? t("fleets.name_hint")}
                  slotProps={{ htmlInput: { spellCheck: false, autoComplete: "off" } }}
                />
                <TextField
                  select
                  label={t("fleets.device_type")}
                  value={deviceType ? deviceTypeSlug : ""}
                  fullWidth
                  onChange={(event) => setDeviceTypeSlug(event.target.value)}
                  error={deviceTypes.isSuccess && !deviceType}
                  helperText={deviceTypes.isSuccess && !deviceType ? t("fleets.device_type_required") : undefined}
                >
                  {(deviceTypes.data ?? []).map((type) => {
                    const discontinued = isDiscontinuedDeviceType(type.contract);
                    return (
                      <MenuItem key={type.slug} value={type.slug} disabled={discontinued}>
                        <Box sx={{ display: "flex", alignItems: "center", gap: 1, width: "100%" }}>
                          <span>{type.name}</span>
                          {discontinued ? <FleetTypePill pill="discontinued" /> : null}
                        </Box>
                      </MenuItem>
                    );
                  })}
                </TextField>
                <TextField
                  select
                  label={t("fleets.organization")}
                  value={chosenOrg ?? ""}
                  fullWidth
                  disabled={administered.length === 0}
                  onChange={(event) => setOrgId(Number(event.target.value))}
                >
                  {administered.map((org) => (
                    <MenuItem key={org.id} value={org.id}>
                      {org.name}
                    </MenuItem>
                  ))}
                </TextField>
                <TextField
                  select
                  label={t("fleets.fleet_type")}
                  value={chosenType?.type.slug ?? ""}
                  fullWidth
                  onChange={(event) => setTypeSlug(event.target.value)}
                  slotProps={{
                    select: { renderValue: (value) => typeOptions.find((o) => o.type.slug === value)?.type.name },
                  }}
                >
                  {typeOptions.map(({ type, state }) => {
                    const pill = FLEET_TYPE_PILL_KEYS[state];
                    return (
                      <MenuItem
                        key={type.slug}
                        value={type.slug}
                        disabled={state !== "ok"}
                        sx={{ alignItems: "flex-start" }}
                      >
                        <Box sx={{ display: "flex", flexDirection: "column", py: 0.25 }}>
                          <Box sx={{ display: "flex", alignItems: "center", gap: 1 }}>
                            <Typography variant="body2" sx={{ fontWeight: 600 }}>
                              {type.name}
                            </Typography>
                            {pill ? <FleetTypePill pill={pill} /> : null}
                          </Box>
                          {type.description ? (
                            <Typography variant="caption" color="text.secondary">
                              {type.description}
                            </Typography>
                          ) : null}
                        </Box>
                      </MenuItem>
                    );
                  })}
                </TextField>
              </>
            )}
          </Stack>
        </DialogContent>
        <DialogActions>
          <Button onClick={props.onClose}>{t("confirm.cancel")}</Button>
          <Button type="submit" variant="contained" disabled={invalid} loading={busy}>
            {t(`fleets.create.${props.kind}`)}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}
