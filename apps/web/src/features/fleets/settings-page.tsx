import { FLEET_TYPE_PILL_KEYS, fleetNameProblem, fleetTypeState, sortFleetTypes } from "@flotilla/domain";
import ExpandLess from "@mui/icons-material/ExpandLess";
import ExpandMore from "@mui/icons-material/ExpandMore";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Divider from "@mui/material/Divider";
import FormControlLabel from "@mui/material/FormControlLabel";
import MenuItem from "@mui/material/MenuItem";
import Paper from "@mui/material/Paper";
import Switch from "@mui/material/Switch";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { PageHeader } from "../../components/page.tsx";
import { settingRow as row, Setting, SupportAccessSetting, useSubmission } from "../../components/settings.tsx";
import { errorText } from "../../lib/errors.ts";
import { repositoryUrlValue } from "../../lib/support-access.ts";
import { showToast } from "../../lib/toasts.ts";
import type { Fleet } from "../fleet-access/data.ts";
import { organizationCan } from "../orgs/access.ts";
import { pineOf } from "../orgs/data.ts";
import { useSessionUser } from "../preferences/use-user.ts";
import { ReleasePicker, TRACK_LATEST } from "../releases/release-picker.tsx";
import { ReleasePolicySection } from "../rollouts/policy-editor.tsx";
import {
  useApplicationTypes,
  useDeviceTypes,
  useMyOrganizations,
  useOrgApplicationNames,
  useOrganizationPlan,
} from "./data.ts";
import { FleetTypePill } from "./fleet-type-pill.tsx";
import { usePageFleet } from "./summary-page.tsx";

/** The fleet's settings mutations: PATCH application, toast, refetch (spec 2 §7, §8). */
function usePatch(fleet: Fleet) {
  const sdk = useSdk();
  const queryClient = useQueryClient();
  return async (body: Record<string, unknown>, toast: string) => {
    await pineOf(sdk).patch({ resource: "application", id: fleet.id, body });
    showToast("success", toast);
    await queryClient.invalidateQueries({ queryKey: ["fleet", fleet.id] });
    await queryClient.invalidateQueries({ queryKey: ["applications"] });
  };
}

function RenameSetting({ fleet }: { fleet: Fleet }) {
  const { t } = useTranslation();
  const patch = usePatch(fleet);
  const names = useOrgApplicationNames(fleet.organization[0]?.id);
  const [name, setName] = useState(fleet.app_name);
  const { error, busy, run } = useSubmission();
  const legacy = fleet.application_type[0]?.is_legacy === true;
  const taken = (names.data ?? [])
    .filter((app) => app.is_of__class === fleet.is_of__class && app.id !== fleet.id)
    .map((app) => app.app_name);
  const problem = name === fleet.app_name ? undefined : fleetNameProblem(name, fleet.is_of__class, taken);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (problem || name === fleet.app_name) return;
    void run(() => patch({ app_name: name }, t("fleets.renamed")));
  };
  return (
    <Setting title={t("fleets.settings.rename")} text={t(`fleets.settings.rename_text.${fleet.is_of__class}`)}>
      {legacy ? (
        <Alert severity="info">{t("fleets.settings.cannot_rename_legacy")}</Alert>
      ) : (
        <Box component="form" noValidate onSubmit={submit}>
          {fleet.is_of__class === "fleet" ? (
            <Alert severity="warning" sx={{ mb: 1.5 }}>
              {t("fleets.settings.rename_warning")}
            </Alert>
          ) : null}
          {error ? (
            <Alert severity="error" sx={{ mb: 1.5 }}>
              {error}
            </Alert>
          ) : null}
          <Box sx={row}>
            <TextField
              size="small"
              fullWidth
              label={t("fleets.settings.name")}
              value={name}
              onChange={(event) => setName(event.target.value)}
              error={problem !== undefined}
              helperText={problem}
              slotProps={{ htmlInput: { spellCheck: false, autoComplete: "off" } }}
            />
            <Button
              type="submit"
              variant="outlined"
              disabled={problem !== undefined || name === fleet.app_name}
              loading={busy}
            >
              {t("fleets.settings.rename")}
            </Button>
          </Box>
        </Box>
      )}
    </Setting>
  );
}

