import AddOutlined from "@mui/icons-material/AddOutlined";
import MapOutlined from "@mui/icons-material/MapOutlined";
import TableRowsOutlined from "@mui/icons-material/TableRowsOutlined";
import ViewColumnOutlined from "@mui/icons-material/ViewColumnOutlined";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Checkbox from "@mui/material/Checkbox";
import ListItemText from "@mui/material/ListItemText";
import Menu from "@mui/material/Menu";
import MenuItem from "@mui/material/MenuItem";
import Paper from "@mui/material/Paper";
import Skeleton from "@mui/material/Skeleton";
import ToggleButton from "@mui/material/ToggleButton";
import ToggleButtonGroup from "@mui/material/ToggleButtonGroup";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import {
  DataGrid,
  type GridColDef,
  type GridColumnVisibilityModel,
  type GridPaginationModel,
  type GridRowSelectionModel,
  type GridSortModel,
} from "@mui/x-data-grid";
import { useNavigate, useSearch } from "@tanstack/react-router";
import { formatDistanceToNowStrict } from "date-fns";
import { Suspense, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { SearchField } from "../../components/form-fields.tsx";
import { TextLink } from "../../components/links.tsx";
import { ListToolbar } from "../../components/list-toolbar.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { lazyComponent } from "../../lib/lazy-component.ts";
import { statusColor } from "../fleets/status.tsx";
import { useFreePlan, usePageFleet } from "../fleets/summary-page.tsx";
import { isDraft, versionText } from "../releases/model.ts";
import type { SupervisorAction } from "./actions.tsx";
import {
  commandAbilities,
  DEVICE_PAGE_SIZES,
  type Device,
  deviceAbilities,
  deviceCoordinates,
  updateAbilities,
  useFleetDevices,
} from "./data.ts";
import { isMatchingAction, type MatchingAction } from "./select-all.ts";
import { SelectAllBanner } from "./select-all-banner.tsx";
import { DeviceStatusChip } from "./status-chip.tsx";

type Lens = "table" | "map";
const COLUMNS_KEY = "flotilla.deviceColumns";

/** The map lens's Leaflet loads when the lens is chosen: the table is what a page opens with. */
const DeviceMap = lazyComponent(() => import("./device-map.tsx"), "DeviceMap");

/**
 * The add-device and batch dialogs load when one is first opened (with the actions, OS update and
 * command modules they need): the list is what the page opens with (issue performance-2).
 */
const actions = () => import("./actions.tsx");
const osUpdates = () => import("./os-updates.tsx");
const AddDeviceDialog = lazyComponent(() => import("./add-device-dialog.tsx"), "AddDeviceDialog");
const MatchingBatchDialog = lazyComponent(() => import("./select-all-dialog.tsx"), "MatchingBatchDialog");
const RunCommandDialog = lazyComponent(() => import("../commands/run-dialog.tsx"), "RunCommandDialog");
const SupervisorActionDialog = lazyComponent(actions, "SupervisorActionDialog");
const MoveDevicesDialog = lazyComponent(actions, "MoveDevicesDialog");
const PinDevicesDialog = lazyComponent(actions, "PinDevicesDialog");
const TagDevicesDialog = lazyComponent(actions, "TagDevicesDialog");
const DeviceVariableDialog = lazyComponent(actions, "DeviceVariableDialog");
const DeleteDevicesDialog = lazyComponent(actions, "DeleteDevicesDialog");
const OsUpdateDevicesDialog = lazyComponent(osUpdates, "OsUpdateDevicesDialog");
const SupervisorUpdateDevicesDialog = lazyComponent(osUpdates, "SupervisorUpdateDevicesDialog");

/** Columns a person may hide; name and status always show. */
const OPTIONAL_COLUMNS = [
  "uuid",
  "last_connectivity_event",
  "os_version",
  "supervisor_version",
  "release",
  "ip_address",
  "device_type",
  "tags",
] as const;
const HIDDEN_BY_DEFAULT: GridColumnVisibilityModel = { supervisor_version: false, tags: false };

function readColumns(): GridColumnVisibilityModel {
  try {
    const stored = JSON.parse(localStorage.getItem(COLUMNS_KEY) ?? "null") as unknown;
    return stored && typeof stored === "object" ? (stored as GridColumnVisibilityModel) : HIDDEN_BY_DEFAULT;
  } catch {
    return HIDDEN_BY_DEFAULT;
  }
}

type BatchDialog =
  | SupervisorAction
  | "run-command"
  | "move"
  | "pin"
  | "tag"
  | "set-variable"
  | "remove-variable"
  | "update-os"
  | "update-supervisor"
  | "delete";

/** `/fleets/{id}/devices` (spec 2 §2, §4, §7): the fleet's devices, paged on the server, as a table or on a map. */
export function FleetDevicesPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { fleet, abilities } = usePageFleet();
  const free = useFreePlan(fleet?.organization[0]?.id);
  const search = useSearch({ strict: false }) as { filter?: string };
  const [filterInput, setFilterInput] = useState(search.filter ?? "");
  const [lens, setLens] = useState<Lens>("table");
  const [pagination, setPagination] = useState<GridPaginationModel>({ page: 0, pageSize: 25 });
  const [sort, setSort] = useState<GridSortModel>([]);
  const [columns, setColumns] = useState<GridColumnVisibilityModel>(readColumns);
  const [selection, setSelection] = useState<GridRowSelectionModel>({ type: "include", ids: new Set() });
  // Gmail's "Select all N that match": the batch then runs over the filter, not the page's rows.
  const [allMatching, setAllMatching] = useState(false);
  const clearSelection = () => {
    setSelection({ type: "include", ids: new Set() });
    setAllMatching(false);
  };
  const [columnsMenu, setColumnsMenu] = useState<HTMLElement | null>(null);
  const [dialog, setDialog] = useState<BatchDialog>();
  const [matchingRun, setMatchingRun] = useState<{ action: MatchingAction; filter: string; total: number }>();
  const [adding, setAdding] = useState(false);
  // The filter reaches the address (and the query) 500 ms after typing stops.
  useEffect(() => {
    const timer = setTimeout(() => {
      if ((search.filter ?? "") === filterInput) return;
      void navigate({ to: ".", search: filterInput ? { filter: filterInput } : {}, replace: true });
      setPagination((current) => ({ ...current, page: 0 }));
      setAllMatching(false);
    }, 500);
    return () => clearTimeout(timer);
  }, [filterInput, search.filter, navigate]);
  const sortItem = sort[0];
  const devices = useFleetDevices({
    fleetId: fleet?.id ?? 0,
    page: pagination.page,
    pageSize: pagination.pageSize,
    sort: sortItem?.sort ? { field: sortItem.field, direction: sortItem.sort } : undefined,
    filter: search.filter ?? "",
  });
  if (!fleet) return null;
  const rows = devices.data?.rows ?? [];
  // "Select all" answers an exclude model: every row of the page except the ids listed.
  const selected = rows.filter((row) => selection.ids.has(row.id) === (selection.type === "include"));
  const total = devices.data?.total ?? 0;
  const pageSelected = rows.length > 0 && selected.length === rows.length;
  const matching = allMatching && pageSelected;
  // With all matching selected, the per-row dialogs stay closed: they would act on this page only.
  const pageDialog = matching ? undefined : dialog;
  const startAction = (key: BatchDialog) => {
    // The run keeps the filter and count it started with while the list refreshes under it.
    if (matching && isMatchingAction(key)) setMatchingRun({ action: key, filter: search.filter ?? "", total });
    else setDialog(key);
  };
  const can = deviceAbilities(fleet.user_access_roles);
  const updates = updateAbilities(fleet.user_access_roles);
  const commands = commandAbilities(can);
  const setColumn = (field: string, visible: boolean) => {
    const next = { ...columns, [field]: visible };
    setColumns(next);
    try {
      localStorage.setItem(COLUMNS_KEY, JSON.stringify(next));
    } catch {
      // Storage full or blocked: the choice lasts for this page only.
    }
  };
  const gridColumns: GridColDef<Device>[] = [
    {
      field: "device_name",
      headerName: t("devices.columns.name"),
      flex: 1.3,
      minWidth: 170,
      hideable: false,
      renderCell: ({ row }) => (
        <TextLink to="/devices/$uuid" params={{ uuid: row.uuid }} underline="hover" sx={{ fontWeight: 600 }}>
          {row.device_name}
        </TextLink>
      ),
    },
    {
      field: "overall_status",
      headerName: t("devices.columns.status"),
      minWidth: 170,
      flex: 1,
      hideable: false,
      renderCell: ({ row }) => <DeviceStatusChip device={row} />,
    },
    {
      field: "uuid",
      headerName: t("devices.columns.uuid"),
      width: 110,
      valueFormatter: (value: string) => value.slice(0, 7),
    },
    {
      field: "last_connectivity_event",
      headerName: t("devices.columns.last_connectivity_event"),
      minWidth: 130,
      flex: 0.8,
      valueFormatter: (value: string | null) =>
        value ? formatDistanceToNowStrict(new Date(value), { addSuffix: true }) : "—",
    },
    { field: "os_version", headerName: t("devices.columns.os_version"), minWidth: 140, flex: 0.8 },
    { field: "supervisor_version", headerName: t("devices.columns.supervisor_version"), minWidth: 120, flex: 0.6 },
    {
      field: "release",
      headerName: t("devices.columns.release"),
      minWidth: 120,
      sortable: false,
      valueGetter: (_value, row) => {
        const running = row.is_running__release[0];
        return running
          ? `${versionText(running)}${isDraft(running) ? ` (${t("releases.draft").toLowerCase()})` : ""}`
          : "—";
      },
    },
    { field: "ip_address", headerName: t("devices.columns.ip_address"), minWidth: 130, flex: 0.7 },
    {
      field: "device_type",
      headerName: t("devices.columns.device_type"),
      minWidth: 150,
      flex: 0.8,
      sortable: false,
      valueGetter: (_value, row) => row.is_of__device_type[0]?.name ?? "",
    },
    {
      field: "tags",
      headerName: t("devices.columns.tags"),
      minWidth: 160,
      flex: 1,
      sortable: false,
      valueGetter: (_value, row) => row.device_tag.map((tag) => `${tag.tag_key}: ${tag.value}`).join(", "),
    },
  ];
  const batchItems: Array<{ key: BatchDialog; allowed: boolean; danger?: boolean; divider?: boolean }> = [
    { key: "restart", allowed: can.supervisor },
    { key: "identify", allowed: can.supervisor },
    // Hidden, not disabled, without device.ssh(-host): the server would refuse every device.
    ...(commands.run ? [{ key: "run-command" as const, allowed: true }] : []),
    { key: "move", allowed: can.move, divider: true },
    { key: "pin", allowed: can.update },
    { key: "tag", allowed: can.tags },
    { key: "set-variable", allowed: can.variables },
    { key: "remove-variable", allowed: can.variables },
    { key: "update-os", allowed: updates.osUpdate, divider: true },
    { key: "update-supervisor", allowed: updates.supervisorUpdate },
    { key: "reboot", allowed: can.supervisor, danger: true, divider: true },
    { key: "shutdown", allowed: can.supervisor, danger: true },
    { key: "delete", allowed: can.delete, danger: true },
  ];
  const points = rows.flatMap((row) => {
    const position = deviceCoordinates(row);
    return position
      ? [
          {
            key: row.uuid,
            position,
            label: row.device_name,
            color: statusColor(row.overall_status),
            onClick: () => void navigate({ to: "/devices/$uuid", params: { uuid: row.uuid } }),
          },
        ]
      : [];
  });
  const blocked = free.block !== undefined;
  return (
    <>
      <PageHeader
        title={t("devices.title")}
        description={t("devices.description", { fleet: fleet.app_name })}
        actions={
          <Box sx={{ display: "flex", gap: 1.5, alignItems: "center" }}>
            <ToggleButtonGroup
              size="small"
              exclusive
              value={lens}
              onChange={(_event, next: Lens | null) => next && setLens(next)}
              aria-label={t("devices.lens")}
            >
              <ToggleButton value="table" aria-label={t("devices.table")}>
                <Tooltip title={t("devices.table")}>
                  <TableRowsOutlined fontSize="small" />
                </Tooltip>
              </ToggleButton>
              <ToggleButton value="map" aria-label={t("devices.map")}>
                <Tooltip title={t("devices.map")}>
                  <MapOutlined fontSize="small" />
                </Tooltip>
              </ToggleButton>
            </ToggleButtonGroup>
            {abilities.addDevice ? (
              <Tooltip
                title={
                  blocked
                    ? t(`fleets.free_plan.${free.block === "free plan allowance reached" ? "reached" : "exceeded"}`)
                    : ""
                }
              >
                <span>
                  <Button
                    variant="contained"
                    startIcon={<AddOutlined />}
                    disabled={blocked}
                    onClick={() => setAdding(true)}
                  >
                    {t("devices.add.button")}
                  </Button>
                </span>
              </Tooltip>
            ) : null}
          </Box>
        }
      />
      <ListToolbar
        search={<SearchField label={t("devices.filter")} value={filterInput} onChange={setFilterInput} />}
        selectedText={
          selected.length > 0 ? t("devices.selected", { count: matching ? total : selected.length }) : undefined
        }
        actionsLabel={t("devices.batch.actions")}
        // Over all matching devices only the data API writes by id are offered (select-all.ts).
        items={batchItems
          .filter((item) => !matching || isMatchingAction(item.key))
          .map((item) => ({ ...item, label: t(`devices.batch.${item.key}`) }))}
        onAction={startAction}
      >
        {lens === "table" ? (
          <Button
            variant="text"
            startIcon={<ViewColumnOutlined />}
            onClick={(event) => setColumnsMenu(event.currentTarget)}
          >
            {t("devices.columns.choose")}
          </Button>
        ) : null}
      </ListToolbar>
      <Menu anchorEl={columnsMenu} open={columnsMenu !== null} onClose={() => setColumnsMenu(null)}>
        {OPTIONAL_COLUMNS.map((field) => (
          <MenuItem key={field} dense onClick={() => setColumn(field, columns[field] === false)}>
            <Checkbox size="small" checked={columns[field] !== false} sx={{ p: 0.5, mr: 1 }} />
            <ListItemText primary={t(`devices.columns.${field}`)} />
          </MenuItem>
        ))}
      </Menu>
      {lens === "map" ? (
        <>
          <Suspense fallback={<Skeleton variant="rounded" height={480} />}>
            <DeviceMap points={points} label={t("devices.map")} />
          </Suspense>
          <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
            {t("devices.on_map", { count: points.length, total: rows.length })}
          </Typography>
        </>
      ) : devices.data && devices.data.total === 0 && !search.filter ? (
        <EmptyState
          icon={<AddOutlined />}
          title={t("devices.empty_title")}
          text={t("devices.empty_text")}
          action={
            abilities.addDevice && !blocked ? (
              <Button variant="contained" onClick={() => setAdding(true)}>
                {t("devices.add.button")}
              </Button>
            ) : undefined
          }
        />
      ) : (
        <Paper variant="outlined" sx={{ overflow: "hidden" }}>
          {pageSelected && total > rows.length ? (
            <SelectAllBanner
              pageCount={rows.length}
              total={total}
              all={matching}
              onSelectAll={() => setAllMatching(true)}
              onClear={clearSelection}
            />
          ) : null}
          <DataGrid
            aria-label={t("devices.title")}
            rows={rows}
            columns={gridColumns}
            rowCount={devices.data?.total ?? 0}
            loading={devices.isFetching && !devices.data}
            paginationMode="server"
            sortingMode="server"
            filterMode="server"
            paginationModel={pagination}
            onPaginationModelChange={setPagination}
            pageSizeOptions={[...DEVICE_PAGE_SIZES]}
            sortModel={sort}
            onSortModelChange={setSort}
            columnVisibilityModel={columns}
            onColumnVisibilityModelChange={setColumns}
            checkboxSelection
            keepNonExistentRowsSelected={false}
            rowSelectionModel={selection}
            onRowSelectionModelChange={(next) => {
              setSelection(next);
              setAllMatching(false);
            }}
            disableRowSelectionOnClick
            disableColumnMenu
            density="compact"
            autoHeight
            localeText={{
              noRowsLabel: t("devices.no_match"),
              // With all matching devices selected the footer counts them all, not this page's rows.
              footerRowSelected: (count) => t("devices.rows_selected", { count: matching ? total : count }),
            }}
            sx={{
              border: 0,
              "& .MuiDataGrid-columnHeaderTitle": { fontWeight: 600, fontSize: 13 },
              "& .MuiDataGrid-cell:focus, & .MuiDataGrid-columnHeader:focus": { outline: "none" },
            }}
          />
        </Paper>
      )}
      <Suspense fallback={null}>
        {adding ? <AddDeviceDialog fleet={fleet} onClose={() => setAdding(false)} /> : null}
        {matchingRun ? (
          <MatchingBatchDialog
            {...matchingRun}
            fleetId={fleet.id}
            architecture={fleet.is_for__device_type[0]?.is_of__cpu_architecture[0]?.id}
            onClose={() => setMatchingRun(undefined)}
            onRemoved={clearSelection}
          />
        ) : null}
        {pageDialog === "restart" ||
        pageDialog === "identify" ||
        pageDialog === "reboot" ||
        pageDialog === "shutdown" ? (
          <SupervisorActionDialog action={pageDialog} devices={selected} onClose={() => setDialog(undefined)} />
        ) : null}
        {pageDialog === "run-command" ? (
          <RunCommandDialog fleetId={fleet.id} devices={selected} can={commands} onClose={() => setDialog(undefined)} />
        ) : null}
        {pageDialog === "move" ? <MoveDevicesDialog devices={selected} onClose={() => setDialog(undefined)} /> : null}
        {pageDialog === "pin" ? (
          <PinDevicesDialog fleetId={fleet.id} devices={selected} onClose={() => setDialog(undefined)} />
        ) : null}
        {pageDialog === "tag" ? <TagDevicesDialog devices={selected} onClose={() => setDialog(undefined)} /> : null}
        {pageDialog === "set-variable" || pageDialog === "remove-variable" ? (
          <DeviceVariableDialog
            mode={pageDialog === "set-variable" ? "set" : "remove"}
            devices={selected}
            onClose={() => setDialog(undefined)}
          />
        ) : null}
        {pageDialog === "update-os" ? (
          <OsUpdateDevicesDialog devices={selected} onClose={() => setDialog(undefined)} />
        ) : null}
        {pageDialog === "update-supervisor" ? (
          <SupervisorUpdateDevicesDialog devices={selected} onClose={() => setDialog(undefined)} />
        ) : null}
        {pageDialog === "delete" ? (
          <DeleteDevicesDialog
            devices={selected}
            onClose={() => setDialog(undefined)}
            onDeleted={() => setSelection({ type: "include", ids: new Set() })}
          />
        ) : null}
      </Suspense>
    </>
  );
}
