import type { AdminUser, GlobalRole } from "@flotilla/domain";
import ArrowDropDown from "@mui/icons-material/ArrowDropDown";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import ListItemText from "@mui/material/ListItemText";
import Menu from "@mui/material/Menu";
import MenuItem from "@mui/material/MenuItem";
import Paper from "@mui/material/Paper";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { DataGrid, type GridColDef, type GridPaginationModel } from "@mui/x-data-grid";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { SearchField } from "../../components/form-fields.tsx";
import { PageHeader } from "../../components/page.tsx";
import { errorText, REAUTH_CANCELLED_CODE } from "../../lib/errors.ts";
import { formatDate, formatFullDate } from "../../lib/format.ts";
import { showToast } from "../../lib/toasts.ts";
import { useReauth } from "../auth/reauth.tsx";
import { sessionQuery } from "../auth/session.ts";
import { adminApi, adminKeys, type RoleFilter } from "./api.ts";

const PAGE_SIZE = 25;
/** The roles in the order the page shows them: the platform administrator first (spec 1 §6.1 ranking). */
const ROLES: readonly GlobalRole[] = ["balena_admin", "support_agent"];

type Change = { user: AdminUser; role: GlobalRole; grant: boolean };

function useAdminApi() {
  const { sdk, config } = useServices();
  return useMemo(() => adminApi(sdk, config.apiUrl), [sdk, config.apiUrl]);
}

/** A global role as a chip: the platform administrator in the admin header's red, support agents in the accent. */
function RoleChip({ role }: { role: GlobalRole }) {
  const { t } = useTranslation();
  return (
    <Chip
      size="small"
      variant="outlined"
      color={role === "balena_admin" ? "error" : "primary"}
      label={t(`admin.roles.${role}`)}
      sx={{ height: 22, fontSize: 12, fontWeight: 500 }}
    />
  );
}

/**
 * `/admin/users` (Admin → Users; docs/support.md "Platform staff"): every user of the
 * installation, searched by username or email and paged on the server, with their global roles
 * and last sign-in. A platform administrator grants and removes `support_agent` and
 * `balena_admin`, each after a confirmation; the last platform administrator keeps the role.
 */