function FleetSupportAccess({ fleet }: { fleet: Fleet }) {
  const { t } = useTranslation();
  const patch = usePatch(fleet);
  return (
    <SupportAccessSetting
      text={t("fleets.support.text")}
      until={fleet.is_accessible_by_support_until__date}
      save={(ms, toast) => patch({ is_accessible_by_support_until__date: ms }, toast)}
    />
  );
}

function ReleaseSetting({ fleet }: { fleet: Fleet }) {
  const { t } = useTranslation();
  const patch = usePatch(fleet);
  const pinned = fleet.should_be_running__release[0];
  const current = fleet.should_track_latest_release ? TRACK_LATEST : String(pinned?.id ?? TRACK_LATEST);
  const [value, setValue] = useState(current);
  useEffect(() => setValue(current), [current]);
  const { error, busy, run } = useSubmission();
  const save = () =>
    void run(() =>
      value === TRACK_LATEST
        ? patch({ should_track_latest_release: true }, t("fleets.tracking_latest"))
        : patch(
            { should_track_latest_release: false, should_be_running__release: Number(value) },
            t("fleets.pinned_to_release"),
          ),
    );
  return (
    <Setting title={t("fleets.settings.release")} text={t("fleets.settings.release_text")}>
      {error ? (
        <Alert severity="error" sx={{ mb: 1.5 }}>
          {error}
        </Alert>
      ) : null}
      <Box sx={row}>
        <ReleasePicker
          fleetId={fleet.id}
          kind="fleet"
          label={t("fleets.settings.target_release")}
          value={value}
          onChange={setValue}
          current={fleet.should_track_latest_release ? undefined : pinned}
        />
        <Button variant="outlined" onClick={save} disabled={value === current} loading={busy}>
          {t("fleets.settings.save")}
        </Button>
      </Box>
    </Setting>
  );
}

function RepositorySettings({ fleet }: { fleet: Fleet }) {
  const { t } = useTranslation();
  const patch = usePatch(fleet);
  const [url, setUrl] = useState(fleet.is_stored_at__repository_url ?? "");
  const repo = useSubmission();
  const pub = useSubmission();
  const legacy = fleet.application_type[0]?.is_legacy === true;
  const needsRepo = legacy && !fleet.is_stored_at__repository_url && !fleet.is_public;
  return (
    <>
      <Setting title={t("fleets.settings.repository")} text={t("fleets.settings.repository_text")}>
        {repo.error ? (
          <Alert severity="error" sx={{ mb: 1.5 }}>
            {repo.error}
          </Alert>
        ) : null}
        <Box
          component="form"
          noValidate
          sx={row}
          onSubmit={(event: FormEvent) => {
            event.preventDefault();
            void repo.run(() =>
              patch({ is_stored_at__repository_url: repositoryUrlValue(url) }, t("fleets.repo_url_set")),
            );
          }}
        >
          <TextField
            size="small"
            fullWidth
            label={t("fleets.settings.repository_url")}
            placeholder="https://github.com/owner/repository"
            value={url}
            onChange={(event) => setUrl(event.target.value)}
          />
          <Button
            type="submit"
            variant="outlined"
            loading={repo.busy}
            disabled={url === (fleet.is_stored_at__repository_url ?? "")}
          >
            {t("fleets.settings.save")}
          </Button>
        </Box>
      </Setting>
      <Setting title={t("fleets.settings.public")} text={t("fleets.settings.public_text")}>
        {pub.error ? (
          <Alert severity="error" sx={{ mb: 1.5 }}>
            {pub.error}
          </Alert>
        ) : null}
        <FormControlLabel
          control={
            <Switch
              checked={fleet.is_public}
              disabled={pub.busy || needsRepo}
              onChange={(event) =>
                void pub.run(() =>
                  patch(
                    { is_public: event.target.checked },
                    event.target.checked ? t("fleets.settings.made_public") : t("fleets.settings.made_private"),
                  ),
                )
              }
            />
          }
          label={fleet.is_public ? t("fleets.settings.is_public") : t("fleets.settings.is_private")}
        />
        {needsRepo ? (
          <Typography variant="body2" color="text.secondary">
            {t("fleets.settings.must_first_enter_repo_url")}
          </Typography>
        ) : null}
      </Setting>
    </>
  );
}

