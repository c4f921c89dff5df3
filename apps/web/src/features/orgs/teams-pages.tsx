import type { FleetRole } from "@flotilla/domain";
import AddOutlined from "@mui/icons-material/AddOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import DriveFileRenameOutlineOutlined from "@mui/icons-material/DriveFileRenameOutlineOutlined";
import GroupsOutlined from "@mui/icons-material/GroupsOutlined";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import MenuItem from "@mui/material/MenuItem";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { AccessList, ConfirmRemoveDialog } from "../../components/access-list.tsx";
import { FormDialog } from "../../components/form-dialog.tsx";
import { TextLink } from "../../components/links.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { reportResourceNotFound, showToast } from "../../lib/toasts.ts";
import {
  type ApplicationClass,
  DEFAULT_FLEET_ROLE,
  FREE_PLAN_ACCESS,
  organizationAbilities,
  type PlanAccess,
} from "./access.ts";
import { type Team, useMyOrgRole, useOrgApplications, usePaidPlan, useTeams } from "./data.ts";
import { ApplicationLink } from "./org-pages.tsx";
import { FleetRolePicker } from "./role-picker.tsx";
import {
  Card,
  countSelected,
  NameDialog,
  SELECTED_LIST_HEIGHT,
  SelectedItems,
  useNumericParam,
  useSubmission,
} from "./ui.tsx";

/** Runs access edits one at a time (spec 2 §9, spec 3 §9: concurrency 1). */
export async function oneAtATime<T>(items: readonly T[], run: (item: T) => Promise<unknown>): Promise<void> {
  for (const item of items) await run(item);
}

/** `/orgs/{orgId}/teams` (spec 3 §2): the teams; create, rename, delete. */
export function TeamsPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const orgId = useNumericParam("orgId");
  const teams = useTeams(orgId);
  const mine = useMyOrgRole(orgId);
  const abilities = organizationAbilities(mine.role, mine.administratorCount);
  const [creating, setCreating] = useState(false);
  const [renaming, setRenaming] = useState<Team>();
  const [deleting, setDeleting] = useState<Team>();
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["orgs", orgId] });
  const remove = useMutation({
    mutationFn: (team: Team) => sdk.models.team.remove(team.id),
    onSuccess: () => {
      showToast("success", t("orgs.team_deleted"));
      setDeleting(undefined);
    },
    onSettled: refresh,
  });
  const rows = teams.data ?? [];
  return (
    <>
      <PageHeader
        title={t("orgs.teams")}
        description={t("orgs.teams_description")}
        actions={
          abilities.manageTeams ? (
            <Button variant="contained" startIcon={<AddOutlined />} onClick={() => setCreating(true)}>
              {t("orgs.create_team")}
            </Button>
          ) : null
        }
      />
      <AccessList
        label={t("orgs.teams")}
        rows={rows}
        paper
        hover
        empty={
          teams.isSuccess ? (
            <EmptyState icon={<GroupsOutlined />} title={t("orgs.no_teams")} text={t("orgs.no_teams_text")} />
          ) : undefined
        }
        columns={[
          {
            header: t("orgs.name"),
            cell: (team) => (
              <TextLink
                to="/orgs/$orgId/teams/$teamId"
                params={{ orgId: String(orgId), teamId: String(team.id) }}
                underline="hover"
                sx={{ fontWeight: 500 }}
              >
                {team.name}
              </TextLink>
            ),
          },
          { header: t("orgs.members"), align: "right", cell: (team) => team.team_membership?.length ?? 0 },
          { header: t("orgs.access"), align: "right", cell: (team) => team.team_application_access?.length ?? 0 },
        ]}
        actions={
          abilities.manageTeams
            ? [
                {
                  icon: <DriveFileRenameOutlineOutlined fontSize="small" />,
                  label: (team) => t("orgs.rename_named", { name: team.name }),
                  tooltip: () => t("orgs.rename"),
                  onClick: setRenaming,
                },
                {
                  icon: <DeleteOutlined fontSize="small" />,
                  color: "error",
                  label: (team) => t("orgs.delete_named", { name: team.name }),
                  tooltip: () => t("orgs.delete_team"),
                  onClick: setDeleting,
                },
              ]
            : []
        }
      />
      <NameDialog
        open={creating}
        title={t("orgs.create_team")}
        label={t("orgs.team_name")}
        submitLabel={t("orgs.create")}
        onClose={() => setCreating(false)}
        onSubmit={async (name) => {
          await sdk.models.team.create(orgId, name);
          showToast("success", t("orgs.team_added"));
          await refresh();
        }}
      />
      {renaming ? (
        <NameDialog
          open
          title={t("orgs.rename_team")}
          label={t("orgs.team_name")}
          submitLabel={t("orgs.rename")}
          initial={renaming.name}
          onClose={() => setRenaming(undefined)}
          onSubmit={async (name) => {
            await sdk.models.team.rename(renaming.id, name);
            showToast("success", t("orgs.renamed"));
            await refresh();
          }}
        />
      ) : null}
      <ConfirmRemoveDialog
        target={deleting}
        name={(team) => team.name}
        title={t("orgs.delete_team")}
        text={t("orgs.delete_team_text")}
        confirmLabel={t("orgs.delete_team")}
        busy={remove.isPending}
        onConfirm={(team) => remove.mutate(team)}
        onClose={() => setDeleting(undefined)}
      />
    </>
  );
}

