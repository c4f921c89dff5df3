import FileDownloadOutlined from "@mui/icons-material/FileDownloadOutlined";
import HistoryOutlined from "@mui/icons-material/HistoryOutlined";
import KeyOutlined from "@mui/icons-material/KeyOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import ListSubheader from "@mui/material/ListSubheader";
import MenuItem from "@mui/material/MenuItem";
import Paper from "@mui/material/Paper";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableContainer from "@mui/material/TableContainer";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { keepPreviousData, useInfiniteQuery, useMutation } from "@tanstack/react-query";
import { type ReactNode, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { formatDate, formatFullDate } from "../../lib/format.ts";
import { saveBlob } from "../../lib/save-blob.ts";
import { useAllMemberships } from "../orgs/data.ts";
import { useNumericParam } from "../orgs/ui.tsx";
import { auditApi, auditKeys } from "./api.ts";
import {
  AUDIT_ACTIONS,
  AUDIT_TARGET_TYPES,
  type AuditEntry,
  type AuditFilterForm,
  actionParts,
  actorOf,
  auditQuery,
  csvFileName,
  detailItems,
  EMPTY_AUDIT_FILTER,
  filterProblem,
  sentence,
} from "./model.ts";

const PAGE_SIZE = 50;
/** Typing in a text filter asks the server once the typing pauses. */
const TYPING_PAUSE_MS = 350;

function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** The catalogue's names of categories, verbs and target types; snake_case in words otherwise. */
function useAuditLabels() {
  const { t } = useTranslation();
  const category = (name: string) =>
    t(`audit.categories.${name}` as "audit.categories.variable", { defaultValue: sentence(name) });
  const verb = (name: string) =>
    t(`audit.verbs.${name}` as "audit.verbs.created", { defaultValue: name.replaceAll("_", " ") });
  const action = (code: string) => {
    const parts = actionParts(code);
    return parts.verb === undefined
      ? category(parts.category)
      : t("audit.action_label", { category: category(parts.category), verb: verb(parts.verb) });
  };
  const targetType = (name: string) =>
    t(`audit.target_types.${name}` as "audit.target_types.fleet", { defaultValue: sentence(name) });
  const everyIn = (name: string) => t("audit.every_in_category", { category: category(name) });
  return { category, action, targetType, everyIn };
}

/** `/orgs/{orgId}/audit`: the organization's audit log for its administrators (the route checks). */
export function AuditLogPage() {
  return <AuditLog orgId={useNumericParam("orgId")} />;
}

/** `/audit`: every organization's audit log, for platform administrators (the route checks). */
export function PlatformAuditLogPage() {
  return <AuditLog orgId={undefined} />;
}

/** The log of one organization, or of all (`orgId` undefined: no actor list, an Organization column). */
function AuditLog({ orgId }: { orgId: number | undefined }) {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const platform = orgId === undefined;
  const api = auditApi(sdk, config.apiUrl);
  const labels = useAuditLabels();
  const members = useAllMemberships(orgId ?? 0, !platform);
  const [form, setForm] = useState<AuditFilterForm>(EMPTY_AUDIT_FILTER);
  const settled = useSettled(form, TYPING_PAUSE_MS);
  const problem = filterProblem(settled);
  const query = auditQuery(settled);
  query.set("limit", String(PAGE_SIZE));
  const queryText = query.toString();

  const entries = useInfiniteQuery({
    queryKey: auditKeys.list(orgId, queryText),
    queryFn: ({ pageParam }) => {
      const paged = new URLSearchParams(queryText);
      if (pageParam !== null) paged.set("before", String(pageParam));
      return api.list(orgId, paged);
    },
    initialPageParam: null as number | null,
    getNextPageParam: (last) => last.next ?? undefined,
    enabled: problem === undefined,
    placeholderData: keepPreviousData,
  });

  const exportCsv = useMutation({
    mutationFn: async () => {
      const blob = await api.csv(orgId, auditQuery(settled));
      saveBlob(blob, csvFileName(orgId, new Date()));
    },
  });

  const set = (field: keyof AuditFilterForm) => (value: string) =>
    setForm((current) => ({ ...current, [field]: value }));
  const filtered = Object.values(form).some((value) => value.trim() !== "");
  const rows = entries.data?.pages.flatMap((page) => page.entries) ?? [];

  return (
    <>
      <PageHeader
        title={platform ? t("audit.platform_title") : t("audit.title")}
        description={platform ? t("audit.platform_description") : t("audit.description")}
        actions={
          <>
            {filtered ? <Button onClick={() => setForm(EMPTY_AUDIT_FILTER)}>{t("audit.clear_filters")}</Button> : null}
            <Button
              variant="outlined"
              startIcon={<FileDownloadOutlined />}
              onClick={() => exportCsv.mutate()}
              disabled={exportCsv.isPending || problem !== undefined}
            >
              {exportCsv.isPending ? t("audit.exporting") : t("audit.export_csv")}
            </Button>
          </>
        }
      />
      <Paper variant="outlined" component="section" aria-label={t("audit.filters")} sx={{ p: 2, mb: 2 }}>
        <Box
          sx={{
            display: "grid",
            gap: 1.5,
            // Dates need the most room: their inputs show the whole format.
            gridTemplateColumns: { xs: "1fr", sm: "repeat(2, 1fr)", lg: "1fr 1.3fr 1fr 0.8fr 1.5fr 1.5fr" },
            alignItems: "start",
          }}
        >
          <TextField
            select={!platform}
            size="small"
            label={platform ? t("audit.actor_id") : t("audit.actor")}
            placeholder={platform ? t("audit.target_id_placeholder") : undefined}
            value={form.actor}
            onChange={(event) => set("actor")(event.target.value)}
            slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
          >
            {platform ? null : <MenuItem value="">{t("audit.anyone")}</MenuItem>}
            {(platform ? [] : (members.data ?? [])).map((row) => {
              const user = row.user[0];
              return user ? (
                <MenuItem key={user.id} value={String(user.id)}>
                  {user.username}
                </MenuItem>
              ) : null;
            })}
          </TextField>
          <TextField
            select
            size="small"
            label={t("audit.action")}
            value={form.action}
            onChange={(event) => set("action")(event.target.value)}
            slotProps={{
              select: { displayEmpty: true, MenuProps: { slotProps: { paper: { sx: { maxHeight: 420 } } } } },
              inputLabel: { shrink: true },
            }}
          >
            <MenuItem value="">{t("audit.every_action")}</MenuItem>
            {Object.entries(AUDIT_ACTIONS).flatMap(([category, verbs]) => actionOptions(category, verbs, labels))}
          </TextField>
          <TextField
            select
            size="small"
            label={t("audit.target_type")}
            value={form.targetType}
            onChange={(event) => set("targetType")(event.target.value)}
            slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
          >
            <MenuItem value="">{t("audit.any_target")}</MenuItem>
            {AUDIT_TARGET_TYPES.map((type) => (
              <MenuItem key={type} value={type}>
                {labels.targetType(type)}
              </MenuItem>
            ))}
          </TextField>
          <TextField
            size="small"
            label={t("audit.target_id")}
            value={form.targetId}
            onChange={(event) => set("targetId")(event.target.value)}
            slotProps={{ inputLabel: { shrink: true } }}
            placeholder={t("audit.target_id_placeholder")}
          />
          <TextField
            size="small"
            type="datetime-local"
            label={t("audit.from")}
            value={form.from}
            onChange={(event) => set("from")(event.target.value)}
            slotProps={{ inputLabel: { shrink: true } }}
          />
          <TextField
            size="small"
            type="datetime-local"
            label={t("audit.to")}
            value={form.to}
            onChange={(event) => set("to")(event.target.value)}
            error={problem === "range"}
            helperText={problem === "range" ? t("audit.range_problem") : undefined}
            slotProps={{ inputLabel: { shrink: true } }}
          />
        </Box>
      </Paper>
      {entries.isPending && problem === undefined ? (
        <Typography variant="body2" color="text.secondary" role="status" sx={{ py: 4, textAlign: "center" }}>
          {t("audit.loading")}
        </Typography>
      ) : rows.length === 0 ? (
        <EmptyState
          icon={<HistoryOutlined />}
          title={filtered ? t("audit.empty_filtered_title") : t("audit.empty_title")}
          text={filtered ? t("audit.empty_filtered_text") : t("audit.empty_text")}
          action={
            filtered ? (
              <Button variant="outlined" onClick={() => setForm(EMPTY_AUDIT_FILTER)}>
                {t("audit.clear_filters")}
              </Button>
            ) : undefined
          }
        />
      ) : (
        <>
          {entries.isError ? (
            <Alert severity="warning" sx={{ mb: 2 }}>
              {t("audit.refresh_failed")}
            </Alert>
          ) : null}
          <TableContainer component={Paper} variant="outlined">
            <Table size="small" aria-label={t("audit.entries")} sx={{ "& th": { whiteSpace: "nowrap" } }}>
              <TableHead>
                <TableRow>
                  <TableCell sx={{ width: 190 }}>{t("audit.time")}</TableCell>
                  {platform ? <TableCell>{t("audit.organization")}</TableCell> : null}
                  <TableCell sx={{ width: 150 }}>{t("audit.actor")}</TableCell>
                  <TableCell>{t("audit.action")}</TableCell>
                  <TableCell>{t("audit.target")}</TableCell>
                  <TableCell sx={{ width: 130 }}>{t("audit.client_address")}</TableCell>
                  <TableCell sx={{ width: "32%" }}>{t("audit.details")}</TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {rows.map((entry) => (
                  <EntryRow key={entry.id} entry={entry} labels={labels} platform={platform} />
                ))}
              </TableBody>
            </Table>
          </TableContainer>
          <Box sx={{ display: "flex", justifyContent: "center", alignItems: "center", gap: 2, mt: 2 }}>
            <Typography variant="body2" color="text.secondary">
              {t("audit.shown", { count: rows.length })}
            </Typography>
            {entries.hasNextPage ? (
              <Button variant="outlined" onClick={() => entries.fetchNextPage()} disabled={entries.isFetchingNextPage}>
                {entries.isFetchingNextPage ? t("audit.loading") : t("audit.load_more")}
              </Button>
            ) : null}
          </Box>
        </>
      )}
    </>
  );
}

function actionOptions(
  category: string,
  verbs: readonly string[],
  labels: ReturnType<typeof useAuditLabels>,
): ReactNode[] {
  if (verbs.length === 0) {
    return [
      <MenuItem key={category} value={category}>
        {labels.category(category)}
      </MenuItem>,
    ];
  }
  return [
    <ListSubheader key={`${category}-header`} sx={{ lineHeight: "32px" }}>
      {labels.category(category)}
    </ListSubheader>,
    <MenuItem key={`${category}.`} value={`${category}.`} sx={{ pl: 3 }}>
      {labels.everyIn(category)}
    </MenuItem>,
    ...verbs.map((verb) => (
      <MenuItem key={`${category}.${verb}`} value={`${category}.${verb}`} sx={{ pl: 3 }}>
        {labels.action(`${category}.${verb}`)}
      </MenuItem>
    )),
  ];
}

function EntryRow({
  entry,
  labels,
  platform,
}: {
  entry: AuditEntry;
  labels: ReturnType<typeof useAuditLabels>;
  platform: boolean;
}) {
  const { t } = useTranslation();
  const actor = actorOf(entry.actor);
  const details = detailItems(entry.details);
  return (
    <TableRow hover sx={{ verticalAlign: "top" }}>
      <TableCell sx={{ whiteSpace: "nowrap" }}>
        <Tooltip title={formatFullDate(entry.time)}>
          <span>{formatDate(entry.time)}</span>
        </Tooltip>
      </TableCell>
      {platform ? <TableCell>{entry.organization === null ? "–" : `#${entry.organization}`}</TableCell> : null}
      <TableCell>
        <Typography variant="body2" sx={{ fontWeight: 500 }}>
          {actor.name ?? t("audit.system")}
        </Typography>
        {actor.key ? (
          <Box sx={{ display: "flex", alignItems: "center", gap: 0.5, color: "text.secondary" }}>
            <KeyOutlined sx={{ fontSize: 14 }} aria-hidden />
            <Typography variant="caption">{t("audit.via_key", { key: actor.key })}</Typography>
          </Box>
        ) : null}
      </TableCell>
      <TableCell>
        <Typography variant="body2">{labels.action(entry.action)}</Typography>
        <Typography variant="caption" color="text.secondary" sx={{ fontFamily: "monospace" }}>
          {entry.action}
        </Typography>
      </TableCell>
      <TableCell>
        {entry.target.type ? (
          <Typography variant="body2" sx={{ whiteSpace: "nowrap" }}>
            {labels.targetType(entry.target.type)}
            {entry.target.id ? (
              <Box component="span" sx={{ color: "text.secondary" }}>
                {" "}
                #{entry.target.id}
              </Box>
            ) : null}
          </Typography>
        ) : (
          <Typography variant="body2" color="text.secondary">
            –
          </Typography>
        )}
      </TableCell>
      <TableCell sx={{ fontFamily: "monospace", fontSize: 13, whiteSpace: "nowrap" }}>
        {entry.client_address ?? "–"}
      </TableCell>
      <TableCell>
        {details.length === 0 ? (
          <Typography variant="body2" color="text.secondary">
            –
          </Typography>
        ) : (
          <Box component="dl" sx={{ m: 0, display: "grid", gap: 0.25 }}>
            {details.map((item) => (
              <Box key={`${item.label}:${item.value}`} sx={{ display: "flex", gap: 0.75, minWidth: 0 }}>
                {item.label ? (
                  <Typography component="dt" variant="body2" color="text.secondary" sx={{ flexShrink: 0 }}>
                    {item.label}
                  </Typography>
                ) : null}
                <Typography component="dd" variant="body2" sx={{ m: 0, wordBreak: "break-word", fontWeight: 500 }}>
                  {item.value}
                </Typography>
              </Box>
            ))}
          </Box>
        )}
      </TableCell>
    </TableRow>
  );
}
