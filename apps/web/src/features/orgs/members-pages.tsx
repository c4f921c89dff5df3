import {
  DATE_FORMAT,
  MEMBER_PRICES_PER_MONTH_CENTS,
  ORGANIZATION_ROLES,
  type OrganizationRole,
  seatPrice,
} from "@flotilla/domain";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import LoginOutlined from "@mui/icons-material/LoginOutlined";
import PersonAddOutlined from "@mui/icons-material/PersonAddOutlined";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import List from "@mui/material/List";
import ListItem from "@mui/material/ListItem";
import MenuItem from "@mui/material/MenuItem";
import Paper from "@mui/material/Paper";
import TablePagination from "@mui/material/TablePagination";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { format } from "date-fns";
import type { TFunction } from "i18next";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { AccessList, ConfirmRemoveDialog } from "../../components/access-list.tsx";
import { FormDialog } from "../../components/form-dialog.tsx";
import { TextLink } from "../../components/links.tsx";
import { PageHeader } from "../../components/page.tsx";
import { useLookup } from "../../lib/lookup.ts";
import { showToast } from "../../lib/toasts.ts";
import { useSessionUser } from "../preferences/use-user.ts";
import { isLastAdministrator, isValidEmail, organizationAbilities } from "./access.ts";
import {
  isOrganizationMember,
  type OrgInvite,
  type OrgMembership,
  pineOf,
  useMyOrgRole,
  useOrganization,
  useTeams,
} from "./data.ts";
import { useIsPlatformAdmin, useLogInAs } from "./log-in-as.ts";
import { ApplicationLink } from "./org-pages.tsx";
import { OfferTotal } from "./role-picker.tsx";
import { offerFor, offerText, type SeatsByRole, useSeats } from "./seats.ts";
import { Card, PendingInvitations, useNumericParam, useSubmission } from "./ui.tsx";

export const MEMBERS_PAGE_SIZE = 25;