function FleetTypeSetting({ fleet }: { fleet: Fleet }) {
  const { t } = useTranslation();
  const patch = usePatch(fleet);
  const types = useApplicationTypes();
  const plan = useOrganizationPlan(fleet.organization[0]?.id);
  const isFree = plan.data ? plan.data.free_plan_device_allowance !== null : true;
  const contract = fleet.is_for__device_type[0]?.contract;
  const options = sortFleetTypes(types.data ?? []).map((type) => ({
    type,
    state: fleetTypeState(type, contract, { isFree }),
  }));
  const current = fleet.application_type[0];
  const [value, setValue] = useState(current?.slug ?? "");
  const { error, busy, run } = useSubmission();
  const chosen = options.find((option) => option.type.slug === value);
  const upgrade = options.find((option) => option.state === "ok" && !option.type.is_legacy);
  const save = (slug: string) => {
    const option = options.find((o) => o.type.slug === slug);
    if (!option) return;
    void run(() => patch({ application_type: option.type.id }, t("fleets.fleet_type_changed")));
  };
  return (
    <Setting title={t("fleets.settings.fleet_type")} text={t("fleets.settings.fleet_type_text")}>
      {current?.is_legacy && upgrade ? (
        <Alert
          severity="warning"
          sx={{ mb: 1.5 }}
          action={
            <Button color="inherit" size="small" onClick={() => save(upgrade.type.slug)}>
              {t("fleets.settings.upgrade_to", { name: upgrade.type.name })}
            </Button>
          }
        >
          {t("fleets.settings.legacy_warning")}
        </Alert>
      ) : null}
      {error ? (
        <Alert severity="error" sx={{ mb: 1.5 }}>
          {error}
        </Alert>
      ) : null}
      <Box sx={row}>
        <TextField
          select
          size="small"
          fullWidth
          label={t("fleets.fleet_type")}
          value={chosen ? value : ""}
          onChange={(event) => setValue(event.target.value)}
          slotProps={{ select: { renderValue: (slug) => options.find((o) => o.type.slug === slug)?.type.name } }}
        >
          {options.map(({ type, state }) => {
            const pill = FLEET_TYPE_PILL_KEYS[state];
            return (
              <MenuItem key={type.slug} value={type.slug} disabled={state !== "ok"}>
                <Box sx={{ display: "flex", alignItems: "center", gap: 1 }}>
                  {type.name}
                  {pill ? <FleetTypePill pill={pill} /> : null}
                </Box>
              </MenuItem>
            );
          })}
        </TextField>
        <Button
          variant="outlined"
          onClick={() => save(value)}
          disabled={!chosen || value === current?.slug}
          loading={busy}
        >
          {t("fleets.settings.change")}
        </Button>
      </Box>
    </Setting>
  );
}

function DeviceTypeSetting({ fleet }: { fleet: Fleet }) {
  const { t } = useTranslation();
  const patch = usePatch(fleet);
  const deviceTypes = useDeviceTypes();
  const current = fleet.is_for__device_type[0];
  const arch = current?.is_of__cpu_architecture[0]?.slug;
  // Only device types of the same CPU architecture (spec 2 §5).
  const compatible = (deviceTypes.data ?? []).filter((type) => type.is_of__cpu_architecture[0]?.slug === arch);
  const [value, setValue] = useState(current?.slug ?? "");
  const { error, busy, run } = useSubmission();
  const chosen = compatible.find((type) => type.slug === value);
  return (
    <Setting
      title={t("fleets.settings.device_type")}
      text={t("fleets.settings.device_type_text", { arch: arch ?? "?" })}
    >
      {error ? (
        <Alert severity="error" sx={{ mb: 1.5 }}>
          {error}
        </Alert>
      ) : null}
      {deviceTypes.isSuccess && compatible.length === 0 ? (
        <Alert severity="warning">{t("fleets.settings.no_compatible_architecture")}</Alert>
      ) : (
        <Box sx={row}>
          <TextField
            select
            size="small"
            fullWidth
            label={t("fleets.device_type")}
            value={chosen ? value : ""}
            onChange={(event) => setValue(event.target.value)}
          >
            {compatible.map((type) => (
              <MenuItem key={type.slug} value={type.slug}>
                {type.name}
              </MenuItem>
            ))}
          </TextField>
          <Button
            variant="outlined"
            disabled={!chosen || value === current?.slug}
            loading={busy}
            onClick={() =>
              chosen &&
              void run(() => patch({ is_for__device_type: chosen.id }, t("fleets.settings.device_type_changed")))
            }
          >
            {t("fleets.settings.change")}
          </Button>
        </Box>
      )}
    </Setting>
  );
}

