import AddOutlined from "@mui/icons-material/AddOutlined";
import BadgeOutlined from "@mui/icons-material/BadgeOutlined";
import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import EditOutlined from "@mui/icons-material/EditOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import IconButton from "@mui/material/IconButton";
import Link from "@mui/material/Link";
import Stack from "@mui/material/Stack";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate, useParams } from "@tanstack/react-router";
import { type ReactElement, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { TextLink } from "../../components/links.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { apiErrorCode, errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { sessionQuery } from "../auth/session.ts";
import { isAdmin } from "../auth/token.ts";
import { organizationCan } from "../orgs/access.ts";
import { pineOf, useOrganizations } from "../orgs/data.ts";
import { Card } from "../orgs/ui.tsx";
import {
  type AdminOrganization,
  type IdpMembership,
  idpKeys,
  type SamlAccount,
  useAdminOrganizations,
  useIdentityProvider,
  useSamlAccounts,
} from "./data.ts";
import { type DomainOrganization, VerifiedDomainsCard } from "./domains-card.tsx";
import { AddOrganizationsDialog, IdentityProviderDialog, TeamPicker } from "./idp-dialogs.tsx";

/** The documentation of enterprise single sign-on, linked from the introduction (spec 3 §2). */
export const IDP_DOCS_URL = "https://docs.balena.io/learn/accounts/enterprise-sso/";

function copy(text: string, message: string) {
  void navigator.clipboard?.writeText(text).then(
    () => showToast("success", message),
    () => undefined,
  );
}

/** A label, a value in monospace and its copy button (spec 3 §2: each value can be copied). */
function CopyRow(props: { label: string; value: string; href?: string }) {
  const { t } = useTranslation();
  return (
    <Box
      role="group"
      aria-label={props.label}
      sx={{
        display: "grid",
        gridTemplateColumns: { xs: "1fr auto", sm: "240px 1fr auto" },
        alignItems: "center",
        columnGap: 2,
        py: 0.75,
        borderBottom: 1,
        borderColor: "divider",
        "&:last-of-type": { borderBottom: 0 },
      }}
    >
      <Typography variant="body2" color="text.secondary" sx={{ gridColumn: { xs: "1 / -1", sm: "auto" } }}>
        {props.label}
      </Typography>
      <Typography
        variant="body2"
        data-testid={`value-${props.label}`}
        sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13, overflowWrap: "anywhere", minWidth: 0 }}
      >
        {props.href ? (
          <Link href={props.href} target="_blank" rel="noreferrer">
            {props.value}
          </Link>
        ) : (
          props.value
        )}
      </Typography>
      <Tooltip title={t("identity_provider.copy", { name: props.label })}>
        <IconButton
          size="small"
          aria-label={t("identity_provider.copy", { name: props.label })}
          onClick={() => copy(props.value, t("identity_provider.copied"))}
        >
          <ContentCopyOutlined sx={{ fontSize: 16 }} />
        </IconButton>
      </Tooltip>
    </Box>
  );
}

/** Whether the signed-in user belongs to an organization or is a platform administrator (spec 1 §6.1). */
function useIdpAreaAllowed(): boolean | undefined {
  const { sdk } = useServices();
  const session = useQuery({ ...sessionQuery(sdk), throwOnError: false });
  const orgs = useOrganizations();
  if (session.data?.kind === "signed-in" && isAdmin(session.data.claims)) return true;
  if (!orgs.isSuccess) return undefined;
  return orgs.data.length > 0;
}

/**
 * `/identity-provider` without one the user administers (the route redirects to it otherwise;
 * spec 3 §2): an introduction and "Add identity provider". Without an organization on a plan
 * with SAML the button is disabled and points to the plans.
 */
