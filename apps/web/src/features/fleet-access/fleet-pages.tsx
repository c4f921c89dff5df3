import type { FleetRole } from "@flotilla/domain";
import AddOutlined from "@mui/icons-material/AddOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import Button from "@mui/material/Button";
import MenuItem from "@mui/material/MenuItem";
import type { SxProps, Theme } from "@mui/material/styles";
import TablePagination from "@mui/material/TablePagination";
import TextField from "@mui/material/TextField";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { AccessList } from "../../components/access-list.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { FormDialog } from "../../components/form-dialog.tsx";
import { PageHeader } from "../../components/page.tsx";
import { useLookup } from "../../lib/lookup.ts";
import { showToast } from "../../lib/toasts.ts";
import { DEFAULT_FLEET_ROLE, FREE_PLAN_ACCESS, isValidEmail, type PlanAccess } from "../orgs/access.ts";
import { hasFleetAccess, pineOf, useAllMemberships, usePaidPlan, useTeams } from "../orgs/data.ts";
import { FleetRolePicker, SeatTotal } from "../orgs/role-picker.tsx";
import { oneAtATime } from "../orgs/teams-pages.tsx";
import {
  countSelected,
  Notice,
  PendingInvitations,
  SelectedItems,
  useNumericParam,
  useSubmission,
} from "../orgs/ui.tsx";
import { type Fleet, fleetAbilities, useFleet } from "./data.ts";

export const FLEET_MEMBERS_PAGE_SIZE = 25;

function useFleetPage() {
  const fleetId = useNumericParam("fleetId");
  const fleet = useLookup<Fleet>(useFleet(fleetId));
  return { fleetId, fleet, abilities: fleetAbilities(fleet) };
}

interface FleetMembership {
  id: number;
  user: Array<{ id: number; username: string }>;
  application_membership_role: Array<{ name: FleetRole }>;
}
interface FleetInvite {
  id: number;
  message: string | null;
  invitee: Array<{ email: string }>;
  application_membership_role: Array<{ name: FleetRole }>;
}