/** `/orgs/{orgId}/members` (spec 3 §2): members paged on the server, pending invitations, invite. */
export function MembersPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const me = useSessionUser();
  const orgId = useNumericParam("orgId");
  const org = useOrganization(orgId);
  const mine = useMyOrgRole(orgId);
  const abilities = organizationAbilities(mine.role, mine.administratorCount);
  const isAdmin = useIsPlatformAdmin();
  const logInAs = useLogInAs();
  const [page, setPage] = useState(0);
  const [inviting, setInviting] = useState(false);
  const [removing, setRemoving] = useState<OrgMembership>();

  const members = useQuery({
    queryKey: ["orgs", orgId, "memberships", "page", page],
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const filter = { is_member_of__organization: orgId };
      const [rows, total] = await Promise.all([
        pineOf(sdk).get<OrgMembership[]>({
          resource: "organization_membership",
          options: {
            $select: ["id", "created_at"],
            $filter: filter,
            $expand: {
              user: { $select: ["id", "username", "email"] },
              organization_membership_role: { $select: "name" },
            },
            $orderby: { id: "asc" },
            $top: MEMBERS_PAGE_SIZE,
            $skip: page * MEMBERS_PAGE_SIZE,
          },
        }),
        pineOf(sdk).get<number>({ resource: "organization_membership", options: { $count: { $filter: filter } } }),
      ]);
      return { rows, total };
    },
  });
  const invites = useQuery({
    queryKey: ["orgs", orgId, "invites"],
    enabled: abilities.manageMembers,
    queryFn: () =>
      pineOf(sdk).get<OrgInvite[]>({
        resource: "organization_invite",
        options: {
          $select: ["id", "message"],
          $filter: { is_invited_to__organization: orgId },
          $expand: { invitee: { $select: "email" }, organization_membership_role: { $select: "name" } },
        },
      }),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["orgs", orgId] });

  const changeRole = useMutation({
    mutationFn: ({ id, role }: { id: number; role: OrganizationRole }) =>
      sdk.models.organization.membership.changeRole(id, role),
    onSuccess: () => showToast("success", t("orgs.role_changed")),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: (membership: OrgMembership) =>
      pineOf(sdk).delete({ resource: "organization_membership", id: membership.id }),
    onSuccess: async (_data, membership) => {
      const self = membership.user[0]?.id === me?.id;
      showToast("success", self ? t("orgs.left") : t("orgs.member_removed"));
      setRemoving(undefined);
      if (self) {
        queryClient.removeQueries({ queryKey: ["orgs", orgId] });
        await navigate({ to: "/orgs" });
      }
    },
    onSettled: refresh,
  });
  const revoke = useMutation({
    mutationFn: (id: number) => sdk.models.organization.invite.revoke(id),
    onSuccess: () => showToast("success", t("orgs.invite_revoked")),
    onSettled: refresh,
  });

  const rows = members.data?.rows ?? [];
  const seats = useSeats(abilities.manageMembers ? orgId : undefined);
  const isSelf = (row: OrgMembership) => row.user[0]?.id === me?.id;
  const roleOf = (row: OrgMembership) => row.organization_membership_role[0]?.name ?? "member";
  const isLastAdmin = (row: OrgMembership) => isLastAdministrator(roleOf(row), mine.administratorCount);
  return (
    <>
      <PageHeader
        title={t("orgs.members")}
        description={org.data ? t("orgs.members_description", { name: org.data.name }) : ""}
        actions={
          abilities.manageMembers ? (
            <Button variant="contained" startIcon={<PersonAddOutlined />} onClick={() => setInviting(true)}>
              {t("orgs.invite_member")}
            </Button>
          ) : null
        }
      />
      <AccessList
        label={t("orgs.members")}
        rows={rows}
        paper
        paperSx={{ mb: 3 }}
        hover
        columns={[
          {
            header: t("orgs.username"),
            cell: (row) => (
              <>
                <TextLink
                  to="/orgs/$orgId/members/$memberId"
                  params={{ orgId: String(orgId), memberId: String(row.id) }}
                  underline="hover"
                  sx={{ fontWeight: 500 }}
                >
                  {row.user[0]?.username}
                </TextLink>
                {isSelf(row) ? (
                  <Typography component="span" variant="caption" color="text.secondary" sx={{ ml: 1 }}>
                    {t("orgs.you")}
                  </Typography>
                ) : null}
              </>
            ),
          },
          { header: t("orgs.email"), cell: (row) => row.user[0]?.email ?? "", sx: { color: "text.secondary" } },
          {
            header: t("orgs.role"),
            headerSx: { width: 200 },
            cell: (row) => {
              const role = roleOf(row);
              return abilities.manageMembers ? (
                <Tooltip title={isLastAdmin(row) ? t("orgs.last_admin") : ""}>
                  <TextField
                    select
                    size="small"
                    fullWidth
                    value={role}
                    disabled={isLastAdmin(row) || changeRole.isPending}
                    slotProps={{
                      htmlInput: { "aria-label": t("orgs.role_of", { name: row.user[0]?.username }) },
                      // The field shows the role alone; its options say what each costs.
                      select: { renderValue: (value) => t(`orgs.roles.${value as OrganizationRole}`) },
                    }}
                    onChange={(event) =>
                      changeRole.mutate({ id: row.id, role: event.target.value as OrganizationRole })
                    }
                  >
                    {organizationRoleItems(t, seats)}
                  </TextField>
                </Tooltip>
              ) : (
                t(`orgs.roles.${role}`)
              );
            },
          },
          { header: t("orgs.member_since"), cell: (row) => format(new Date(row.created_at), DATE_FORMAT) },
        ]}
        actions={[
          {
            icon: <LoginOutlined fontSize="small" />,
            shown: (row) => isAdmin && !isSelf(row) && row.user[0] !== undefined,
            label: (row) => t("orgs.log_in_as_named", { name: row.user[0]?.username }),
            tooltip: () => t("orgs.log_in_as"),
            onClick: (row) => logInAs(row.user[0]?.username ?? ""),
          },
          {
            icon: <DeleteOutlined fontSize="small" />,
            color: "error",
            shown: (row) => abilities.manageMembers || isSelf(row),
            disabled: isLastAdmin,
            label: (row) => (isSelf(row) ? t("orgs.leave") : t("orgs.remove_named", { name: row.user[0]?.username })),
            tooltip: (row) =>
              isLastAdmin(row) ? t("orgs.last_admin") : isSelf(row) ? t("orgs.leave") : t("orgs.remove_member"),
            onClick: setRemoving,
          },
        ]}
        footer={
          <TablePagination
            component="div"
            count={members.data?.total ?? 0}
            page={page}
            rowsPerPage={MEMBERS_PAGE_SIZE}
            rowsPerPageOptions={[MEMBERS_PAGE_SIZE]}
            onPageChange={(_event, next) => setPage(next)}
          />
        }
      />
      {abilities.manageMembers ? (
        <PendingInvitations
          rows={invites.data ?? []}
          columns={[
            { header: t("orgs.email"), cell: (invite) => invite.invitee[0]?.email },
            {
              header: t("orgs.role"),
              cell: (invite) => t(`orgs.roles.${invite.organization_membership_role[0]?.name ?? "member"}`),
            },
            { header: t("orgs.message"), cell: (invite) => invite.message ?? "", sx: { color: "text.secondary" } },
          ]}
          onRevoke={(invite) => revoke.mutate(invite.id)}
        />
      ) : null}
      <InviteDialog open={inviting} orgId={orgId} onClose={() => setInviting(false)} onDone={refresh} />
      <ConfirmRemoveDialog
        target={removing}
        name={(membership) => membership.user[0]?.username ?? ""}
        title={removing && isSelf(removing) ? t("orgs.leave") : t("orgs.remove_member")}
        text={
          removing && isSelf(removing) ? t("orgs.leave_text", { name: org.data?.name ?? "" }) : t("orgs.remove_text")
        }
        confirmLabel={removing && isSelf(removing) ? t("orgs.leave") : t("orgs.remove_member")}
        busy={remove.isPending}
        onConfirm={(membership) => remove.mutate(membership)}
        onClose={() => setRemoving(undefined)}
      />
    </>
  );
}

