import { RELEASE_PAGE_SIZE } from "@flotilla/domain";
import AddOutlined from "@mui/icons-material/AddOutlined";
import NewReleasesOutlined from "@mui/icons-material/NewReleasesOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Paper from "@mui/material/Paper";
import { DataGrid, type GridColDef, type GridPaginationModel, type GridRowSelectionModel } from "@mui/x-data-grid";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { SearchField } from "../../components/form-fields.tsx";
import { TextLink } from "../../components/links.tsx";
import { ListToolbar } from "../../components/list-toolbar.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { formatDate, formatFullDate } from "../../lib/format.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { classPath } from "../fleets/data.ts";
import { usePageFleet } from "../fleets/summary-page.tsx";
import { AddReleaseDialog } from "./add-release-dialog.tsx";
import { type ReleaseBatchAction, ReleaseBatchDialog } from "./batch-dialogs.tsx";
import { type ReleaseListRow, useReleaseList } from "./data.ts";
import {
  buildDurationMs,
  formatDuration,
  RELEASE_SEARCH_MAX_LENGTH,
  ReleaseFilterError,
  releaseAbilities,
  releaseSearchProblem,
  versionText,
} from "./model.ts";
import { ReleaseFlags, ReleaseStatus } from "./release-status.tsx";

/**
 * `/{fleets|apps|blocks}/{id}/releases` (spec 2 §2 "Releases list", §7, §9): the fleet's
 * releases, 50 a page, newest first, polled every 6 s; a search over version and tags; rows
 * link to the release; add release; batch finalize, invalidate, validate and delete. Fleets
 * show devices running each release and the build duration, blocks and apps do not.
 */