/** `/fleets/{id}/members` (spec 2 §2): paged members, add, batch role change, batch delete, invites. */
export function FleetMembersPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const { fleetId, fleet, abilities } = useFleetPage();
  const orgId = fleet?.organization[0]?.id;
  const paid = usePaidPlan(orgId);
  const [page, setPage] = useState(0);
  const [selected, setSelected] = useState<number[]>([]);
  const [adding, setAdding] = useState(false);
  const [batchRole, setBatchRole] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["fleet", fleetId] });
  const members = useQuery({
    queryKey: ["fleet", fleetId, "members", page],
    enabled: abilities.readMembers,
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const filter = { is_member_of__application: fleetId };
      const [rows, total] = await Promise.all([
        pineOf(sdk).get<FleetMembership[]>({
          resource: "user_application_membership",
          options: {
            $select: "id",
            $filter: filter,
            $expand: { user: { $select: ["id", "username"] }, application_membership_role: { $select: "name" } },
            // By username across pages (spec 2 §7 Applications), the id keeping equal names in order.
            $orderby: "user/username asc,id asc",
            $top: FLEET_MEMBERS_PAGE_SIZE,
            $skip: page * FLEET_MEMBERS_PAGE_SIZE,
          },
        }),
        pineOf(sdk).get<number>({ resource: "user_application_membership", options: { $count: { $filter: filter } } }),
      ]);
      return { rows, total };
    },
  });
  const invites = useQuery({
    queryKey: ["fleet", fleetId, "invites"],
    enabled: abilities.invite,
    queryFn: () =>
      pineOf(sdk).get<FleetInvite[]>({
        resource: "application_invite",
        options: {
          $select: ["id", "message"],
          $filter: { is_invited_to__application: fleetId },
          $expand: { invitee: { $select: "email" }, application_membership_role: { $select: "name" } },
        },
      }),
  });
  const rows = members.data?.rows ?? [];
  const chosen = rows.filter((row) => selected.includes(row.id));
  const remove = useMutation({
    mutationFn: () => oneAtATime(chosen, (row) => sdk.models.application.membership.remove(row.id)),
    onSuccess: () => {
      showToast("success", t("orgs.member_removed"));
      setSelected([]);
      setDeleting(false);
    },
    onSettled: refresh,
  });
  const revoke = useMutation({
    mutationFn: (id: number) => sdk.models.application.invite.revoke(id),
    onSuccess: () => showToast("success", t("orgs.invite_revoked")),
    onSettled: refresh,
  });
  if (!fleet) return null;
  if (!abilities.readMembers) {
    return (
      <>
        <PageHeader title={t("orgs.members")} description={fleet.app_name} />
        <Notice>{t("fleet.members_not_authorised")}</Notice>
      </>
    );
  }
  const canEdit = abilities.manageMembers;
  return (
    <>
      <PageHeader
        title={t("orgs.members")}
        description={t("fleet.members_description", { name: fleet.app_name })}
        actions={
          canEdit ? (
            <>
              <Button variant="outlined" disabled={chosen.length === 0} onClick={() => setBatchRole(true)}>
                {t("fleet.change_role")}
              </Button>
              <Button
                variant="outlined"
                color="error"
                startIcon={<DeleteOutlined />}
                disabled={chosen.length === 0}
                onClick={() => setDeleting(true)}
              >
                {t("fleet.remove_access")}
              </Button>
              <Button variant="contained" startIcon={<AddOutlined />} onClick={() => setAdding(true)}>
                {t("fleet.add_member")}
              </Button>
            </>
          ) : null
        }
      />
      {!canEdit ? <Notice>{t("fleet.members_read_only")}</Notice> : null}
      <RoleTable
        label={t("orgs.members")}
        nameHeader={t("orgs.username")}
        rows={rows.map((row) => ({
          id: row.id,
          name: row.user[0]?.username,
          role: row.application_membership_role[0]?.name,
        }))}
        canEdit={canEdit}
        selected={selected}
        onSelected={setSelected}
        empty={members.isSuccess && rows.length === 0 ? t("fleet.no_members") : undefined}
        paperSx={{ mb: 3 }}
        footer={
          <TablePagination
            component="div"
            count={members.data?.total ?? 0}
            page={page}
            rowsPerPage={FLEET_MEMBERS_PAGE_SIZE}
            rowsPerPageOptions={[FLEET_MEMBERS_PAGE_SIZE]}
            onPageChange={(_event, next) => setPage(next)}
          />
        }
      />
      {abilities.invite ? (
        <PendingInvitations
          rows={invites.data ?? []}
          head={false}
          columns={[
            { cell: (invite) => invite.invitee[0]?.email },
            { cell: (invite) => t(`orgs.fleet_roles.${invite.application_membership_role[0]?.name ?? "developer"}`) },
          ]}
          onRevoke={(invite) => revoke.mutate(invite.id)}
        />
      ) : null}
      {adding && orgId ? (
        <AddFleetMemberDialog
          fleet={fleet}
          orgId={orgId}
          plan={paid.data ?? FREE_PLAN_ACCESS}
          excluded={rows.map((row) => row.user[0]?.username ?? "")}
          onClose={() => setAdding(false)}
          onDone={refresh}
        />
      ) : null}
      {batchRole ? (
        <BatchRoleDialog
          fleet={fleet}
          orgId={orgId}
          plan={paid.data ?? FREE_PLAN_ACCESS}
          count={chosen.length}
          onClose={() => setBatchRole(false)}
          onSubmit={async (role) => {
            await oneAtATime(chosen, (row) => sdk.models.application.membership.changeRole(row.id, role));
            showToast("success", t("fleet.all_changes_successful"));
            setSelected([]);
            await refresh();
          }}
        />
      ) : null}
      <ConfirmDialog
        open={deleting}
        danger
        title={t("fleet.remove_access")}
        text={t("fleet.remove_access_text")}
        items={chosen.map((row) => row.user[0]?.username ?? "")}
        confirmLabel={t("fleet.remove_access")}
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setDeleting(false)}
      />
    </>
  );
}

function BatchRoleDialog(props: {
  fleet: Fleet;
  orgId: number | undefined;
  plan: PlanAccess;
  count: number;
  onClose: () => void;
  onSubmit: (role: FleetRole) => Promise<void>;
}) {
  const { t } = useTranslation();
  const [role, setRole] = useState<FleetRole>(DEFAULT_FLEET_ROLE);
  const { error, busy, run } = useSubmission();
  return (
    <FormDialog
      onClose={props.onClose}
      title={t("fleet.change_role_of", { count: props.count })}
      error={error}
      submitLabel={t("fleet.change_role")}
      busy={busy}
      onSubmit={() =>
        run(async () => {
          await props.onSubmit(role);
          props.onClose();
        })
      }
    >
      <FleetRolePicker
        value={role}
        onChange={setRole}
        plan={props.plan}
        applicationClass={props.fleet.is_of__class}
        {...(props.orgId ? { orgId: props.orgId } : {})}
      />
    </FormDialog>
  );
}

/**
 * Add a member (spec 2 §5): a value that is an email becomes an invite (with role and message);
 * anything else is a username and becomes a membership at once. The picker lists organization
 * members who have no access yet.
 */
