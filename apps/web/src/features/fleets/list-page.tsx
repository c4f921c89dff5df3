import { DATE_FORMAT } from "@flotilla/domain";
import AddOutlined from "@mui/icons-material/AddOutlined";
import AppsOutlined from "@mui/icons-material/AppsOutlined";
import DevicesOtherOutlined from "@mui/icons-material/DevicesOtherOutlined";
import GridViewOutlined from "@mui/icons-material/GridViewOutlined";
import TableRowsOutlined from "@mui/icons-material/TableRowsOutlined";
import ViewInArOutlined from "@mui/icons-material/ViewInArOutlined";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import Paper from "@mui/material/Paper";
import ToggleButton from "@mui/material/ToggleButton";
import ToggleButtonGroup from "@mui/material/ToggleButtonGroup";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { format } from "date-fns";
import { Suspense, useState } from "react";
import { useTranslation } from "react-i18next";
import { TextLink } from "../../components/links.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { type SortedColumn, SortedTable } from "../../components/sorted-table.tsx";
import { lazyComponent } from "../../lib/lazy-component.ts";
import type { ApplicationClass } from "../orgs/access.ts";
import { useOrganization } from "../orgs/data.ts";
import { classPath, type ListedApplication, useApplicationList } from "./data.ts";
import { StatusBar, StatusCountsInline, statusBreakdown } from "./status.tsx";

/** The create dialog (and the name rules' zod it needs) loads when it is first opened. */
const CreateApplicationDialog = lazyComponent(() => import("./create-dialog.tsx"), "CreateApplicationDialog");

export type Lens = "table" | "grid";
const LENS_KEY = "flotilla.fleetListLens";

function readLens(): Lens {
  try {
    return localStorage.getItem(LENS_KEY) === "grid" ? "grid" : "table";
  } catch {
    return "table";
  }
}

/** The grid lens's cards are at least 370 px wide (spec 2 §2 "List pages"). */
export const CARD_MIN_WIDTH = 370;

const ICONS = {
  fleet: <DevicesOtherOutlined />,
  app: <AppsOutlined />,
  block: <ViewInArOutlined />,
} as const;

const online = (app: ListedApplication) => {
  const { rows } = statusBreakdown(app.device_count_grouped_by_status);
  return rows
    .filter((row) => row.status !== "disconnected" && row.status !== "inactive")
    .reduce((s, r) => s + r.count, 0);
};

function NameCell({ app }: { app: ListedApplication }) {
  return (
    <TextLink to={`${classPath(app.is_of__class)}/${app.id}` as "/"} underline="hover" sx={{ fontWeight: 600 }}>
      {app.app_name}
    </TextLink>
  );
}

function TableLens({ rows, label, showOrg }: { rows: ListedApplication[]; label: string; showOrg: boolean }) {
  const { t } = useTranslation();
  const columns: SortedColumn<ListedApplication>[] = [
    {
      key: "app_name",
      header: t("fleets.columns.name"),
      value: (row) => row.app_name,
      render: (row) => <NameCell app={row} />,
    },
    ...(showOrg
      ? [
          {
            key: "organization",
            header: t("fleets.columns.organization"),
            value: (row) => row.organization[0]?.name ?? "",
            render: (row) => row.organization[0]?.name ?? "",
          } satisfies SortedColumn<ListedApplication>,
        ]
      : []),
    {
      key: "device_type",
      header: t("fleets.columns.device_type"),
      value: (row) => row.is_for__device_type[0]?.name ?? "",
      render: (row) => row.is_for__device_type[0]?.name ?? "",
    },
    { key: "online", header: t("fleets.columns.online"), numeric: true, width: 90, value: online, render: online },
    {
      key: "total_devices",
      header: t("fleets.columns.devices"),
      numeric: true,
      width: 90,
      value: (row) => row.total_devices,
      render: (row) => row.total_devices,
    },
    {
      key: "status",
      header: t("fleets.columns.status"),
      width: 160,
      render: (row) => <StatusBar counts={row.device_count_grouped_by_status} />,
    },
    {
      key: "created_at",
      header: t("fleets.columns.created"),
      width: 190,
      nowrap: true,
      value: (row) => row.created_at,
      render: (row) => format(new Date(row.created_at), DATE_FORMAT),
    },
  ];
  return (
    <Paper variant="outlined" sx={{ overflow: "hidden" }}>
      <SortedTable label={label} rows={rows} columns={columns} />
    </Paper>
  );
}

