import { DEFAULT_DEVICE_TYPE, fleetNameProblem, fleetTypeState, sortFleetTypes } from "@flotilla/domain";
import CloudDownloadOutlined from "@mui/icons-material/CloudDownloadOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import CircularProgress from "@mui/material/CircularProgress";
import FormControlLabel from "@mui/material/FormControlLabel";
import MenuItem from "@mui/material/MenuItem";
import Paper from "@mui/material/Paper";
import Radio from "@mui/material/Radio";
import RadioGroup from "@mui/material/RadioGroup";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate, useSearch } from "@tanstack/react-router";
import { type FormEvent, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { PageHeader } from "../../components/page.tsx";
import { errorText, responseError } from "../../lib/errors.ts";
import { t as translate } from "../../lib/i18n.ts";
import { showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import {
  useApplicationList,
  useApplicationTypes,
  useDeviceTypes,
  useMyOrganizations,
  useOrgApplicationNames,
} from "../fleets/data.ts";
import { organizationCan } from "../orgs/access.ts";
import { pineOf } from "../orgs/data.ts";
import { useSubmission } from "../orgs/ui.tsx";
import {
  DEPLOY_CONFIG_TIMEOUT_MS,
  type DeployContract,
  type DeploySearch,
  deployArchiveUrl,
  deployDeviceType,
  fleetNameFromContract,
  savePendingDeploy,
} from "./deploy.ts";

/** The configuration could not be fetched at all (spec 1 §8 "Error loading deploy configuration"). */
class DeployConfigError extends Error {}

const deployErrorText = (error: unknown) =>
  error instanceof DeployConfigError ? translate("deploy.config_load_failed") : errorText(error);

/** `GET {api}/deploy/v1/contract?repoUrl=` with a 10 s timeout; the API's message on failure. */
async function fetchContract(apiUrl: string, token: string | undefined, repoUrl: string): Promise<DeployContract> {
  let response: Response;
  try {
    response = await fetch(`${apiUrl}/deploy/v1/contract?repoUrl=${encodeURIComponent(repoUrl)}`, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(DEPLOY_CONFIG_TIMEOUT_MS),
    });
  } catch {
    throw new DeployConfigError("deploy configuration unreachable");
  }
  if (!response.ok) throw await responseError(response);
  const body = (await response.json().catch(() => undefined)) as DeployContract | undefined;
  if (!body) throw new DeployConfigError("deploy configuration unreadable");
  return body;
}

/** `/deploy` (spec 2 §2): deploy a repository's application to a new or an existing fleet. */
export function DeployPage() {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const search = useSearch({ strict: false }) as DeploySearch;
  const source = search.repoUrl ?? search.tarballUrl;
  const contract = useQuery({
    queryKey: ["deploy-contract", search.repoUrl],
    enabled: search.repoUrl !== undefined,
    retry: false,
    meta: { handlesErrors: true },
    queryFn: async () => fetchContract(config.apiUrl, (await sdk.auth.getToken()) ?? undefined, search.repoUrl ?? ""),
  });
  const fleets = useApplicationList("fleet");
  const orgs = useMyOrganizations();
  const deviceTypes = useDeviceTypes();
  const types = useApplicationTypes();
  const administered = (orgs.data ?? []).filter((org) => organizationCan(org.role, "application", "create"));
  const [mode, setMode] = useState<"existing" | "create">();
  const [fleetId, setFleetId] = useState<number>();
  const [orgId, setOrgId] = useState<number>();
  // Only organizations the user administers can be chosen (an org-scoped list may name another).
  const chosenOrg = administered.some((org) => org.id === orgId) ? orgId : administered[0]?.id;
  const names = useOrgApplicationNames(chosenOrg);
  const [name, setName] = useState<string>();
  const [deviceTypeSlug, setDeviceTypeSlug] = useState<string>();
  const { error, busy, run } = useSubmission();
  const fleetRows = fleets.data ?? [];
  const chosenMode = mode ?? (fleetRows.length > 0 ? "existing" : "create");
  // The existing-fleet choice defaults to the first fleet (spec 2 §5).
  const chosenFleet = fleetId ?? fleetRows[0]?.id;
  const spec = contract.data?.contract;
  // What a release is built from; none for a repository that is not downloadable as an archive.
  const archiveUrl = deployArchiveUrl(search);
  useEffect(() => {
    if (name === undefined && spec) setName(fleetNameFromContract(spec.name));
  }, [name, spec]);
  const supported = spec?.supportedDeviceTypes;
  const typeChoices = (deviceTypes.data ?? []).filter((type) => !supported || supported.includes(type.slug));
  const deviceTypeValue = deviceTypeSlug ?? deployDeviceType(search, spec, DEFAULT_DEVICE_TYPE);
  const deviceType = typeChoices.find((type) => type.slug === deviceTypeValue);
  const taken = (names.data ?? []).filter((app) => app.is_of__class === "fleet").map((app) => app.app_name);
  const nameProblem = name === undefined ? undefined : fleetNameProblem(name, "fleet", taken);
  const fleetType = sortFleetTypes(types.data ?? []).find(
    (type) => fleetTypeState(type, deviceType?.contract, { isFree: true }) === "ok",
  );
  const ready =
    source !== undefined &&
    (search.repoUrl === undefined || contract.isSuccess) &&
    (chosenMode === "existing"
      ? chosenFleet !== undefined
      : !!name &&
        nameProblem === undefined &&
        deviceType !== undefined &&
        chosenOrg !== undefined &&
        fleetType !== undefined);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!ready) return;
    void run(async () => {
      let target = chosenFleet;
      if (chosenMode === "create") {
        const created = await pineOf(sdk).post<{ id?: number }>({
          resource: "application",
          body: {
            app_name: name,
            organization: chosenOrg,
            is_for__device_type: deviceType?.id,
            application_type: fleetType?.id,
            is_of__class: "fleet",
          },
        });
        if (!created?.id) throw new Error(t("fleets.could_not_find_id"));
        target = created.id;
      }
      if (target === undefined) return;
      for (const variable of spec?.applicationConfigVariables ?? []) {
        await pineOf(sdk).post({ resource: "application_config_variable", body: { application: target, ...variable } });
      }
      for (const variable of spec?.applicationEnvironmentVariables ?? []) {
        await pineOf(sdk).post({
          resource: "application_environment_variable",
          body: { application: target, ...variable },
        });
      }
      try {
        savePendingDeploy(localStorage, {
          fleetId: target,
          ...(search.repoUrl ? { repoUrl: search.repoUrl } : {}),
          ...(search.tarballUrl ? { tarballUrl: search.tarballUrl } : {}),
        });
      } catch {
        // Storage refused: the deploy is not remembered.
      }
      await queryClient.invalidateQueries({ queryKey: ["applications"] });
      if (archiveUrl === undefined) {
        // Said as it is: the variables are set, no release was built.
        showToast("info", t("deploy.variables_only"));
        await navigate({ to: `/fleets/${target}` as "/" });
        return;
      }
      // The server answers once the release exists; the build goes on in the background.
      const releaseId = await sdk.models.release.createFromUrl(target, { url: archiveUrl });
      showToast("success", t("deploy.started"));
      await navigate({ to: `/fleets/${target}/releases/${releaseId}` as "/" });
    });
  };

  return (
    <>
      <PageHeader title={t("deploy.title")} description={t("deploy.description")} />
      <Paper variant="outlined" sx={{ p: 3, maxWidth: 720 }}>
        {source === undefined ? (
          <Alert severity="error">{t("deploy.needs_url")}</Alert>
        ) : (
          <Box component="form" noValidate onSubmit={submit}>
            <Stack spacing={2.5}>
              <Box sx={{ display: "flex", gap: 1.5, alignItems: "center" }}>
                <CloudDownloadOutlined color="primary" />
                <Box sx={{ minWidth: 0 }}>
                  <Typography variant="subtitle1" sx={{ fontWeight: 600 }}>
                    {spec?.name ?? t("deploy.source")}
                  </Typography>
                  <Typography
                    variant="body2"
                    color="text.secondary"
                    sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13, overflowWrap: "anywhere" }}
                  >
                    {source}
                  </Typography>
                </Box>
              </Box>
              {spec?.description ? <Typography variant="body2">{spec.description}</Typography> : null}
              {contract.isPending && search.repoUrl ? (
                <Box sx={{ display: "flex", gap: 1, alignItems: "center" }}>
                  <CircularProgress size={16} />
                  <Typography variant="body2">{t("deploy.loading")}</Typography>
                </Box>
              ) : null}
              {contract.isError ? <Alert severity="error">{deployErrorText(contract.error)}</Alert> : null}
              {spec &&
              (spec.applicationConfigVariables.length > 0 || spec.applicationEnvironmentVariables.length > 0) ? (
                <Typography variant="body2" color="text.secondary">
                  {t("deploy.variables", {
                    count: spec.applicationConfigVariables.length + spec.applicationEnvironmentVariables.length,
                  })}
                </Typography>
              ) : null}
              {error ? <Alert severity="error">{error}</Alert> : null}
              {!fleets.isSuccess || !orgs.isSuccess ? (
                <CircularProgress size={20} aria-label={t("app.loading")} />
              ) : (
                <>
                  <RadioGroup
                    value={chosenMode}
                    onChange={(event) => setMode(event.target.value as "existing" | "create")}
                    row
                  >
                    <FormControlLabel
                      value="existing"
                      control={<Radio />}
                      label={t("deploy.existing")}
                      disabled={fleetRows.length === 0}
                    />
                    <FormControlLabel
                      value="create"
                      control={<Radio />}
                      label={t("deploy.create")}
                      disabled={administered.length === 0}
                    />
                  </RadioGroup>
                  {chosenMode === "existing" ? (
                    <TextField
                      select
                      label={t("deploy.fleet")}
                      value={chosenFleet ?? ""}
                      onChange={(event) => setFleetId(Number(event.target.value))}
                    >
                      {fleetRows.map((fleet) => (
                        <MenuItem key={fleet.id} value={fleet.id}>
                          {fleet.app_name}
                        </MenuItem>
                      ))}
                    </TextField>
                  ) : (
                    <>
                      <TextField
                        label={t("fleets.name_label.fleet")}
                        value={name ?? ""}
                        onChange={(event) => setName(event.target.value)}
                        error={nameProblem !== undefined}
                        helperText={nameProblem}
                      />
                      <TextField
                        select
                        label={t("fleets.device_type")}
                        value={deviceType ? deviceTypeValue : ""}
                        onChange={(event) => setDeviceTypeSlug(event.target.value)}
                      >
                        {typeChoices.map((type) => (
                          <MenuItem key={type.slug} value={type.slug}>
                            {type.name}
                          </MenuItem>
                        ))}
                      </TextField>
                      <TextField
                        select
                        label={t("fleets.organization")}
                        value={chosenOrg ?? ""}
                        onChange={(event) => setOrgId(Number(event.target.value))}
                      >
                        {administered.map((org) => (
                          <MenuItem key={org.id} value={org.id}>
                            {org.name}
                          </MenuItem>
                        ))}
                      </TextField>
                    </>
                  )}
                </>
              )}
              {archiveUrl !== undefined ? (
                <Alert severity="info" variant="outlined">
                  {t("deploy.release_note")}
                </Alert>
              ) : search.repoUrl === undefined || contract.isSuccess ? (
                <Alert severity="warning" variant="outlined">
                  {t("deploy.no_archive")}
                </Alert>
              ) : null}
              <Box sx={{ display: "flex", justifyContent: "flex-end", gap: 1 }}>
                <Button onClick={() => void navigate({ to: "/fleets" })}>{t("confirm.cancel")}</Button>
                <Button type="submit" variant="contained" disabled={!ready} loading={busy}>
                  {t("deploy.submit")}
                </Button>
              </Box>
            </Stack>
          </Box>
        )}
      </Paper>
    </>
  );
}