function DangerZone({ fleet, abilities }: { fleet: Fleet; abilities: ReturnType<typeof usePageFleet>["abilities"] }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const me = useSessionUser();
  const orgs = useMyOrganizations();
  const [open, setOpen] = useState(false);
  const [dialog, setDialog] = useState<"leave" | "transfer" | "delete">();
  const [target, setTarget] = useState<number | "">("");
  const membership = useQuery({
    queryKey: ["fleet", fleet.id, "my-membership", me?.id],
    enabled: me !== undefined,
    queryFn: () =>
      pineOf(sdk).get<Array<{ id: number }>>({
        resource: "user_application_membership",
        options: { $select: "id", $filter: { user: me?.id, is_member_of__application: fleet.id } },
      }),
  });
  const myMembership = membership.data?.[0];
  const targets = (orgs.data ?? []).filter(
    (org) => org.id !== fleet.organization[0]?.id && organizationCan(org.role, "application", "create"),
  );
  const leaveFleet = async () => {
    await queryClient.invalidateQueries({ queryKey: ["applications"] });
    queryClient.removeQueries({ queryKey: ["fleet", fleet.id] });
    await navigate({ to: "/fleets" });
  };
  const action = useMutation({
    meta: { reportErrors: false },
    mutationFn: async (kind: "leave" | "transfer" | "delete") => {
      if (kind === "leave" && myMembership) {
        await sdk.models.application.membership.remove(myMembership.id);
        showToast("success", t("fleets.danger.access_removed"));
      } else if (kind === "transfer") {
        await pineOf(sdk).patch({ resource: "application", id: fleet.id, body: { organization: target } });
        showToast("success", t("fleets.danger.transferred", { name: fleet.app_name }));
      } else if (kind === "delete") {
        await pineOf(sdk).delete({ resource: "application", id: fleet.id });
        showToast("success", t("fleets.danger.deleted", { name: fleet.app_name }));
      }
    },
    onSuccess: async () => {
      setDialog(undefined);
      await leaveFleet();
    },
  });
  const close = () => {
    setDialog(undefined);
    action.reset();
  };
  // Remove access is offered to every user with an access role (spec 2 §6 Other rules); only a
  // direct membership can be removed here, access through the organization or a team cannot.
  const hasAccess = myMembership !== undefined || fleet.user_access_roles.length > 0;
  const entries = [
    hasAccess ? ("leave" as const) : null,
    abilities.transfer ? ("transfer" as const) : null,
    abilities.delete ? ("delete" as const) : null,
  ].filter((entry) => entry !== null);
  if (entries.length === 0) return null;
  return (
    <Paper
      variant="outlined"
      sx={{ mt: 3, borderColor: "error.light" }}
      component="section"
      aria-label={t("fleets.danger.title")}
    >
      <Box sx={{ display: "flex", alignItems: "center", px: 2.5, py: 1.5 }}>
        <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, flex: 1, color: "error.main" }}>
          {t("fleets.danger.title")}
        </Typography>
        <Button size="small" onClick={() => setOpen(!open)} endIcon={open ? <ExpandLess /> : <ExpandMore />}>
          {open ? t("fleets.danger.hide") : t("fleets.danger.show")}
        </Button>
      </Box>
      {open ? (
        <>
          <Divider />
          {entries.map((entry) => (
            <Setting
              key={entry}
              title={t(`fleets.danger.${entry}`)}
              text={t(`fleets.danger.${entry}_text.${fleet.is_of__class}`)}
            >
              {entry === "leave" && !myMembership ? (
                <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
                  {t("fleets.danger.leave_inherited")}
                </Typography>
              ) : null}
              <Button
                variant="outlined"
                color="error"
                disabled={entry === "leave" && !myMembership}
                onClick={() => setDialog(entry)}
              >
                {t(`fleets.danger.${entry}`)}
              </Button>
            </Setting>
          ))}
        </>
      ) : null}
      <ConfirmDialog
        open={dialog === "leave"}
        danger
        title={t("fleets.danger.leave")}
        text={t("fleet.remove_access_text")}
        confirmLabel={t("fleets.danger.leave")}
        busy={action.isPending}
        {...(action.error ? { error: errorText(action.error) } : {})}
        onConfirm={() => action.mutate("leave")}
        onClose={close}
      />
      <ConfirmDialog
        open={dialog === "transfer"}
        danger
        title={t("fleets.danger.transfer")}
        text={t("fleets.danger.transfer_warning")}
        confirmLabel={t("fleets.danger.transfer")}
        confirmDisabled={target === ""}
        busy={action.isPending}
        {...(action.error ? { error: errorText(action.error) } : {})}
        onConfirm={() => action.mutate("transfer")}
        onClose={close}
      >
        <TextField
          select
          fullWidth
          label={t("fleets.danger.target_organization")}
          value={target}
          onChange={(event) => setTarget(Number(event.target.value))}
          helperText={targets.length === 0 ? t("fleets.danger.no_targets") : undefined}
        >
          {targets.map((org) => (
            <MenuItem key={org.id} value={org.id}>
              {org.name}
            </MenuItem>
          ))}
        </TextField>
      </ConfirmDialog>
      <ConfirmDialog
        open={dialog === "delete"}
        danger
        title={t(`fleets.danger.delete_title.${fleet.is_of__class}`)}
        text={t(`fleets.danger.delete_warning.${fleet.is_of__class}`)}
        items={[fleet.app_name]}
        confirmText={fleet.app_name}
        confirmLabel={t("fleets.danger.delete")}
        busy={action.isPending}
        {...(action.error ? { error: errorText(action.error) } : {})}
        onConfirm={() => action.mutate("delete")}
        onClose={close}
      />
    </Paper>
  );
}