type TeamSection = "summary" | "members" | ApplicationClass;

/** `/orgs/{orgId}/teams/{teamId}` and its members/fleets/apps/blocks pages (spec 3 §2). */
export function TeamPage({ section = "summary" }: { section?: TeamSection }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const orgId = useNumericParam("orgId");
  const teamId = useNumericParam("teamId");
  const teams = useTeams(orgId);
  const mine = useMyOrgRole(orgId);
  const apps = useOrgApplications(orgId);
  const paid = usePaidPlan(orgId);
  const abilities = organizationAbilities(mine.role, mine.administratorCount);
  const [addingMembers, setAddingMembers] = useState(false);
  const [granting, setGranting] = useState<ApplicationClass>();
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["orgs", orgId] });
  const team = teams.data?.find((row) => row.id === teamId);

  const removeMember = useMutation({
    mutationFn: (id: number) => sdk.models.team.membership.remove(id),
    onSuccess: () => showToast("success", t("orgs.team_membership_deleted")),
    onSettled: refresh,
  });
  const removeAccess = useMutation({
    mutationFn: (id: number) => sdk.models.team.applicationAccess.remove(id),
    onSuccess: () => showToast("success", t("orgs.access_removed")),
    onSettled: refresh,
  });
  const changeAccess = useMutation({
    mutationFn: ({ id, role }: { id: number; role: FleetRole }) => sdk.models.team.applicationAccess.update(id, role),
    onSuccess: () => showToast("success", t("orgs.role_changed")),
    onSettled: refresh,
  });

  const missing = teams.isSuccess && !team;
  useEffect(() => {
    // A team that is gone (or another organization's): "Resource not found", back to the teams.
    if (!missing) return;
    reportResourceNotFound();
    void navigate({ to: "/orgs/$orgId/teams", params: { orgId: String(orgId) }, replace: true });
  }, [missing, navigate, orgId]);
  if (!team) return null;
  const classes: ApplicationClass[] =
    section === "summary" ? ["fleet", "app", "block"] : section === "members" ? [] : [section];

  return (
    <>
      <PageHeader title={team.name} description={t("orgs.team_description")} />
      <Box
        sx={{
          display: "grid",
          gap: 2,
          gridTemplateColumns: { xs: "1fr", md: section === "summary" ? "1fr 1fr" : "1fr" },
        }}
      >
        {section === "summary" || section === "members" ? (
          <Card
            title={`${t("orgs.members")} (${team.team_membership?.length ?? 0})`}
            scroll={section === "summary"}
            action={
              abilities.manageTeams ? (
                <Button size="small" startIcon={<AddOutlined />} onClick={() => setAddingMembers(true)}>
                  {t("orgs.add_members")}
                </Button>
              ) : null
            }
          >
            <AccessList
              label={t("orgs.team_members")}
              head={false}
              rows={team.team_membership ?? []}
              columns={[{ cell: (membership) => membership.user[0]?.username }]}
              actions={
                abilities.manageTeams
                  ? [
                      {
                        icon: <DeleteOutlined fontSize="small" />,
                        color: "error",
                        label: (membership) => t("orgs.remove_named", { name: membership.user[0]?.username }),
                        onClick: (membership) => removeMember.mutate(membership.id),
                      },
                    ]
                  : []
              }
            />
          </Card>
        ) : null}
        {classes.length > 0 ? (
          <Card
            title={t("orgs.access")}
            scroll={section === "summary"}
            action={
              abilities.manageTeams ? (
                <Button
                  size="small"
                  startIcon={<AddOutlined />}
                  onClick={() => setGranting(section === "summary" || section === "members" ? "fleet" : section)}
                >
                  {t("orgs.grant_access")}
                </Button>
              ) : null
            }
          >
            <AccessList
              label={t("orgs.team_access")}
              head={false}
              rows={(team.team_application_access ?? []).filter((access) =>
                classes.includes(access.grants_access_to__application[0]?.is_of__class ?? "fleet"),
              )}
              actionsWidth={48}
              columns={[
                {
                  cell: (access) => {
                    const app = access.grants_access_to__application[0];
                    return app ? <ApplicationLink app={app} /> : null;
                  },
                },
                {
                  sx: { width: 220 },
                  cell: (access) => {
                    const app = access.grants_access_to__application[0];
                    const role = (access.application_membership_role[0]?.name ?? "developer") as FleetRole;
                    return abilities.manageTeams && app ? (
                      <FleetRolePicker
                        size="small"
                        label={t("orgs.role_of", { name: app.app_name })}
                        value={role}
                        plan={paid.data ?? FREE_PLAN_ACCESS}
                        applicationClass={app.is_of__class}
                        orgId={orgId}
                        onChange={(next) => changeAccess.mutate({ id: access.id, role: next })}
                      />
                    ) : (
                      t(`orgs.fleet_roles.${role}`)
                    );
                  },
                },
              ]}
              actions={
                abilities.manageTeams
                  ? [
                      {
                        icon: <DeleteOutlined fontSize="small" />,
                        color: "error",
                        label: (access) =>
                          t("orgs.remove_named", { name: access.grants_access_to__application[0]?.app_name }),
                        onClick: (access) => removeAccess.mutate(access.id),
                      },
                    ]
                  : []
              }
            />
          </Card>
        ) : null}
      </Box>
      {addingMembers ? (
        <AddTeamMembersDialog
          team={team}
          usernames={mine.memberships
            .map((row) => row.user[0]?.username ?? "")
            .filter((name) => name && !team.team_membership?.some((m) => m.user[0]?.username === name))}
          onClose={() => setAddingMembers(false)}
          onDone={refresh}
        />
      ) : null}
      {granting ? (
        <GrantAccessDialog
          team={team}
          orgId={orgId}
          plan={paid.data ?? FREE_PLAN_ACCESS}
          kind={granting}
          applications={(apps.data ?? []).filter(
            (app) =>
              app.is_of__class === granting &&
              !team.team_application_access?.some((a) => a.grants_access_to__application[0]?.id === app.id),
          )}
          onClose={() => setGranting(undefined)}
          onDone={refresh}
        />
      ) : null}
    </>
  );
}
export const TeamMembersPage = () => <TeamPage section="members" />;
export const TeamFleetsPage = () => <TeamPage section="fleet" />;
export const TeamAppsPage = () => <TeamPage section="app" />;
export const TeamBlocksPage = () => <TeamPage section="block" />;