export function FleetReleasesPage() {
  const { t } = useTranslation();
  const { fleet } = usePageFleet();
  const [searchInput, setSearchInput] = useState("");
  const [search, setSearch] = useState("");
  const [pagination, setPagination] = useState<GridPaginationModel>({ page: 0, pageSize: RELEASE_PAGE_SIZE });
  const [selection, setSelection] = useState<GridRowSelectionModel>({ type: "include", ids: new Set() });
  const [dialog, setDialog] = useState<ReleaseBatchAction>();
  const [adding, setAdding] = useState(false);
  // The search reaches the query 500 ms after typing stops, back on the first page.
  useEffect(() => {
    const timer = setTimeout(() => {
      setSearch(searchInput);
      setPagination((current) => (current.page === 0 ? current : { ...current, page: 0 }));
    }, 500);
    return () => clearTimeout(timer);
  }, [searchInput]);
  const isFleet = fleet?.is_of__class === "fleet";
  const releases = useReleaseList({ fleetId: fleet?.id ?? 0, page: pagination.page, search, withDevices: isFleet });
  if (!fleet) return null;
  const abilities = releaseAbilities(fleet.user_access_roles);
  const base = `${classPath(fleet.is_of__class)}/${fleet.id}`;
  const rows = releases.data?.rows ?? [];
  const selected = rows.filter((row) => selection.ids.has(row.id) === (selection.type === "include"));
  // Said at once, as the user types, not after the query has failed (spec 2 §5 "Release search").
  const searchProblem = releaseSearchProblem(searchInput);
  const filterFailed = searchProblem !== undefined || releases.error instanceof ReleaseFilterError;
  const columns: GridColDef<ReleaseListRow>[] = [
    {
      field: "status",
      headerName: t("releases.columns.status"),
      width: 120,
      sortable: false,
      renderCell: ({ row }) => <ReleaseStatus release={row} />,
    },
    {
      field: "raw_version",
      headerName: t("releases.columns.version"),
      flex: 1,
      minWidth: 210,
      sortable: false,
      renderCell: ({ row }) => (
        <Box sx={{ display: "flex", alignItems: "center", gap: 1, height: "100%", minWidth: 0 }}>
          <TextLink
            to={`${base}/releases/${row.id}` as "/"}
            underline="hover"
            sx={{ fontWeight: 600, overflow: "hidden", textOverflow: "ellipsis" }}
          >
            {versionText(row)}
          </TextLink>
          <ReleaseFlags release={row} />
        </Box>
      ),
    },
    {
      field: "commit",
      headerName: t("releases.columns.commit"),
      width: 100,
      sortable: false,
      renderCell: ({ row }) => (
        <Box component="span" sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13 }} title={row.commit}>
          {row.commit.slice(0, 7)}
        </Box>
      ),
    },
    {
      field: "created_at",
      headerName: t("releases.columns.created"),
      width: 185,
      sortable: false,
      renderCell: ({ row }) => <span title={formatFullDate(row.created_at)}>{formatDate(row.created_at)}</span>,
    },
    {
      field: "author",
      headerName: t("releases.columns.author"),
      flex: 0.7,
      minWidth: 120,
      sortable: false,
      valueGetter: (_value, row) => row.is_created_by__user[0]?.username ?? "—",
    },
    ...(isFleet
      ? ([
          {
            field: "devices",
            headerName: t("releases.columns.devices"),
            width: 90,
            align: "right",
            headerAlign: "right",
            sortable: false,
            valueGetter: (_value, row) => row.is_running_on__device ?? 0,
          },
          {
            field: "duration",
            headerName: t("releases.columns.duration"),
            width: 110,
            align: "right",
            headerAlign: "right",
            sortable: false,
            valueGetter: (_value, row) => {
              const ms = buildDurationMs(row);
              return ms === undefined ? "—" : formatDuration(ms);
            },
          },
        ] satisfies GridColDef<ReleaseListRow>[])
      : []),
  ];
  const actions: Array<{ key: ReleaseBatchAction; allowed: boolean; danger?: boolean; divider?: boolean }> = [
    { key: "finalize", allowed: abilities.update },
    { key: "invalidate", allowed: abilities.update },
    { key: "validate", allowed: abilities.update },
    { key: "delete", allowed: abilities.delete, danger: true, divider: true },
  ];
  const empty = releases.data?.total === 0 && !search;
  return (
    <>
      <PageHeader
        title={t("releases.title")}
        description={t(`releases.description.${fleet.is_of__class}`, { name: fleet.app_name })}
        actions={
          abilities.push ? (
            <Button variant="contained" startIcon={<AddOutlined />} onClick={() => setAdding(true)}>
              {t("releases.add.button")}
            </Button>
          ) : undefined
        }
      />
      {empty ? (
        <EmptyState
          icon={<NewReleasesOutlined />}
          title={t("releases.empty_title")}
          text={t("releases.empty_text")}
          action={
            abilities.push ? (
              <Button variant="contained" onClick={() => setAdding(true)}>
                {t("releases.add.button")}
              </Button>
            ) : undefined
          }
        />
      ) : (
        <>
          <ListToolbar
            search={<SearchField label={t("releases.search")} value={searchInput} onChange={setSearchInput} />}
            selectedText={selected.length > 0 ? t("releases.selected", { count: selected.length }) : undefined}
            actionsLabel={t("releases.batch.actions")}
            items={
              abilities.update || abilities.delete
                ? actions.map((item) => ({ ...item, label: t(`releases.batch.${item.key}`) }))
                : undefined
            }
            onAction={setDialog}
          />
          {filterFailed ? (
            <Alert severity="error" sx={{ mb: 1.5 }}>
              {t("errors.release_panel_create_filter")}{" "}
              {searchProblem
                ? t(`releases.search_problem.${searchProblem}`, {
                    count: searchInput.trim().length,
                    max: RELEASE_SEARCH_MAX_LENGTH,
                  })
                : null}
            </Alert>
          ) : null}
          <Paper variant="outlined" sx={{ overflow: "hidden" }}>
            <DataGrid
              aria-label={t("releases.title")}
              rows={filterFailed ? [] : rows}
              columns={columns}
              rowCount={filterFailed ? 0 : (releases.data?.total ?? 0)}
              loading={releases.isFetching && !releases.data}
              paginationMode="server"
              paginationModel={pagination}
              onPaginationModelChange={setPagination}
              pageSizeOptions={[RELEASE_PAGE_SIZE]}
              checkboxSelection={abilities.update || abilities.delete}
              keepNonExistentRowsSelected={false}
              rowSelectionModel={selection}
              onRowSelectionModelChange={setSelection}
              disableRowSelectionOnClick
              disableColumnMenu
              density="compact"
              autoHeight
              localeText={{ noRowsLabel: t("releases.no_match") }}
              sx={{
                border: 0,
                "& .MuiDataGrid-columnHeaderTitle": { fontWeight: 600, fontSize: 13 },
                "& .MuiDataGrid-cell": { display: "flex", alignItems: "center" },
                "& .MuiDataGrid-cell:focus, & .MuiDataGrid-columnHeader:focus": { outline: "none" },
              }}
            />
          </Paper>
        </>
      )}
      {adding ? <AddReleaseDialog fleet={fleet} onClose={() => setAdding(false)} /> : null}
      {dialog ? (
        <ReleaseBatchDialog
          action={dialog}
          fleetId={fleet.id}
          releases={selected}
          onClose={() => setDialog(undefined)}
          onDone={() => setSelection({ type: "include", ids: new Set() })}
        />
      ) : null}
    </>
  );
}