export function IdentityProviderIntroPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const allowed = useIdpAreaAllowed();
  const adminOrgs = useAdminOrganizations();
  const [adding, setAdding] = useState(false);
  const samlOrgs = (adminOrgs.data ?? []).filter((org) => org.saml);
  const upgradeOrg = (adminOrgs.data ?? [])[0];
  if (allowed === false) {
    return (
      <>
        <PageHeader title={t("identity_provider.title")} />
        <Alert severity="error" role="alert">
          {t("errors.unauthorized_view_idp")}
        </Alert>
      </>
    );
  }
  const canAdd = samlOrgs.length > 0;
  const addButton = (
    <Button variant="contained" startIcon={<AddOutlined />} disabled={!canAdd} onClick={() => setAdding(true)}>
      {t("identity_provider.add")}
    </Button>
  );
  return (
    <>
      <PageHeader title={t("identity_provider.title")} description={t("identity_provider.description")} />
      <EmptyState
        icon={<BadgeOutlined />}
        title={t("identity_provider.intro_title")}
        text={`${t("identity_provider.intro_text")} ${t("identity_provider.intro_steps")}`}
        action={
          <Stack spacing={1.5} sx={{ alignItems: "center" }}>
            {canAdd ? (
              addButton
            ) : (
              <Tooltip title={t("identity_provider.not_in_plan")}>
                <span>{addButton}</span>
              </Tooltip>
            )}
            <Link href={IDP_DOCS_URL} target="_blank" rel="noopener noreferrer" variant="body2">
              {t("identity_provider.docs_link")}
            </Link>
            {!canAdd && adminOrgs.isSuccess ? (
              <Typography variant="body2" color="text.secondary" sx={{ maxWidth: 420 }}>
                {t("identity_provider.not_in_plan")}{" "}
                {upgradeOrg ? (
                  <TextLink to="/orgs/$orgId/billing" params={{ orgId: String(upgradeOrg.id) }}>
                    {t("identity_provider.upgrade")}
                  </TextLink>
                ) : null}
              </Typography>
            ) : null}
          </Stack>
        }
      />
      {adding ? (
        <IdentityProviderDialog
          organizations={samlOrgs}
          onClose={() => setAdding(false)}
          onSaved={(id) => {
            void queryClient.invalidateQueries({ queryKey: idpKeys.all });
            void navigate({ to: "/identity-provider/$idpId", params: { idpId: String(id) } });
          }}
        />
      ) : null}
    </>
  );
}

/**
 * `/identity-provider/{id}` (spec 3 §2, §5, §6, §8): the summary card with its copyable values,
 * what the IdP's administrator needs from Flotilla, and the organizations with their teams.
 * Edit and Remove (and the organizations' changes) are for an administrator of one of its
 * organizations; anyone else gets a tooltip saying so.
 */