function AddFleetMemberDialog(props: {
  fleet: Fleet;
  orgId: number;
  plan: PlanAccess;
  excluded: string[];
  onClose: () => void;
  onDone: () => void;
}) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const orgMembers = useAllMemberships(props.orgId);
  const [value, setValue] = useState("");
  const [role, setRole] = useState<FleetRole>(DEFAULT_FLEET_ROLE);
  const [message, setMessage] = useState("");
  const [touched, setTouched] = useState(false);
  const { error, setError, busy, run } = useSubmission();
  const trimmed = value.trim();
  const isEmail = isValidEmail(trimmed);
  const candidates = (orgMembers.data ?? [])
    .map((row) => row.user[0]?.username ?? "")
    .filter((name) => name && !props.excluded.includes(name));
  const submit = async () => {
    setTouched(true);
    if (!trimmed) return;
    await run(async () => {
      if (isEmail) {
        if (await hasFleetAccess(sdk, props.fleet.id, props.orgId, trimmed)) {
          setError(t("orgs.invitee_already_exist"));
          return;
        }
        await sdk.models.application.invite.create(props.fleet.id, {
          invitee: trimmed,
          roleName: role,
          ...(message.trim() ? { message: message.trim() } : {}),
        });
      } else {
        await sdk.models.application.membership.create({
          application: props.fleet.id,
          username: trimmed,
          roleName: role,
        });
      }
      showToast("success", t("fleet.resource_added"));
      props.onDone();
      props.onClose();
    });
  };
  return (
    <FormDialog
      onClose={props.onClose}
      title={t("fleet.add_member")}
      error={error}
      submitLabel={t("orgs.add")}
      busy={busy}
      onSubmit={submit}
    >
      <TextField
        autoFocus
        fullWidth
        required
        margin="dense"
        label={t("fleet.username_or_email")}
        value={value}
        onChange={(event) => setValue(event.target.value)}
        error={touched && !trimmed}
        helperText={touched && !trimmed ? t("orgs.invitee_required") : isEmail ? t("fleet.will_invite") : undefined}
      />
      {candidates.length > 0 ? (
        <TextField
          select
          fullWidth
          margin="dense"
          label={t("fleet.existing_member")}
          value={candidates.includes(trimmed) ? trimmed : ""}
          onChange={(event) => setValue(event.target.value)}
        >
          {candidates.map((name) => (
            <MenuItem key={name} value={name}>
              {name}
            </MenuItem>
          ))}
        </TextField>
      ) : null}
      <FleetRolePicker
        value={role}
        onChange={setRole}
        plan={props.plan}
        applicationClass={props.fleet.is_of__class}
        orgId={props.orgId}
      />
      <SeatTotal role={role} orgId={props.orgId} />
      {isEmail ? (
        <TextField
          fullWidth
          multiline
          minRows={2}
          margin="dense"
          label={t("orgs.message_optional")}
          value={message}
          onChange={(event) => setMessage(event.target.value)}
        />
      ) : null}
    </FormDialog>
  );
}

interface FleetTeamAccess {
  id: number;
  team: Array<{ id: number; name: string }>;
  application_membership_role: Array<{ name: FleetRole }>;
}

/** `/fleets/{id}/teams` (spec 2 §2): teams with access; add to team, batch remove. */
export function FleetTeamsPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const { fleetId, fleet, abilities } = useFleetPage();
  const orgId = fleet?.organization[0]?.id;
  const paid = usePaidPlan(orgId);
  const teams = useTeams(orgId ?? 0);
  const [selected, setSelected] = useState<number[]>([]);
  const [adding, setAdding] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["fleet", fleetId] });
  const access = useQuery({
    queryKey: ["fleet", fleetId, "teams"],
    enabled: abilities.readTeams,
    queryFn: () =>
      pineOf(sdk).get<FleetTeamAccess[]>({
        resource: "team_application_access",
        options: {
          $select: "id",
          $filter: { grants_access_to__application: fleetId },
          $expand: { team: { $select: ["id", "name"] }, application_membership_role: { $select: "name" } },
        },
      }),
  });
  const rows = access.data ?? [];
  const chosen = rows.filter((row) => selected.includes(row.id));
  const remove = useMutation({
    mutationFn: () => oneAtATime(chosen, (row) => sdk.models.team.applicationAccess.remove(row.id)),
    onSuccess: () => {
      showToast("success", t("orgs.access_removed"));
      setSelected([]);
      setDeleting(false);
    },
    onSettled: refresh,
  });
  if (!fleet) return null;
  if (!abilities.readTeams) {
    return (
      <>
        <PageHeader title={t("orgs.teams")} description={fleet.app_name} />
        <Notice>{t("fleet.teams_not_authorised")}</Notice>
      </>
    );
  }
  const canEdit = abilities.manageTeams;
  return (
    <>
      <PageHeader
        title={t("orgs.teams")}
        description={t("fleet.teams_description", { name: fleet.app_name })}
        actions={
          canEdit ? (
            <>
              <Button
                variant="outlined"
                color="error"
                startIcon={<DeleteOutlined />}
                disabled={chosen.length === 0}
                onClick={() => setDeleting(true)}
              >
                {t("fleet.remove_access")}
              </Button>
              <Button variant="contained" startIcon={<AddOutlined />} onClick={() => setAdding(true)}>
                {t("fleet.add_to_team")}
              </Button>
            </>
          ) : null
        }
      />
      {!canEdit ? <Notice>{t("fleet.teams_read_only")}</Notice> : null}
      <RoleTable
        label={t("orgs.teams")}
        nameHeader={t("orgs.team_name")}
        rows={rows.map((row) => ({
          id: row.id,
          name: row.team[0]?.name,
          role: row.application_membership_role[0]?.name,
        }))}
        canEdit={canEdit}
        selected={selected}
        onSelected={setSelected}
        empty={access.isSuccess && rows.length === 0 ? t("fleet.no_teams") : undefined}
      />
      {adding ? (
        <AddToTeamDialog
          fleet={fleet}
          orgId={orgId}
          plan={paid.data ?? FREE_PLAN_ACCESS}
          teams={(teams.data ?? []).filter((team) => !rows.some((row) => row.team[0]?.id === team.id))}
          onClose={() => setAdding(false)}
          onDone={refresh}
        />
      ) : null}
      <ConfirmDialog
        open={deleting}
        danger
        title={t("fleet.remove_access")}
        text={t("fleet.remove_access_text")}
        items={chosen.map((row) => row.team[0]?.name ?? "")}
        confirmLabel={t("fleet.remove_access")}
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setDeleting(false)}
      />
    </>
  );
}

