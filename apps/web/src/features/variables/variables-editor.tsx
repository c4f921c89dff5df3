import AddOutlined from "@mui/icons-material/AddOutlined";
import DeleteOutlined from "@mui/icons-material/DeleteOutlined";
import EditOutlined from "@mui/icons-material/EditOutlined";
import UndoOutlined from "@mui/icons-material/UndoOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import IconButton from "@mui/material/IconButton";
import Link from "@mui/material/Link";
import Paper from "@mui/material/Paper";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useBlocker } from "@tanstack/react-router";
import { type ReactNode, Suspense, useState } from "react";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { errorText } from "../../lib/errors.ts";
import { lazyComponent } from "../../lib/lazy-component.ts";
import { showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import {
  ALL_SERVICES_ID,
  applyChanges,
  newKey,
  type ShownRow,
  type StagedChange,
  type StoredVariable,
  shownRows,
  stage,
  takenNames,
  undo,
  type VariableWriter,
} from "./staged.ts";

export { ALL_SERVICES_ID };

/** A value the device would otherwise get from its fleet (device pages). */
export interface InheritedVariable {
  name: string;
  value: string;
  serviceId: number;
}

export interface ValueField {
  /** A form control for a known variable (schema-driven), or undefined for a plain text field. */
  render?: (value: string, onChange: (value: string) => void) => ReactNode;
  problem?: (value: string) => string | undefined;
}

export interface VariablesEditorProps {
  label: string;
  stored: StoredVariable[];
  inherited?: InheritedVariable[];
  services?: Array<{ id: number; name: string }>;
  writer: VariableWriter;
  concurrency: number;
  canEdit: boolean;
  nameProblem: (name: string, taken: string[]) => string | undefined;
  /** A hint about a name that is not an error of its own (a reserved namespace, spec 2 §5). */
  nameNotice?: (name: string) => string | undefined;
  /** Known names offered while typing a new one (the configuration schema). */
  suggestions?: string[];
  valueField?: (name: string) => ValueField;
  /** Extra cells per row (e.g. device overrides of a fleet variable). */
  extraColumn?: { title: string; cell: (row: ShownRow) => ReactNode };
  onApplied: () => Promise<unknown>;
  emptyText: string;
}

export type Editing =
  | { mode: "add" }
  | { mode: "edit"; row: ShownRow }
  | { mode: "override"; inherited: InheritedVariable };

/** The add/edit dialog (and MUI's Autocomplete with it) loads when it is first opened. */
const VariableDialog = lazyComponent(() => import("./variable-dialog.tsx"), "VariableDialog");

const STATE_COLORS = { added: "success", updated: "info", deleted: "error" } as const;

const valueCell = (value: string) =>
  value.startsWith("data:") ? `${value.slice(0, 32)}… (${Math.round(value.length / 1024)} KB)` : value;

/**
 * A staged editor of variables (spec 2 §4 "Staged variable edits"): add, edit and delete stage a
 * change on the row; undo one, revert all (confirmed) or apply all together; leaving with
 * unsaved changes asks first.
 */
export function VariablesEditor(props: VariablesEditorProps) {
  const { t } = useTranslation();
  const [changes, setChanges] = useState<StagedChange[]>([]);
  const [editing, setEditing] = useState<Editing>();
  const [reverting, setReverting] = useState(false);
  const [applying, setApplying] = useState(false);
  const [failures, setFailures] = useState<string[]>([]);
  const services = props.services ?? [];
  const rows = shownRows(props.stored, changes);
  const ownNames = new Set(rows.filter((row) => row.state !== "deleted").map((row) => `${row.serviceId}:${row.name}`));
  // Inherited values the device has not overridden (device pages).
  const inherited = (props.inherited ?? []).filter((row) => !ownNames.has(`${row.serviceId}:${row.name}`));
  const overridden = new Set((props.inherited ?? []).map((row) => `${row.serviceId}:${row.name}`));
  const dirty = changes.length > 0;
  useBlocker({
    shouldBlockFn: () => !window.confirm(t("variables.leave_warning")),
    enableBeforeUnload: () => dirty,
    disabled: !dirty,
  });
  const serviceName = (id: number) =>
    id === ALL_SERVICES_ID ? t("variables.all_services") : (services.find((s) => s.id === id)?.name ?? String(id));
  const save = (name: string, value: string, serviceId: number) => {
    if (editing?.mode === "edit") setChanges(stage(changes, { kind: "update", key: editing.row.key, value }));
    else setChanges(stage(changes, { kind: "add", key: newKey(), name, value, serviceId }));
    setEditing(undefined);
  };
  const apply = async () => {
    setApplying(true);
    try {
      const result = await applyChanges(props.stored, changes, props.writer, props.concurrency);
      await props.onApplied();
      const failedKeys = new Set(result.failed.map((failure) => failure.change.key));
      setChanges(changes.filter((change) => failedKeys.has(change.key)));
      setFailures(result.failed.map((failure) => errorText(failure.error)));
      if (result.failed.length === 0) showToast("success", t("variables.all_successful"));
      else showToast("error", t("variables.some_failed", { count: result.failed.length }));
    } finally {
      setApplying(false);
    }
  };
  const hasServices = services.length > 0 || rows.some((row) => row.serviceId !== ALL_SERVICES_ID);
  return (
    <Paper variant="outlined" component="section" aria-label={props.label}>
      <Box sx={{ display: "flex", alignItems: "center", gap: 1, px: 2, py: 1.5, flexWrap: "wrap" }}>
        <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, flex: 1 }}>
          {props.label}
        </Typography>
        {dirty ? (
          <Typography variant="body2" color="text.secondary" role="status">
            {t("variables.pending", { count: changes.length })}
          </Typography>
        ) : null}
        {props.canEdit ? (
          <>
            <Button size="small" disabled={!dirty || applying} onClick={() => setReverting(true)}>
              {t("variables.revert_all")}
            </Button>
            <Button size="small" variant="contained" disabled={!dirty} loading={applying} onClick={() => void apply()}>
              {dirty ? t("variables.apply", { count: changes.length }) : t("variables.apply_none")}
            </Button>
            <Button
              size="small"
              variant="outlined"
              startIcon={<AddOutlined />}
              onClick={() => setEditing({ mode: "add" })}
            >
              {t("variables.add")}
            </Button>
          </>
        ) : null}
      </Box>
      {failures.length > 0 ? (
        <Alert severity="error" sx={{ mx: 2, mb: 1.5 }} onClose={() => setFailures([])}>
          {t("variables.some_failed", { count: failures.length })} {failures.slice(0, 3).join(" · ")}
        </Alert>
      ) : null}
      <Table size="small" aria-label={props.label}>
        <TableHead>
          <TableRow>
            <TableCell sx={{ pl: 2 }}>{t("variables.name")}</TableCell>
            {hasServices ? <TableCell>{t("variables.service")}</TableCell> : null}
            <TableCell>{t("variables.value")}</TableCell>
            {props.extraColumn ? <TableCell>{props.extraColumn.title}</TableCell> : null}
            <TableCell align="right" sx={{ pr: 2, width: 150 }} />
          </TableRow>
        </TableHead>
        <TableBody>
          {rows.length === 0 && inherited.length === 0 ? (
            <TableRow>
              <TableCell colSpan={5} sx={{ pl: 2, color: "text.secondary" }}>
                {props.emptyText}
              </TableCell>
            </TableRow>
          ) : null}
          {rows.map((row) => {
            const deleted = row.state === "deleted";
            return (
              <TableRow key={row.key} data-state={row.state} aria-label={row.name}>
                <TableCell sx={{ pl: 2, fontFamily: MONO_FONT_STACK, fontSize: 13 }}>
                  <Box
                    component="span"
                    sx={deleted ? { textDecoration: "line-through", color: "text.disabled" } : undefined}
                  >
                    {row.name}
                  </Box>
                  {row.state !== "stored" ? (
                    <Chip
                      size="small"
                      variant="outlined"
                      color={STATE_COLORS[row.state]}
                      label={t(`variables.state.${row.state}`)}
                      sx={{ ml: 1, height: 20, fontFamily: "inherit" }}
                    />
                  ) : null}
                  {overridden.has(`${row.serviceId}:${row.name}`) ? (
                    <Chip size="small" label={t("variables.overrides_fleet")} sx={{ ml: 1, height: 20 }} />
                  ) : null}
                </TableCell>
                {hasServices ? <TableCell>{serviceName(row.serviceId)}</TableCell> : null}
                <TableCell
                  sx={{
                    fontFamily: MONO_FONT_STACK,
                    fontSize: 13,
                    wordBreak: "break-all",
                    ...(deleted ? { textDecoration: "line-through", color: "text.disabled" } : {}),
                  }}
                >
                  {valueCell(row.value)}
                  {row.state === "updated" && row.before !== undefined ? (
                    <Typography variant="caption" color="text.secondary" sx={{ display: "block" }}>
                      {t("variables.was", { value: valueCell(row.before) })}
                    </Typography>
                  ) : null}
                </TableCell>
                {props.extraColumn ? <TableCell>{props.extraColumn.cell(row)}</TableCell> : null}
                <TableCell align="right" sx={{ pr: 2, whiteSpace: "nowrap" }}>
                  {props.canEdit ? (
                    <>
                      {row.state !== "stored" ? (
                        <Tooltip title={t("variables.undo")}>
                          <IconButton
                            size="small"
                            aria-label={t("variables.undo_named", { name: row.name })}
                            onClick={() => setChanges(undo(changes, row.key))}
                          >
                            <UndoOutlined fontSize="small" />
                          </IconButton>
                        </Tooltip>
                      ) : null}
                      <Tooltip title={t("variables.edit")}>
                        <span>
                          <IconButton
                            size="small"
                            disabled={deleted}
                            aria-label={t("variables.edit_named", { name: row.name })}
                            onClick={() => setEditing({ mode: "edit", row })}
                          >
                            <EditOutlined fontSize="small" />
                          </IconButton>
                        </span>
                      </Tooltip>
                      {/* Rows staged as added have no delete; rows staged as deleted have it disabled. */}
                      {row.state === "added" ? (
                        <Box component="span" sx={{ display: "inline-block", width: 34 }} />
                      ) : (
                        <Tooltip title={t("variables.delete")}>
                          <span>
                            <IconButton
                              size="small"
                              color="error"
                              disabled={deleted}
                              aria-label={t("variables.delete_named", { name: row.name })}
                              onClick={() => setChanges(stage(changes, { kind: "delete", key: row.key }))}
                            >
                              <DeleteOutlined fontSize="small" />
                            </IconButton>
                          </span>
                        </Tooltip>
                      )}
                    </>
                  ) : null}
                </TableCell>
              </TableRow>
            );
          })}
          {inherited.map((row) => (
            <TableRow key={`inherited:${row.serviceId}:${row.name}`} aria-label={row.name} data-state="inherited">
              <TableCell sx={{ pl: 2, fontFamily: MONO_FONT_STACK, fontSize: 13, color: "text.secondary" }}>
                {row.name}
                <Chip size="small" variant="outlined" label={t("variables.from_fleet")} sx={{ ml: 1, height: 20 }} />
              </TableCell>
              {hasServices ? (
                <TableCell sx={{ color: "text.secondary" }}>{serviceName(row.serviceId)}</TableCell>
              ) : null}
              <TableCell
                sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13, color: "text.secondary", wordBreak: "break-all" }}
              >
                {valueCell(row.value)}
              </TableCell>
              {props.extraColumn ? <TableCell /> : null}
              <TableCell align="right" sx={{ pr: 2 }}>
                {props.canEdit ? (
                  <Link
                    component="button"
                    type="button"
                    variant="body2"
                    aria-label={t("variables.override_named", { name: row.name })}
                    onClick={() => setEditing({ mode: "override", inherited: row })}
                  >
                    {t("variables.override")}
                  </Link>
                ) : null}
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
      {editing ? (
        <Suspense fallback={null}>
          <VariableDialog
            editing={editing}
            services={services}
            taken={(serviceId) => takenNames(rows, serviceId)}
            nameProblem={props.nameProblem}
            nameNotice={props.nameNotice}
            suggestions={props.suggestions}
            valueField={props.valueField}
            onSave={save}
            onClose={() => setEditing(undefined)}
          />
        </Suspense>
      ) : null}
      <ConfirmDialog
        open={reverting}
        title={t("variables.revert_title")}
        text={t("variables.revert_text", { count: changes.length })}
        confirmLabel={t("variables.revert_all")}
        danger
        onConfirm={() => {
          setChanges([]);
          setReverting(false);
        }}
        onClose={() => setReverting(false)}
      />
    </Paper>
  );
}
