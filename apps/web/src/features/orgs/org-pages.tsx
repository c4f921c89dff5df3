import { DATE_FORMAT } from "@flotilla/domain";
import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import DriveFileRenameOutlineOutlined from "@mui/icons-material/DriveFileRenameOutlineOutlined";
import LogoutOutlined from "@mui/icons-material/LogoutOutlined";
import UploadOutlined from "@mui/icons-material/UploadOutlined";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import IconButton from "@mui/material/IconButton";
import List from "@mui/material/List";
import ListItem from "@mui/material/ListItem";
import ListItemText from "@mui/material/ListItemText";
import Paper from "@mui/material/Paper";
import Stack from "@mui/material/Stack";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { format } from "date-fns";
import { type ChangeEvent, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { TextLink } from "../../components/links.tsx";
import { PageHeader } from "../../components/page.tsx";
import { errorText, responseError } from "../../lib/errors.ts";
import { t as translate } from "../../lib/i18n.ts";
import { useLookup } from "../../lib/lookup.ts";
import { showToast } from "../../lib/toasts.ts";
import { usePreference } from "../../lib/use-preference.ts";
import { ApplicationListPage } from "../fleets/list-page.tsx";
import { type ApplicationClass, organizationAbilities } from "./access.ts";
import {
  type OrgApplication,
  type Organization,
  pineOf,
  useMyOrgRole,
  useOrgApplications,
  useOrganization,
  useTeams,
} from "./data.ts";
import { LogRetentionCard } from "./log-retention-card.tsx";
import { LOGO_MAX_BYTES, logoProblem, OrgLogo } from "./logo.tsx";
import { Card, NameDialog, useNumericParam } from "./ui.tsx";

const classLabel = (kind: ApplicationClass) =>
  kind === "fleet" ? translate("nav.fleets") : kind === "app" ? translate("nav.apps") : translate("nav.blocks");

/** Paths of a fleet, app or block (its members page is what the dashboard has for now). */
export const applicationBase = (kind: ApplicationClass) =>
  kind === "fleet" ? "/fleets" : kind === "app" ? "/apps" : "/blocks";

export function ApplicationLink({ app }: { app: Pick<OrgApplication, "id" | "app_name" | "is_of__class"> }) {
  return (
    <TextLink to={`${applicationBase(app.is_of__class)}/${app.id}` as "/"} underline="hover" sx={{ fontWeight: 500 }}>
      {app.app_name}
    </TextLink>
  );
}

/** `/orgs/{orgId}` (spec 3 §2): cards, rename, logo, handle with copy, created date, leave/delete. */
export function OrgSummaryPage() {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const orgId = useNumericParam("orgId");
  const org = useLookup<Organization>(useOrganization(orgId));
  const mine = useMyOrgRole(orgId);
  const apps = useOrgApplications(orgId);
  const teams = useTeams(orgId);
  const [displayApps] = usePreference("displayApps");
  const [renaming, setRenaming] = useState(false);
  const [confirm, setConfirm] = useState<"delete" | "leave">();
  const [logoError, setLogoError] = useState<string>();
  const fileInput = useRef<HTMLInputElement>(null);
  const abilities = organizationAbilities(mine.role, mine.administratorCount);

  const uploadLogo = useMutation({
    mutationFn: async (file: File) => {
      const token = await sdk.auth.getToken();
      const response = await fetch(`${config.apiUrl}/organization/${orgId}/logo`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": file.type },
        body: file,
      });
      if (!response.ok) throw await responseError(response);
    },
    meta: { reportErrors: false },
    onSuccess: async () => {
      showToast("success", t("orgs.logo_updated"));
      await queryClient.invalidateQueries({ queryKey: ["orgs"] });
    },
    onError: (error) => setLogoError(errorText(error)),
  });

  const removeLogo = useMutation({
    mutationFn: async () => {
      const token = await sdk.auth.getToken();
      const response = await fetch(`${config.apiUrl}/organization/${orgId}/logo`, {
        method: "DELETE",
        headers: { Authorization: `Bearer ${token}` },
      });
      if (!response.ok) throw await responseError(response);
    },
    onSuccess: async () => {
      showToast("success", t("orgs.logo_updated"));
      await queryClient.invalidateQueries({ queryKey: ["orgs"] });
    },
  });

  const leaveOrDelete = useMutation({
    mutationFn: async () => {
      if (confirm === "delete") await pineOf(sdk).delete({ resource: "organization", id: orgId });
      else if (mine.membershipId)
        await pineOf(sdk).delete({ resource: "organization_membership", id: mine.membershipId });
    },
    onSuccess: async () => {
      showToast("success", confirm === "delete" ? t("orgs.deleted") : t("orgs.left"));
      setConfirm(undefined);
      queryClient.removeQueries({ queryKey: ["orgs", orgId] });
      await queryClient.invalidateQueries({ queryKey: ["orgs", "list"] });
      await navigate({ to: "/orgs" });
    },
  });

  if (!org) return null;
  const chooseLogo = (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = "";
    if (!file) return;
    const problem = logoProblem(file);
    if (problem) {
      setLogoError(t(`orgs.${problem}`));
      return;
    }
    setLogoError(undefined);
    uploadLogo.mutate(file);
  };
  const byClass = (kind: ApplicationClass) => (apps.data ?? []).filter((app) => app.is_of__class === kind);
  const appCard = (kind: ApplicationClass) => {
    const list = byClass(kind);
    return (
      <Card key={kind} title={`${classLabel(kind)} (${list.length})`} scroll>
        {list.length === 0 ? (
          <Typography variant="body2" color="text.secondary">
            {t("orgs.none_yet")}
          </Typography>
        ) : (
          <List dense disablePadding>
            {list.map((app) => (
              <ListItem key={app.id} disableGutters>
                <ApplicationLink app={app} />
              </ListItem>
            ))}
          </List>
        )}
      </Card>
    );
  };

  return (
    <>
      <PageHeader
        title={org.name}
        description={t("orgs.summary_description")}
        actions={
          <>
            {abilities.rename ? (
              <Button startIcon={<DriveFileRenameOutlineOutlined />} onClick={() => setRenaming(true)}>
                {t("orgs.rename")}
              </Button>
            ) : null}
            {abilities.delete ? (
              <Button
                color="error"
                variant="outlined"
                startIcon={<DeleteOutlined />}
                onClick={() => setConfirm("delete")}
              >
                {t("orgs.delete_org")}
              </Button>
            ) : null}
            {abilities.leave === "allowed" ? (
              <Button
                color="error"
                variant="outlined"
                startIcon={<LogoutOutlined />}
                onClick={() => setConfirm("leave")}
              >
                {t("orgs.leave")}
              </Button>
            ) : null}
          </>
        }
      />
      <Paper variant="outlined" component="section" aria-label={t("orgs.details")} sx={{ p: 2, mb: 2 }}>
        <Stack direction="row" spacing={2} sx={{ alignItems: "center" }}>
          <OrgLogo org={org} size={64} />
          <Box sx={{ flex: 1, minWidth: 0 }}>
            <Box sx={{ display: "flex", alignItems: "center", gap: 0.5 }}>
              <Typography variant="body2" color="text.secondary">
                {t("orgs.handle")}:
              </Typography>
              <Typography variant="body2" sx={{ fontWeight: 500 }} data-testid="org-handle">
                {org.handle}
              </Typography>
              <Tooltip title={t("orgs.copy_handle")}>
                <IconButton
                  size="small"
                  aria-label={t("orgs.copy_handle")}
                  onClick={async () => {
                    await navigator.clipboard.writeText(org.handle).catch(() => undefined);
                    showToast("success", t("orgs.copied"));
                  }}
                >
                  <ContentCopyOutlined sx={{ fontSize: 16 }} />
                </IconButton>
              </Tooltip>
            </Box>
            <Typography variant="body2" color="text.secondary">
              {t("orgs.created")}: {format(new Date(org.created_at), DATE_FORMAT)}
            </Typography>
            {mine.role ? (
              <Typography variant="body2" color="text.secondary">
                {t("orgs.your_role")}: <Chip size="small" label={t(`orgs.roles.${mine.role}`)} />
              </Typography>
            ) : null}
          </Box>
          {abilities.rename ? (
            <Box sx={{ textAlign: "right" }}>
              <input
                ref={fileInput}
                type="file"
                accept="image/png,image/jpeg"
                hidden
                aria-label={t("orgs.logo_file")}
                data-testid="logo-input"
                onChange={chooseLogo}
              />
              <Button
                variant="outlined"
                startIcon={<UploadOutlined />}
                loading={uploadLogo.isPending}
                onClick={() => fileInput.current?.click()}
              >
                {t("orgs.upload_logo")}
              </Button>
              {org.logo_image?.href ? (
                <Button color="error" sx={{ ml: 1 }} loading={removeLogo.isPending} onClick={() => removeLogo.mutate()}>
                  {t("orgs.remove_logo")}
                </Button>
              ) : null}
              <Typography variant="caption" color="text.secondary" component="p" sx={{ mt: 0.5 }}>
                {t("orgs.logo_hint", { max: LOGO_MAX_BYTES.toLocaleString("en-US") })}
              </Typography>
            </Box>
          ) : null}
        </Stack>
        {logoError ? (
          <Typography role="alert" color="error" variant="body2" sx={{ mt: 1 }}>
            {logoError}
          </Typography>
        ) : null}
      </Paper>
      <Box sx={{ display: "grid", gap: 2, gridTemplateColumns: { xs: "1fr", md: "1fr 1fr" } }}>
        <Card
          title={`${t("orgs.members")} (${mine.memberships.length})`}
          scroll
          action={
            <TextLink to="/orgs/$orgId/members" params={{ orgId: String(orgId) }} variant="body2">
              {t("orgs.manage")}
            </TextLink>
          }
        >
          <List dense disablePadding>
            {mine.memberships.map((row) => (
              <ListItem
                key={row.id}
                disableGutters
                secondaryAction={
                  <Chip
                    size="small"
                    variant="outlined"
                    label={t(`orgs.roles.${row.organization_membership_role[0]?.name ?? "member"}`)}
                  />
                }
              >
                <ListItemText primary={row.user[0]?.username} />
              </ListItem>
            ))}
          </List>
        </Card>
        <Card
          title={`${t("orgs.teams")} (${teams.data?.length ?? 0})`}
          scroll
          action={
            <TextLink to="/orgs/$orgId/teams" params={{ orgId: String(orgId) }} variant="body2">
              {t("orgs.manage")}
            </TextLink>
          }
        >
          {(teams.data ?? []).length === 0 ? (
            <Typography variant="body2" color="text.secondary">
              {t("orgs.none_yet")}
            </Typography>
          ) : (
            <List dense disablePadding>
              {(teams.data ?? []).map((team) => (
                <ListItem key={team.id} disableGutters>
                  <TextLink
                    to="/orgs/$orgId/teams/$teamId"
                    params={{ orgId: String(orgId), teamId: String(team.id) }}
                    underline="hover"
                    sx={{ fontWeight: 500 }}
                  >
                    {team.name}
                  </TextLink>
                </ListItem>
              ))}
            </List>
          )}
        </Card>
        {appCard("fleet")}
        {displayApps ? appCard("app") : null}
        {appCard("block")}
      </Box>
      <Box sx={{ mt: 2 }}>
        <LogRetentionCard orgId={orgId} editable={abilities.rename} />
      </Box>
      <NameDialog
        open={renaming}
        title={t("orgs.rename_title")}
        label={t("orgs.name")}
        submitLabel={t("orgs.rename")}
        initial={org.name}
        onClose={() => setRenaming(false)}
        onSubmit={async (name) => {
          await pineOf(sdk).patch({ resource: "organization", id: orgId, body: { name } });
          showToast("success", t("orgs.renamed"));
          await queryClient.invalidateQueries({ queryKey: ["orgs"] });
        }}
      />
      <ConfirmDialog
        open={confirm !== undefined}
        danger
        title={confirm === "delete" ? t("orgs.delete_org") : t("orgs.leave")}
        text={confirm === "delete" ? t("orgs.delete_text") : t("orgs.leave_text", { name: org.name })}
        confirmLabel={confirm === "delete" ? t("orgs.delete_org") : t("orgs.leave")}
        busy={leaveOrDelete.isPending}
        onConfirm={() => leaveOrDelete.mutate()}
        onClose={() => setConfirm(undefined)}
      />
    </>
  );
}

/** `/orgs/{orgId}/fleets|apps|blocks` (spec 3 §2): the organization's applications of one class. */
function OrgApplicationsPage({ kind }: { kind: ApplicationClass }) {
  return <ApplicationListPage kind={kind} orgId={useNumericParam("orgId")} />;
}

export const OrgFleetsPage = () => <OrgApplicationsPage kind="fleet" />;
export const OrgAppsPage = () => <OrgApplicationsPage kind="app" />;
export const OrgBlocksPage = () => <OrgApplicationsPage kind="block" />;
