import Button from "@mui/material/Button";
import Checkbox from "@mui/material/Checkbox";
import IconButton from "@mui/material/IconButton";
import Paper from "@mui/material/Paper";
import type { SxProps, Theme } from "@mui/material/styles";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tooltip from "@mui/material/Tooltip";
import type { ReactNode } from "react";
import { ConfirmDialog } from "./confirm-dialog.tsx";

/**
 * The list of the access pages (members, teams, fleet access, invitations, API keys, SSH keys):
 * a table of rows with their per-row actions, or what the page shows when there is none, and the
 * confirmation before a row is removed.
 */

export interface AccessColumn<Row> {
  /** The column's heading; a table without a head (`head={false}`) needs none. */
  header?: ReactNode;
  cell: (row: Row) => ReactNode;
  align?: "right";
  headerSx?: SxProps<Theme>;
  sx?: SxProps<Theme>;
}

/** A button at the end of a row (rename, remove, log in as…): an icon, or a short text. */
export interface RowAction<Row> {
  icon?: ReactNode;
  /** A text button's text (an icon button has none). */
  text?: string;
  /** An icon button's accessible name: it names the row's object. */
  label?: (row: Row) => string;
  tooltip?: (row: Row) => string;
  color?: "error";
  disabled?: (row: Row) => boolean;
  /** Whether this row has the action at all (default: every row). */
  shown?: (row: Row) => boolean;
  onClick: (row: Row) => void;
}

/** Rows picked with a checkbox each, for a batch action above the list. */
export interface RowSelection<Row> {
  selected: readonly number[];
  onChange: (update: (previous: number[]) => number[]) => void;
  label: (row: Row) => string;
}

export function AccessList<Row extends { id: number }>(props: {
  /** The table's accessible name. */
  label: string;
  rows: readonly Row[];
  columns: ReadonlyArray<AccessColumn<Row>>;
  actions?: ReadonlyArray<RowAction<Row>>;
  /** The actions cell's width, for a short list in a card. */
  actionsWidth?: number;
  selection?: RowSelection<Row>;
  /** Shown instead of the table when there are no rows (an empty state, a line of text). */
  empty?: ReactNode;
  /** Shown as the table's only row when there are no rows. */
  emptyRow?: string;
  head?: boolean;
  hover?: boolean;
  /** The table stands in an outlined paper of its own (not in a card). */
  paper?: boolean;
  paperSx?: SxProps<Theme>;
  /** What follows the table in its paper (pagination). */
  footer?: ReactNode;
}) {
  const { rows, columns, selection } = props;
  // Given, even empty, the actions column stands (as wide) for everyone; without it, there is none.
  const actions = props.actions ?? [];
  const hasActions = props.actions !== undefined;
  if (rows.length === 0 && props.empty !== undefined) return <>{props.empty}</>;
  const table = (
    <Table size="small" aria-label={props.label}>
      {props.head === false ? null : (
        <TableHead>
          <TableRow>
            {selection ? <TableCell padding="checkbox" /> : null}
            {columns.map((column, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the columns are fixed for the table's life.
              <TableCell key={index} align={column.align} sx={column.headerSx}>
                {column.header}
              </TableCell>
            ))}
            {hasActions ? <TableCell align="right" /> : null}
          </TableRow>
        </TableHead>
      )}
      <TableBody>
        {rows.map((row) => (
          <TableRow key={row.id} hover={props.hover ?? false}>
            {selection ? (
              <TableCell padding="checkbox">
                <Checkbox
                  size="small"
                  checked={selection.selected.includes(row.id)}
                  slotProps={{ input: { "aria-label": selection.label(row) } }}
                  onChange={(event) =>
                    selection.onChange((previous) =>
                      event.target.checked ? [...previous, row.id] : previous.filter((id) => id !== row.id),
                    )
                  }
                />
              </TableCell>
            ) : null}
            {columns.map((column, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the columns are fixed for the table's life.
              <TableCell key={index} align={column.align} sx={column.sx}>
                {column.cell(row)}
              </TableCell>
            ))}
            {hasActions ? (
              <TableCell
                align="right"
                sx={props.actionsWidth ? { width: props.actionsWidth } : { whiteSpace: "nowrap" }}
              >
                {actions.map((action, index) =>
                  action.shown && !action.shown(row) ? null : (
                    // biome-ignore lint/suspicious/noArrayIndexKey: the actions are fixed for the table's life.
                    <RowActionButton key={index} action={action} row={row} />
                  ),
                )}
              </TableCell>
            ) : null}
          </TableRow>
        ))}
        {rows.length === 0 && props.emptyRow ? (
          <TableRow>
            <TableCell
              colSpan={columns.length + (selection ? 1 : 0) + (hasActions ? 1 : 0)}
              sx={{ color: "text.secondary" }}
            >
              {props.emptyRow}
            </TableCell>
          </TableRow>
        ) : null}
      </TableBody>
    </Table>
  );
  return props.paper ? (
    <Paper variant="outlined" sx={props.paperSx ?? {}}>
      {table}
      {props.footer}
    </Paper>
  ) : (
    table
  );
}

function RowActionButton<Row>({ action, row }: { action: RowAction<Row>; row: Row }) {
  if (action.text !== undefined) {
    return (
      <Button size="small" color={action.color ?? "primary"} onClick={() => action.onClick(row)}>
        {action.text}
      </Button>
    );
  }
  const button = (
    <IconButton
      size="small"
      color={action.color ?? "default"}
      disabled={action.disabled?.(row) ?? false}
      aria-label={action.label?.(row)}
      onClick={() => action.onClick(row)}
    >
      {action.icon}
    </IconButton>
  );
  if (!action.tooltip) return button;
  return (
    <Tooltip title={action.tooltip(row)}>
      {/* A disabled button gets no pointer events: the span still shows why. */}
      <span>{button}</span>
    </Tooltip>
  );
}

/**
 * "Remove …?" for one row (spec 1 §9): the row's name as the one item, a danger button that is
 * busy while the removal runs.
 */
export function ConfirmRemoveDialog<Target>(props: {
  target: Target | undefined;
  name: (target: Target) => string | null | undefined;
  title: string;
  text: string;
  confirmLabel: string;
  busy: boolean;
  onConfirm: (target: Target) => void;
  onClose: () => void;
}) {
  const { target } = props;
  const name = target === undefined ? undefined : props.name(target);
  return (
    <ConfirmDialog
      open={target !== undefined}
      danger
      title={props.title}
      text={props.text}
      items={name ? [name] : []}
      confirmLabel={props.confirmLabel}
      busy={props.busy}
      onConfirm={() => target !== undefined && props.onConfirm(target)}
      onClose={props.onClose}
    />
  );
}
