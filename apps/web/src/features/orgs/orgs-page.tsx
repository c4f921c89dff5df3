import { DATE_FORMAT } from "@flotilla/domain";
import AddOutlined from "@mui/icons-material/AddOutlined";
import CorporateFareOutlined from "@mui/icons-material/CorporateFareOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import Button from "@mui/material/Button";
import Checkbox from "@mui/material/Checkbox";
import Paper from "@mui/material/Paper";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { format } from "date-fns";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { TextLink } from "../../components/links.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { showToast } from "../../lib/toasts.ts";
import { sessionQuery } from "../auth/session.ts";
import { isAdmin } from "../auth/token.ts";
import { organizationCan } from "./access.ts";
import { CreateOrganizationDialog } from "./create-org-dialog.tsx";
import { pineOf, useMyRolesByOrganization, useOrganizations } from "./data.ts";
import { OrgLogo } from "./logo.tsx";

/**
 * `/orgs` (spec 3 §2): the user's organizations by name, with Create and Delete for those the
 * server lets do it: administrators (of some organization, for Create; of that organization, for
 * Delete) and platform administrators (spec 1 §6.2; docs/decisions.md).
 */
export function OrgsPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const orgs = useOrganizations();
  const myRoles = useMyRolesByOrganization();
  const session = useQuery(sessionQuery(sdk));
  const platformAdmin = session.data?.kind === "signed-in" && isAdmin(session.data.claims);
  // What the server allows (spec 1 §6.2): administrators create and delete, others only read.
  const administers = (orgId: number) =>
    platformAdmin || organizationCan(myRoles.data?.get(orgId), "organization", "delete");
  const canCreate =
    platformAdmin ||
    [...(myRoles.data?.values() ?? [])].some((role) => organizationCan(role, "organization", "create"));
  const [creating, setCreating] = useState(false);
  const [selected, setSelected] = useState<number[]>([]);
  const [deleting, setDeleting] = useState(false);
  const rows = orgs.data ?? [];
  const chosen = rows.filter((row) => selected.includes(row.id));

  const remove = useMutation({
    mutationFn: async () => {
      for (const org of chosen) await pineOf(sdk).delete({ resource: "organization", id: org.id });
    },
    onSuccess: () => {
      showToast("success", t("orgs.deleted"));
      setSelected([]);
      setDeleting(false);
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: ["orgs"] }),
  });

  return (
    <>
      <PageHeader
        title={t("pages.orgs.title")}
        description={t("pages.orgs.description")}
        actions={
          <>
            {rows.some((org) => administers(org.id)) ? (
              <Button
                variant="outlined"
                color="error"
                startIcon={<DeleteOutlined />}
                disabled={chosen.length === 0}
                onClick={() => setDeleting(true)}
              >
                {t("orgs.delete")}
              </Button>
            ) : null}
            {canCreate ? (
              <Button variant="contained" startIcon={<AddOutlined />} onClick={() => setCreating(true)}>
                {t("orgs.create")}
              </Button>
            ) : null}
          </>
        }
      />
      {orgs.isSuccess && rows.length === 0 ? (
        <EmptyState
          icon={<CorporateFareOutlined />}
          title={t("pages.orgs.empty_title")}
          text={t("pages.orgs.empty_text")}
        />
      ) : (
        <Paper variant="outlined">
          <Table size="small" aria-label={t("pages.orgs.title")}>
            <TableHead>
              <TableRow>
                <TableCell padding="checkbox" />
                <TableCell>{t("orgs.name")}</TableCell>
                <TableCell>{t("orgs.handle")}</TableCell>
                <TableCell align="right">{t("orgs.members")}</TableCell>
                <TableCell align="right">{t("orgs.teams")}</TableCell>
                <TableCell>{t("orgs.created")}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {rows.map((org) => (
                <TableRow key={org.id} hover>
                  <TableCell padding="checkbox">
                    {administers(org.id) ? (
                      <Checkbox
                        size="small"
                        checked={selected.includes(org.id)}
                        slotProps={{ input: { "aria-label": t("orgs.select", { name: org.name }) } }}
                        onChange={(event) =>
                          setSelected((prev) =>
                            event.target.checked ? [...prev, org.id] : prev.filter((id) => id !== org.id),
                          )
                        }
                      />
                    ) : null}
                  </TableCell>
                  <TableCell>
                    <TextLink
                      to="/orgs/$orgId"
                      params={{ orgId: String(org.id) }}
                      underline="hover"
                      sx={{ display: "inline-flex", alignItems: "center", gap: 1, fontWeight: 500 }}
                    >
                      <OrgLogo org={org} size={24} />
                      {org.name}
                    </TextLink>
                  </TableCell>
                  <TableCell sx={{ color: "text.secondary" }}>{org.handle}</TableCell>
                  <TableCell align="right">{org.organization_membership.length}</TableCell>
                  <TableCell align="right">{org.owns__team.length}</TableCell>
                  <TableCell>{format(new Date(org.created_at), DATE_FORMAT)}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </Paper>
      )}
      <CreateOrganizationDialog
        open={creating}
        onClose={() => setCreating(false)}
        onSubmit={async (body) => {
          await pineOf(sdk).post({ resource: "organization", body });
          showToast("success", t("orgs.created_toast"));
          await queryClient.invalidateQueries({ queryKey: ["orgs"] });
        }}
      />
      <ConfirmDialog
        open={deleting}
        danger
        title={t("orgs.delete_title", { count: chosen.length })}
        text={t("orgs.delete_text")}
        items={chosen.map((org) => org.name)}
        confirmLabel={t("orgs.delete")}
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setDeleting(false)}
      />
    </>
  );
}