function GridLens({ rows, label }: { rows: ListedApplication[]; label: string }) {
  const { t } = useTranslation();
  return (
    <Box
      role="list"
      aria-label={label}
      sx={{ display: "grid", gap: 2, gridTemplateColumns: `repeat(auto-fill, minmax(${CARD_MIN_WIDTH}px, 1fr))` }}
    >
      {rows.map((app) => (
        <Paper
          key={app.id}
          role="listitem"
          aria-label={app.app_name}
          variant="outlined"
          sx={{ p: 2, minWidth: CARD_MIN_WIDTH, display: "flex", flexDirection: "column", gap: 1.25 }}
        >
          <Box sx={{ display: "flex", alignItems: "baseline", gap: 1 }}>
            <Box sx={{ flex: 1, minWidth: 0, overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" }}>
              <NameCell app={app} />
            </Box>
            <Typography variant="body2" color="text.secondary" sx={{ fontVariantNumeric: "tabular-nums" }}>
              {t("fleets.devices_count", { count: app.total_devices })}
            </Typography>
          </Box>
          <Typography variant="caption" color="text.secondary" noWrap>
            {[app.organization[0]?.name, app.is_for__device_type[0]?.name].filter(Boolean).join(" · ")}
          </Typography>
          <StatusBar counts={app.device_count_grouped_by_status} height={8} />
          <StatusCountsInline counts={app.device_count_grouped_by_status} />
        </Paper>
      ))}
    </Box>
  );
}

/**
 * `/fleets`, `/apps`, `/blocks` and `/orgs/{orgId}/fleets|apps|blocks` (spec 2 §2): a table lens
 * (Data Grid) and a grid lens of cards, refreshed every 8 s; creating opens the create dialog.
 */
export function ApplicationListPage({ kind, orgId }: { kind: ApplicationClass; orgId?: number }) {
  const { t } = useTranslation();
  const list = useApplicationList(kind, orgId);
  const org = useOrganization(orgId ?? 0, orgId !== undefined);
  const [lens, setLens] = useState<Lens>(readLens);
  const [creating, setCreating] = useState(false);
  const rows = list.data ?? [];
  const label = t(`pages.${kind === "fleet" ? "fleets" : kind === "app" ? "apps" : "blocks"}.title`);
  const changeLens = (next: Lens | null) => {
    if (!next) return;
    setLens(next);
    try {
      localStorage.setItem(LENS_KEY, next);
    } catch {
      // Storage refused: the lens holds for this page only.
    }
  };
  const pageKey = kind === "fleet" ? "fleets" : kind === "app" ? "apps" : "blocks";
  return (
    <>
      <PageHeader
        title={label}
        description={
          orgId !== undefined && org.data
            ? t("orgs.scoped_to", { name: org.data.name })
            : t(`pages.${pageKey}.description`)
        }
        actions={
          <>
            {kind === "app" ? (
              <Chip
                label={t("nav.alpha")}
                size="small"
                color="primary"
                variant="outlined"
                sx={{ alignSelf: "center" }}
              />
            ) : null}
            <ToggleButtonGroup
              size="small"
              exclusive
              value={lens}
              onChange={(_event, next: Lens | null) => changeLens(next)}
              aria-label={t("fleets.lens")}
            >
              <ToggleButton value="table" aria-label={t("fleets.table_lens")}>
                <Tooltip title={t("fleets.table_lens")}>
                  <TableRowsOutlined fontSize="small" />
                </Tooltip>
              </ToggleButton>
              <ToggleButton value="grid" aria-label={t("fleets.grid_lens")}>
                <Tooltip title={t("fleets.grid_lens")}>
                  <GridViewOutlined fontSize="small" />
                </Tooltip>
              </ToggleButton>
            </ToggleButtonGroup>
            <Button variant="contained" startIcon={<AddOutlined />} onClick={() => setCreating(true)}>
              {t(`fleets.create.${kind}`)}
            </Button>
          </>
        }
      />
      {list.isSuccess && rows.length === 0 ? (
        <EmptyState
          icon={ICONS[kind]}
          title={t(`pages.${pageKey}.empty_title`)}
          text={t(`pages.${pageKey}.empty_text`)}
          action={
            <Button variant="outlined" startIcon={<AddOutlined />} onClick={() => setCreating(true)}>
              {t(`fleets.create.${kind}`)}
            </Button>
          }
        />
      ) : lens === "table" ? (
        <TableLens rows={rows} label={label} showOrg={orgId === undefined} />
      ) : (
        <GridLens rows={rows} label={label} />
      )}
      {creating ? (
        <Suspense fallback={null}>
          <CreateApplicationDialog
            kind={kind}
            {...(orgId !== undefined ? { orgId } : {})}
            onClose={() => setCreating(false)}
          />
        </Suspense>
      ) : null}
    </>
  );
}