function AddToTeamDialog(props: {
  fleet: Fleet;
  orgId: number | undefined;
  plan: PlanAccess;
  teams: Array<{ id: number; name: string }>;
  onClose: () => void;
  onDone: () => void;
}) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const [selected, setSelected] = useState<number[]>([]);
  const [role, setRole] = useState<FleetRole>(DEFAULT_FLEET_ROLE);
  const { error, busy, run } = useSubmission();
  return (
    <FormDialog
      onClose={props.onClose}
      title={t("fleet.add_to_team")}
      error={error}
      submitLabel={t("orgs.add")}
      busy={busy}
      submitDisabled={selected.length === 0}
      onSubmit={async () => {
        if (selected.length === 0) return;
        await run(async () => {
          await oneAtATime(selected, (teamId) => sdk.models.team.applicationAccess.add(teamId, props.fleet.id, role));
          showToast("success", t("orgs.resource_added_to_team"));
          props.onDone();
          props.onClose();
        });
      }}
    >
      <TextField
        select
        fullWidth
        margin="dense"
        label={t("orgs.teams")}
        value={selected}
        slotProps={{ select: { multiple: true, renderValue: countSelected(t) } }}
        onChange={(event) => setSelected(event.target.value as unknown as number[])}
      >
        {props.teams.map((team) => (
          <MenuItem key={team.id} value={team.id}>
            {team.name}
          </MenuItem>
        ))}
      </TextField>
      <SelectedItems
        label={t("orgs.selected_teams")}
        items={props.teams
          .filter((team) => selected.includes(team.id))
          .map((team) => ({ id: team.id, name: team.name }))}
        onRemove={(id) => setSelected((prev) => prev.filter((item) => item !== id))}
      />
      <FleetRolePicker
        value={role}
        onChange={setRole}
        plan={props.plan}
        applicationClass={props.fleet.is_of__class}
        {...(props.orgId ? { orgId: props.orgId } : {})}
      />
    </FormDialog>
  );
}

interface RoleRow {
  id: number;
  name: string | undefined;
  role: FleetRole | undefined;
}

/** A fleet's members or teams with their role; with edit rights, rows can be selected for batch actions. */
function RoleTable(props: {
  label: string;
  nameHeader: string;
  rows: RoleRow[];
  canEdit: boolean;
  selected: number[];
  onSelected: (update: (previous: number[]) => number[]) => void;
  empty: string | undefined;
  paperSx?: SxProps<Theme>;
  footer?: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <AccessList<RoleRow>
      label={props.label}
      rows={props.rows}
      hover
      paper
      {...(props.paperSx ? { paperSx: props.paperSx } : {})}
      footer={props.footer}
      {...(props.empty ? { emptyRow: props.empty } : {})}
      {...(props.canEdit
        ? {
            selection: {
              selected: props.selected,
              onChange: props.onSelected,
              label: (row) => t("orgs.select", { name: row.name }),
            },
          }
        : {})}
      columns={[
        { header: props.nameHeader, cell: (row) => row.name, sx: { fontWeight: 500 } },
        { header: t("orgs.role"), cell: (row) => t(`orgs.fleet_roles.${row.role ?? "developer"}`) },
      ]}
    />
  );
}