/** Invitee rules of spec 3 §5: required, trimmed, an email; the server answers the rest. */
export function inviteeProblem(value: string): "invitee_required" | "invalid_email" | undefined {
  const trimmed = value.trim();
  if (!trimmed) return "invitee_required";
  if (!isValidEmail(trimmed)) return "invalid_email";
  return undefined;
}

/**
 * What an organization role's seat costs per month (spec 3 §6): administrators take a paid seat;
 * members pay through the fleet roles they are given, so joining costs nothing.
 */
const organizationSeatCents = (role: OrganizationRole) =>
  role === "administrator" ? seatPrice(MEMBER_PRICES_PER_MONTH_CENTS.administrator) : 0;

/**
 * The organization roles of a picker (invite, role change), each with what one more member at it
 * costs: its price, or how many of the plan's seats are used (spec 3 §6).
 */
function organizationRoleItems(t: TFunction, seats: SeatsByRole | undefined) {
  return ORGANIZATION_ROLES.map((option) => (
    <MenuItem key={option} value={option}>
      <Box sx={{ display: "flex", width: "100%", gap: 2, alignItems: "baseline" }}>
        <Box component="span" sx={{ flex: 1 }}>
          {t(`orgs.roles.${option}`)}
        </Box>
        <Typography component="span" variant="caption" color="text.secondary">
          {offerText(t, offerFor(option, organizationSeatCents(option), seats))}
        </Typography>
      </Box>
    </MenuItem>
  ));
}

function InviteDialog(props: { open: boolean; orgId: number; onClose: () => void; onDone: () => void }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const [invitee, setInvitee] = useState("");
  const [role, setRole] = useState<OrganizationRole>("member");
  const [message, setMessage] = useState("");
  const [touched, setTouched] = useState(false);
  const { error, setError, busy, run } = useSubmission();
  const problem = inviteeProblem(invitee);
  const seats = useSeats(props.orgId);
  const offer = offerFor(role, organizationSeatCents(role), seats);
  const close = () => {
    setInvitee("");
    setRole("member");
    setMessage("");
    setTouched(false);
    setError(undefined);
    props.onClose();
  };
  const submit = async () => {
    setTouched(true);
    if (problem) return;
    await run(async () => {
      if (await isOrganizationMember(sdk, props.orgId, invitee)) {
        setError(t("orgs.invitee_already_exist"));
        return;
      }
      await sdk.models.organization.invite.create(props.orgId, {
        invitee: invitee.trim(),
        roleName: role,
        ...(message.trim() ? { message: message.trim() } : {}),
      });
      showToast("success", t("orgs.user_added"));
      props.onDone();
      close();
    });
  };
  return (
    <FormDialog
      open={props.open}
      onClose={close}
      title={t("orgs.invite_member")}
      error={error}
      submitLabel={t("orgs.send_invite")}
      busy={busy}
      onSubmit={submit}
    >
      <TextField
        autoFocus
        fullWidth
        required
        margin="dense"
        type="email"
        label={t("orgs.invitee_email")}
        value={invitee}
        onChange={(event) => setInvitee(event.target.value)}
        error={touched && problem !== undefined}
        helperText={touched && problem ? t(`orgs.${problem}`) : undefined}
      />
      <TextField
        select
        fullWidth
        margin="dense"
        label={t("orgs.role")}
        value={role}
        onChange={(event) => setRole(event.target.value as OrganizationRole)}
      >
        {organizationRoleItems(t, seats)}
      </TextField>
      <OfferTotal offer={offer} texts="invite" />
      <TextField
        fullWidth
        multiline
        minRows={2}
        margin="dense"
        label={t("orgs.message_optional")}
        value={message}
        onChange={(event) => setMessage(event.target.value)}
      />
    </FormDialog>
  );
}