function AddTeamMembersDialog(props: { team: Team; usernames: string[]; onClose: () => void; onDone: () => void }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const [selected, setSelected] = useState<string[]>([]);
  const { error, busy, run } = useSubmission();
  const submit = async () => {
    if (selected.length === 0) return;
    await run(async () => {
      await oneAtATime(selected, (username) => sdk.models.team.membership.create({ team: props.team.id, username }));
      showToast("success", t("orgs.member_added"));
      props.onDone();
      props.onClose();
    });
  };
  return (
    <FormDialog
      onClose={props.onClose}
      title={t("orgs.add_members_to", { name: props.team.name })}
      error={error}
      submitLabel={t("orgs.add")}
      busy={busy}
      submitDisabled={selected.length === 0}
      onSubmit={submit}
    >
      {props.usernames.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {t("orgs.everyone_in_team")}
        </Typography>
      ) : (
        <>
          <TextField
            select
            fullWidth
            margin="dense"
            label={t("orgs.members")}
            value={selected}
            slotProps={{ select: { multiple: true, renderValue: countSelected(t) } }}
            onChange={(event) => setSelected(event.target.value as unknown as string[])}
          >
            {props.usernames.map((name) => (
              <MenuItem key={name} value={name}>
                {name}
              </MenuItem>
            ))}
          </TextField>
          <SelectedItems
            label={t("orgs.selected_members")}
            items={selected.map((name) => ({ id: name, name }))}
            onRemove={(name) => setSelected((prev) => prev.filter((item) => item !== name))}
          />
        </>
      )}
    </FormDialog>
  );
}