export function AdminUsersPage() {
  const { t } = useTranslation();
  const api = useAdminApi();
  const { sdk } = useServices();
  const queryClient = useQueryClient();
  const withReauth = useReauth();
  const session = useQuery(sessionQuery(sdk));
  const me = session.data?.kind === "signed-in" ? session.data.user.id : undefined;
  const [searchInput, setSearchInput] = useState("");
  const [search, setSearch] = useState("");
  const [role, setRole] = useState<RoleFilter>("");
  const [pagination, setPagination] = useState<GridPaginationModel>({ page: 0, pageSize: PAGE_SIZE });
  const [menu, setMenu] = useState<{ anchor: HTMLElement; user: AdminUser }>();
  const [change, setChange] = useState<Change>();
  // The search reaches the server 400 ms after typing stops, back on the first page.
  useEffect(() => {
    const timer = setTimeout(() => {
      setSearch(searchInput);
      setPagination((current) => (current.page === 0 ? current : { ...current, page: 0 }));
    }, 400);
    return () => clearTimeout(timer);
  }, [searchInput]);
  const query = { search, role, page: pagination.page, pageSize: pagination.pageSize };
  const users = useQuery({
    queryKey: adminKeys.users(query),
    queryFn: () => api.users(query),
    placeholderData: keepPreviousData,
    meta: { handlesErrors: true },
  });
  const counts = users.data?.role_counts;
  const lastAdmin = (user: AdminUser) => user.global_roles.includes("balena_admin") && (counts?.balena_admin ?? 0) <= 1;

  const apply = useMutation({
    mutationFn: (next: Change) =>
      withReauth(() => (next.grant ? api.grant(next.user.id, next.role) : api.revoke(next.user.id, next.role))),
    meta: { reportErrors: false },
    onSuccess: async (_answer, done) => {
      setChange(undefined);
      const key = done.grant ? (`grant_${done.role}` as const) : (`revoke_${done.role}` as const);
      showToast("success", t(`admin.users.toasts.${key}`, { username: done.user.username }));
      await queryClient.invalidateQueries({ queryKey: adminKeys.all });
    },
  });
  const cancelled = (apply.error as { code?: string } | null)?.code === REAUTH_CANCELLED_CODE;

  const ask = (next: Change) => {
    setMenu(undefined);
    apply.reset();
    setChange(next);
  };

  const columns: GridColDef<AdminUser>[] = [
    {
      field: "username",
      headerName: t("admin.users.columns.username"),
      flex: 0.8,
      minWidth: 130,
      sortable: false,
      renderCell: ({ row }) => (
        <Box sx={{ display: "flex", alignItems: "center", gap: 1, minWidth: 0 }}>
          <Typography component="span" sx={{ fontWeight: 600, fontSize: 14 }} noWrap>
            {row.username}
          </Typography>
          {row.id === me ? <Chip size="small" label={t("admin.users.you")} sx={{ height: 20, fontSize: 11 }} /> : null}
        </Box>
      ),
    },
    {
      field: "email",
      headerName: t("admin.users.columns.email"),
      flex: 1.6,
      minWidth: 190,
      sortable: false,
      renderCell: ({ row }) => (
        <Box sx={{ display: "flex", alignItems: "center", gap: 1, minWidth: 0 }}>
          <Typography component="span" sx={{ fontSize: 14 }} noWrap title={row.email ?? undefined}>
            {row.email ?? "—"}
          </Typography>
          {row.email && !row.is_verified ? (
            <Chip
              size="small"
              color="warning"
              variant="outlined"
              label={t("admin.users.unverified")}
              sx={{ height: 20, fontSize: 11 }}
            />
          ) : null}
        </Box>
      ),
    },
    {
      field: "global_roles",
      headerName: t("admin.users.columns.roles"),
      flex: 1,
      minWidth: 180,
      sortable: false,
      renderCell: ({ row }) =>
        row.global_roles.length === 0 ? (
          <Typography component="span" sx={{ fontSize: 13, color: "text.secondary" }}>
            {t("admin.users.no_role")}
          </Typography>
        ) : (
          <Box sx={{ display: "flex", gap: 0.75, flexWrap: "wrap" }}>
            {ROLES.filter((r) => row.global_roles.includes(r)).map((r) => (
              <RoleChip key={r} role={r} />
            ))}
          </Box>
        ),
    },
    {
      field: "last_sign_in_at",
      headerName: t("admin.users.columns.last_sign_in"),
      width: 175,
      sortable: false,
      renderCell: ({ row }) =>
        row.last_sign_in_at ? (
          <span title={formatFullDate(row.last_sign_in_at)}>{formatDate(row.last_sign_in_at)}</span>
        ) : (
          <Typography component="span" sx={{ fontSize: 13, color: "text.secondary" }}>
            {t("admin.users.never_signed_in")}
          </Typography>
        ),
    },
    {
      field: "created_at",
      headerName: t("admin.users.columns.created"),
      width: 175,
      sortable: false,
      renderCell: ({ row }) => <span title={formatFullDate(row.created_at)}>{formatDate(row.created_at)}</span>,
    },
    {
      field: "actions",
      headerName: "",
      width: 110,
      align: "right",
      sortable: false,
      renderCell: ({ row }) => (
        <Button
          size="small"
          variant="outlined"
          endIcon={<ArrowDropDown />}
          aria-label={t("admin.users.change_roles_of", { username: row.username })}
          aria-haspopup="menu"
          onClick={(event) => setMenu({ anchor: event.currentTarget, user: row })}
        >
          {t("admin.users.change_roles")}
        </Button>
      ),
    },
  ];

  const rows = users.data?.users ?? [];
  const total = users.data?.total ?? 0;
  return (
    <Box>
      <PageHeader title={t("admin.users.title")} description={t("admin.users.description")} />
      <Box sx={{ display: "flex", gap: 1.5, alignItems: "center", mb: 1.5, flexWrap: "wrap" }}>
        <SearchField label={t("admin.users.search")} value={searchInput} onChange={setSearchInput} />
        <TextField
          select
          size="small"
          label={t("admin.users.role_filter")}
          value={role}
          onChange={(event) => {
            setRole(event.target.value as RoleFilter);
            setPagination((current) => ({ ...current, page: 0 }));
          }}
          slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
          sx={{ width: 230 }}
        >
          <MenuItem value="">{t("admin.users.filters.all")}</MenuItem>
          <MenuItem value="any">{t("admin.users.filters.any")}</MenuItem>
          <MenuItem value="balena_admin">{t("admin.users.filters.balena_admin")}</MenuItem>
          <MenuItem value="support_agent">{t("admin.users.filters.support_agent")}</MenuItem>
        </TextField>
        <Box sx={{ flex: 1 }} />
        {counts ? (
          <Typography variant="body2" color="text.secondary">
            {t("admin.users.staff_counts", {
              admins: t("admin.users.admin_count", { count: counts.balena_admin }),
              agents: t("admin.users.agent_count", { count: counts.support_agent }),
            })}
          </Typography>
        ) : null}
      </Box>
      {users.isError ? (
        <Alert severity="error" sx={{ mb: 1.5 }}>
          {t("admin.users.load_failed", { error: errorText(users.error) })}
        </Alert>
      ) : null}
      <Paper variant="outlined" sx={{ overflow: "hidden" }}>
        <DataGrid
          aria-label={t("admin.users.title")}
          rows={rows}
          columns={columns}
          rowCount={total}
          loading={users.isFetching && !users.data}
          paginationMode="server"
          paginationModel={pagination}
          onPaginationModelChange={setPagination}
          pageSizeOptions={[PAGE_SIZE]}
          disableRowSelectionOnClick
          disableColumnMenu
          density="standard"
          rowHeight={48}
          autoHeight
          localeText={{ noRowsLabel: t("admin.users.no_match") }}
          sx={{
            border: 0,
            "& .MuiDataGrid-columnHeaderTitle": { fontWeight: 600, fontSize: 13 },
            "& .MuiDataGrid-cell": { display: "flex", alignItems: "center" },
            "& .MuiDataGrid-cell:focus, & .MuiDataGrid-cell:focus-within, & .MuiDataGrid-columnHeader:focus": {
              outline: "none",
            },
          }}
        />
      </Paper>
      <Menu
        anchorEl={menu?.anchor}
        open={menu !== undefined}
        onClose={() => setMenu(undefined)}
        anchorOrigin={{ vertical: "bottom", horizontal: "right" }}
        transformOrigin={{ vertical: "top", horizontal: "right" }}
        slotProps={{ paper: { sx: { minWidth: 260 } } }}
      >
        {menu
          ? ROLES.map((r) => {
              const held = menu.user.global_roles.includes(r);
              const blocked = held && r === "balena_admin" && lastAdmin(menu.user);
              return (
                <MenuItem
                  key={r}
                  disabled={blocked}
                  onClick={() => ask({ user: menu.user, role: r, grant: !held })}
                  sx={held ? { color: "error.main" } : undefined}
                >
                  <ListItemText
                    primary={t(held ? `admin.users.menu.revoke_${r}` : `admin.users.menu.grant_${r}`)}
                    secondary={blocked ? t("admin.users.last_admin_hint") : undefined}
                    slotProps={{ secondary: { sx: { whiteSpace: "normal", maxWidth: 260 } } }}
                  />
                </MenuItem>
              );
            })
          : null}
      </Menu>
      {change ? (
        <ConfirmDialog
          open
          title={t(
            change.grant ? `admin.users.confirm.grant_${change.role}_title` : `admin.users.confirm.revoke_title`,
            { username: change.user.username, role: t(`admin.roles.${change.role}`) },
          )}
          text={
            <>
              {t(
                change.grant
                  ? `admin.users.confirm.grant_${change.role}_text`
                  : `admin.users.confirm.revoke_${change.role}_text`,
                {
                  username: change.user.username,
                },
              )}{" "}
              {t("admin.users.confirm.when")}
            </>
          }
          confirmLabel={t(change.grant ? "admin.users.confirm.grant_button" : "admin.users.confirm.revoke_button")}
          danger={!change.grant || change.role === "balena_admin"}
          busy={apply.isPending}
          error={apply.isError && !cancelled ? errorText(apply.error) : undefined}
          onConfirm={() => apply.mutate(change)}
          onClose={() => setChange(undefined)}
        >
          {!change.grant && change.user.id === me && change.role === "balena_admin" ? (
            <Alert severity="warning" sx={{ mb: 1 }}>
              {t("admin.users.confirm.revoke_own_admin")}
            </Alert>
          ) : null}
        </ConfirmDialog>
      ) : null}
    </Box>
  );
}