/** `/orgs/{orgId}/members/{memberId}` and its teams/fleets/apps/blocks pages (spec 3 §2). */
export function MemberPage({ section = "summary" }: { section?: "summary" | "teams" | "fleet" | "app" | "block" }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const orgId = useNumericParam("orgId");
  const memberId = useNumericParam("memberId");
  const teams = useTeams(orgId);
  const member = useLookup<OrgMembership>(
    useQuery({
      queryKey: ["orgs", orgId, "member", memberId],
      queryFn: () =>
        pineOf(sdk).get<OrgMembership | undefined>({
          resource: "organization_membership",
          id: memberId,
          options: {
            $select: ["id", "created_at"],
            $expand: {
              user: { $select: ["id", "username", "email"] },
              organization_membership_role: { $select: "name" },
            },
          },
        }),
    }),
  );
  const userId = member?.user[0]?.id;
  const fleets = useQuery({
    queryKey: ["orgs", orgId, "member", memberId, "fleets"],
    enabled: userId !== undefined,
    queryFn: () =>
      pineOf(sdk).get<
        Array<{
          id: number;
          application_membership_role: Array<{ name: string }>;
          is_member_of__application: Array<{ id: number; app_name: string; is_of__class: "fleet" | "app" | "block" }>;
        }>
      >({
        resource: "user_application_membership",
        options: {
          $select: "id",
          $filter: {
            user: userId,
            is_member_of__application: { $any: { $alias: "a", $expr: { a: { organization: orgId } } } },
          },
          $expand: {
            application_membership_role: { $select: "name" },
            is_member_of__application: { $select: ["id", "app_name", "is_of__class"] },
          },
        },
      }),
  });
  if (!member) return null;
  const user = member.user[0];
  const memberTeams = (teams.data ?? []).filter((team) => team.team_membership?.some((m) => m.user[0]?.id === userId));
  const apps = (fleets.data ?? []).filter(
    (row) => section === "summary" || row.is_member_of__application[0]?.is_of__class === section,
  );
  return (
    <>
      <PageHeader title={user?.username ?? ""} description={user?.email ?? ""} />
      {section === "summary" ? (
        <Paper variant="outlined" sx={{ p: 2, mb: 2 }} component="section" aria-label={t("orgs.details")}>
          <Typography variant="body2">
            {t("orgs.role")}:{" "}
            <strong>{t(`orgs.roles.${member.organization_membership_role[0]?.name ?? "member"}`)}</strong>
          </Typography>
          <Typography variant="body2" color="text.secondary">
            {t("orgs.member_since")}: {format(new Date(member.created_at), DATE_FORMAT)}
          </Typography>
        </Paper>
      ) : null}
      <Box sx={{ display: "grid", gap: 2, gridTemplateColumns: { xs: "1fr", md: "1fr 1fr" } }}>
        {section === "summary" || section === "teams" ? (
          <Card title={t("orgs.teams")} scroll>
            {memberTeams.length === 0 ? (
              <Typography variant="body2" color="text.secondary">
                {t("orgs.none_yet")}
              </Typography>
            ) : (
              <List dense disablePadding>
                {memberTeams.map((team) => (
                  <ListItem key={team.id} disableGutters>
                    <TextLink
                      to="/orgs/$orgId/teams/$teamId"
                      params={{ orgId: String(orgId), teamId: String(team.id) }}
                    >
                      {team.name}
                    </TextLink>
                  </ListItem>
                ))}
              </List>
            )}
          </Card>
        ) : null}
        {section !== "teams" ? (
          <Card title={t("orgs.direct_access")} scroll>
            {apps.length === 0 ? (
              <Typography variant="body2" color="text.secondary">
                {t("orgs.none_yet")}
              </Typography>
            ) : (
              <List dense disablePadding>
                {apps.map((row) => {
                  const app = row.is_member_of__application[0];
                  return app ? (
                    <ListItem
                      key={row.id}
                      disableGutters
                      secondaryAction={t(
                        `orgs.fleet_roles.${row.application_membership_role[0]?.name ?? "developer"}` as "orgs.fleet_roles.developer",
                      )}
                    >
                      <ApplicationLink app={app} />
                    </ListItem>
                  ) : null;
                })}
              </List>
            )}
          </Card>
        ) : null}
      </Box>
    </>
  );
}
export const MemberTeamsPage = () => <MemberPage section="teams" />;
export const MemberFleetsPage = () => <MemberPage section="fleet" />;
export const MemberAppsPage = () => <MemberPage section="app" />;
export const MemberBlocksPage = () => <MemberPage section="block" />;