/**
 * `/fleets|apps|blocks/{id}/settings` (spec 2 §2 "Fleet settings"): needs application.update,
 * else back to `/`. Primary actions, then the danger zone (hidden until asked for).
 */
export function FleetSettingsPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { fleet, abilities } = usePageFleet();
  const refused = fleet !== undefined && !abilities.update;
  useEffect(() => {
    if (refused) void navigate({ to: "/", replace: true });
  }, [refused, navigate]);
  if (!fleet || refused) return null;
  return (
    <>
      <PageHeader title={t("fleet.settings")} description={fleet.app_name} />
      <Paper variant="outlined" component="section" aria-label={t("fleet.primary_actions")}>
        <RenameSetting key={`name-${fleet.app_name}`} fleet={fleet} />
        <FleetSupportAccess fleet={fleet} />
        <ReleaseSetting fleet={fleet} />
        <RepositorySettings key={`repo-${fleet.is_stored_at__repository_url ?? ""}`} fleet={fleet} />
        {abilities.changeType ? (
          <FleetTypeSetting key={`type-${fleet.application_type[0]?.slug}`} fleet={fleet} />
        ) : null}
        <DeviceTypeSetting key={`dt-${fleet.is_for__device_type[0]?.slug}`} fleet={fleet} />
      </Paper>
      {fleet.is_of__class === "fleet" ? <ReleasePolicySection fleet={fleet} canEdit={abilities.releasePolicy} /> : null}
      <DangerZone fleet={fleet} abilities={abilities} />
    </>
  );
}