export function IdentityProviderPage() {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { idpId } = useParams({ strict: false }) as { idpId: string };
  const id = Number(idpId);
  const provider = useIdentityProvider(id);
  const samlAccounts = useSamlAccounts(id);
  const adminOrgs = useAdminOrganizations();
  const [editing, setEditing] = useState(false);
  const [removing, setRemoving] = useState(false);
  const [addingOrgs, setAddingOrgs] = useState(false);
  const [leaving, setLeaving] = useState<IdpMembership>();
  const [revoking, setRevoking] = useState<SamlAccount>();
  const refresh = () => queryClient.invalidateQueries({ queryKey: idpKeys.all });
  const revoke = useMutation({
    mutationFn: (account: SamlAccount) => pineOf(sdk).delete({ resource: "saml_account", id: account.id }),
    meta: { reportErrors: false },
    onSuccess: async () => {
      showToast("success", t("identity_provider.saml_account_revoked"));
      setRevoking(undefined);
      await queryClient.invalidateQueries({ queryKey: idpKeys.samlAccounts(id) });
    },
  });

  const remove = useMutation({
    mutationFn: () => pineOf(sdk).delete({ resource: "identity_provider", id }),
    meta: { reportErrors: false },
    onSuccess: async () => {
      showToast("success", t("identity_provider.idp_removed"));
      setRemoving(false);
      queryClient.removeQueries({ queryKey: idpKeys.one(id) });
      await queryClient.invalidateQueries({ queryKey: idpKeys.list });
      await navigate({ to: "/identity-provider", replace: true });
    },
  });
  const removeMembership = useMutation({
    mutationFn: (membership: IdpMembership) =>
      pineOf(sdk).delete({ resource: "identity_provider_membership", id: membership.id }),
    meta: { reportErrors: false },
    onSuccess: () => {
      setLeaving(undefined);
      showToast("success", t("identity_provider.organization_removed"));
    },
    onError: (error) =>
      showToast(
        "error",
        apiErrorCode(error) === "idp_must_have_at_least_one_org"
          ? t("warnings.idp_must_have_at_least_one_org")
          : errorText(error),
      ),
    onSettled: refresh,
  });
  const changeTeam = useMutation({
    mutationFn: ({ membership, team }: { membership: IdpMembership; team: number | null }) =>
      pineOf(sdk).patch({
        resource: "identity_provider_membership",
        id: membership.id,
        body: { grants_access_to__team: team },
      }),
    onSuccess: () => showToast("success", t("identity_provider.team_changed")),
    onSettled: refresh,
  });

  const data = provider.data;
  if (!data) return null;
  const memberships = data.identity_provider_membership;
  const adminIds = new Set((adminOrgs.data ?? []).map((org) => org.id));
  // A provider without an organization is readable only by its creator, who manages it until it
  // has one (the server's permission, spec 3 §4; it is removed an hour after its creation).
  const orphan = memberships.length === 0;
  const canManage = orphan || memberships.some((m) => m.organization[0] && adminIds.has(m.organization[0].id));
  // The organizations whose domains the caller manages (organization.manage_domains, administrators).
  const domainOrgs: DomainOrganization[] = memberships
    .flatMap((m) => m.organization)
    .filter((org) => adminIds.has(org.id) && organizationCan("administrator", "organization", "manage_domains"))
    .map((org) => ({ id: org.id, name: org.name }));
  const notAdmin = t("warnings.cannot_interact_not_an_admin_of_this_idp");
  const guarded = (button: ReactElement) =>
    canManage ? (
      button
    ) : (
      <Tooltip title={notAdmin}>
        <span>{button}</span>
      </Tooltip>
    );
  const sso = data.sso_identifier;
  const spBase = `${config.apiUrl}/auth/saml/${encodeURIComponent(sso)}`;
  const attachable: AdminOrganization[] = (adminOrgs.data ?? []).filter(
    (org) => org.saml && !memberships.some((m) => m.organization[0]?.id === org.id),
  );

  return (
    <>
      <PageHeader
        title={t("identity_provider.title")}
        description={t("identity_provider.description")}
        actions={
          <>
            {guarded(
              <Button
                variant="outlined"
                startIcon={<EditOutlined />}
                disabled={!canManage}
                onClick={() => setEditing(true)}
              >
                {t("identity_provider.edit")}
              </Button>,
            )}
            {guarded(
              <Button
                variant="outlined"
                color="error"
                startIcon={<DeleteOutlined />}
                disabled={!canManage}
                onClick={() => setRemoving(true)}
              >
                {t("identity_provider.remove")}
              </Button>,
            )}
          </>
        }
      />
      <Stack spacing={2}>
        {orphan ? (
          <Alert severity="warning" role="status">
            {t("identity_provider.no_organization_yet")}
          </Alert>
        ) : null}
        <Card title={t("identity_provider.summary")}>
          <CopyRow label={t("identity_provider.sso_identifier")} value={sso} />
          <CopyRow label={t("identity_provider.login_url")} value={`${window.location.origin}/saml/${sso}`} />
          <CopyRow label={t("identity_provider.id")} value={String(data.id)} />
          <CopyRow label={t("identity_provider.issuer")} value={data.issuer} />
          <CopyRow label={t("identity_provider.entry_point")} value={data.entry_point} />
        </Card>
        <Card title={`${t("identity_provider.saml_accounts")} (${samlAccounts.data?.length ?? 0})`} scroll>
          <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
            {t("identity_provider.saml_accounts_text")}
          </Typography>
          {samlAccounts.data && samlAccounts.data.length > 0 ? (
            <Table size="small" aria-label={t("identity_provider.saml_accounts")}>
              <TableHead>
                <TableRow>
                  <TableCell>{t("identity_provider.saml_user")}</TableCell>
                  <TableCell>{t("identity_provider.saml_remote_id")}</TableCell>
                  <TableCell align="right" sx={{ width: 120 }} />
                </TableRow>
              </TableHead>
              <TableBody>
                {samlAccounts.data.map((account) => (
                  <TableRow key={account.id}>
                    <TableCell>{account.belongs_to__user[0]?.username ?? account.display_name ?? "—"}</TableCell>
                    <TableCell sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13, overflowWrap: "anywhere" }}>
                      {account.remote_id}
                    </TableCell>
                    <TableCell align="right">
                      {guarded(
                        <Button
                          size="small"
                          color="error"
                          disabled={!canManage}
                          aria-label={t("identity_provider.revoke_saml_account", { name: account.remote_id })}
                          onClick={() => setRevoking(account)}
                        >
                          {t("identity_provider.revoke")}
                        </Button>,
                      )}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          ) : samlAccounts.isSuccess ? (
            <Typography variant="body2">{t("identity_provider.saml_accounts_none")}</Typography>
          ) : null}
        </Card>
        <Card title={t("identity_provider.service_provider")}>
          <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
            {t("identity_provider.service_provider_text")}
          </Typography>
          <CopyRow label={t("identity_provider.sp_entity_id")} value={spBase} />
          <CopyRow label={t("identity_provider.sp_acs_url")} value={`${spBase}/callback`} />
          <CopyRow
            label={t("identity_provider.sp_metadata")}
            value={`${spBase}/metadata`}
            href={`${spBase}/metadata`}
          />
        </Card>
        <Card
          title={t("identity_provider.organizations")}
          action={guarded(
            <Button size="small" startIcon={<AddOutlined />} disabled={!canManage} onClick={() => setAddingOrgs(true)}>
              {t("identity_provider.add_organizations")}
            </Button>,
          )}
        >
          <Table size="small" aria-label={t("identity_provider.organizations")}>
            <TableHead>
              <TableRow>
                <TableCell>{t("identity_provider.organization")}</TableCell>
                <TableCell sx={{ width: 280 }}>{t("identity_provider.team")}</TableCell>
                <TableCell align="right" sx={{ width: 48 }} />
              </TableRow>
            </TableHead>
            <TableBody>
              {memberships.map((membership) => {
                const org = membership.organization[0];
                const manageable = org !== undefined && adminIds.has(org.id);
                const team = membership.grants_access_to__team[0] ?? null;
                return (
                  <TableRow key={membership.id}>
                    <TableCell>
                      {org ? (
                        <TextLink to="/orgs/$orgId" params={{ orgId: String(org.id) }} underline="hover">
                          {org.name}
                        </TextLink>
                      ) : (
                        "—"
                      )}
                    </TableCell>
                    <TableCell>
                      {manageable ? (
                        <TeamPicker
                          size="small"
                          orgId={org.id}
                          value={team?.id ?? null}
                          label={t("identity_provider.team_of", { name: org.name })}
                          disabled={changeTeam.isPending}
                          onChange={(next) => changeTeam.mutate({ membership, team: next })}
                        />
                      ) : (
                        (team?.name ?? t("identity_provider.no_team"))
                      )}
                    </TableCell>
                    <TableCell align="right">
                      {guarded(
                        <IconButton
                          size="small"
                          color="error"
                          disabled={!canManage || removeMembership.isPending}
                          aria-label={t("identity_provider.remove_organization", { name: org?.name ?? "" })}
                          onClick={() => {
                            if (memberships.length <= 1) {
                              showToast("warning", t("warnings.idp_must_have_at_least_one_org"));
                              return;
                            }
                            setLeaving(membership);
                          }}
                        >
                          <DeleteOutlined fontSize="small" />
                        </IconButton>,
                      )}
                    </TableCell>
                  </TableRow>
                );
              })}
            </TableBody>
          </Table>
        </Card>
        {orphan ? null : <VerifiedDomainsCard organizations={domainOrgs} canManage={domainOrgs.length > 0} />}
      </Stack>
      {editing ? (
        <IdentityProviderDialog
          provider={data}
          onClose={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            void refresh();
          }}
        />
      ) : null}
      {addingOrgs ? (
        <AddOrganizationsDialog
          providerId={id}
          organizations={attachable}
          onClose={() => setAddingOrgs(false)}
          onDone={() => void refresh()}
        />
      ) : null}
      <ConfirmDialog
        open={leaving !== undefined}
        danger
        title={t("identity_provider.remove_organization_title")}
        text={t("identity_provider.remove_organization_text")}
        items={[leaving?.organization[0]?.name ?? ""]}
        confirmLabel={t("identity_provider.remove_organization_confirm")}
        busy={removeMembership.isPending}
        onConfirm={() => leaving && removeMembership.mutate(leaving)}
        onClose={() => setLeaving(undefined)}
      />
      <ConfirmDialog
        open={revoking !== undefined}
        danger
        title={t("identity_provider.revoke_title")}
        text={t("identity_provider.revoke_text")}
        items={[revoking?.belongs_to__user[0]?.username ?? revoking?.remote_id ?? ""]}
        confirmLabel={t("identity_provider.revoke")}
        busy={revoke.isPending}
        error={revoke.isError ? errorText(revoke.error) : undefined}
        onConfirm={() => revoking && revoke.mutate(revoking)}
        onClose={() => {
          setRevoking(undefined);
          revoke.reset();
        }}
      />
      <ConfirmDialog
        open={removing}
        danger
        title={t("identity_provider.remove_title")}
        text={t("identity_provider.remove_text")}
        items={[sso]}
        confirmLabel={t("identity_provider.remove")}
        busy={remove.isPending}
        error={remove.isError ? errorText(remove.error) : undefined}
        onConfirm={() => remove.mutate()}
        onClose={() => {
          setRemoving(false);
          remove.reset();
        }}
      />
    </>
  );
}