function GrantAccessDialog(props: {
  team: Team;
  orgId: number;
  plan: PlanAccess;
  kind: ApplicationClass;
  applications: Array<{ id: number; app_name: string }>;
  onClose: () => void;
  onDone: () => void;
}) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const [selected, setSelected] = useState<number[]>([]);
  const [role, setRole] = useState<FleetRole>(DEFAULT_FLEET_ROLE);
  const { error, busy, run } = useSubmission();
  const submit = async () => {
    if (selected.length === 0) return;
    await run(async () => {
      await oneAtATime(selected, (appId) => sdk.models.team.applicationAccess.add(props.team.id, appId, role));
      showToast("success", t("orgs.resource_added_to_team"));
      props.onDone();
      props.onClose();
    });
  };
  return (
    <FormDialog
      onClose={props.onClose}
      title={t("orgs.grant_access_to", { name: props.team.name })}
      error={error}
      submitLabel={t("orgs.grant_access")}
      busy={busy}
      submitDisabled={selected.length === 0}
      onSubmit={submit}
    >
      <TextField
        select
        fullWidth
        margin="dense"
        label={t("orgs.applications")}
        value={selected}
        slotProps={{
          select: {
            multiple: true,
            renderValue: countSelected(t),
            MenuProps: { slotProps: { paper: { sx: { maxHeight: SELECTED_LIST_HEIGHT } } } },
          },
        }}
        onChange={(event) => setSelected(event.target.value as unknown as number[])}
      >
        {props.applications.map((app) => (
          <MenuItem key={app.id} value={app.id}>
            {app.app_name}
          </MenuItem>
        ))}
      </TextField>
      <SelectedItems
        label={t("orgs.selected_applications")}
        items={props.applications
          .filter((app) => selected.includes(app.id))
          .map((app) => ({ id: app.id, name: app.app_name }))}
        onRemove={(id) => setSelected((prev) => prev.filter((item) => item !== id))}
      />
      <FleetRolePicker
        value={role}
        onChange={setRole}
        plan={props.plan}
        applicationClass={props.kind}
        orgId={props.orgId}
      />
    </FormDialog>
  );
}
