import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TablePagination from "@mui/material/TablePagination";
import TableRow from "@mui/material/TableRow";
import TableSortLabel from "@mui/material/TableSortLabel";
import { type ReactNode, useState } from "react";

export interface SortedColumn<Row> {
  key: string;
  header: string;
  /** What the column sorts by; a column without one does not sort. */
  value?: (row: Row) => string | number;
  render: (row: Row) => ReactNode;
  numeric?: boolean;
  width?: number;
  /** Keep the cell's text on one line (names, dates). */
  nowrap?: boolean;
}

const PAGE_SIZES = [25, 50, 100];
const PAGE_SIZE = 25;

/**
 * A small list table: headers that sort, 25 rows a page with the pager shown only when there is
 * more than a page. For lists the first signed-in page shows, where the data grid's 100 KB
 * (issue performance-2) buys nothing.
 */
export function SortedTable<Row extends { id: number }>(props: {
  label: string;
  rows: Row[];
  columns: SortedColumn<Row>[];
}) {
  const [sort, setSort] = useState<{ key: string; descending: boolean } | undefined>();
  const [page, setPage] = useState(0);
  const [pageSize, setPageSize] = useState(PAGE_SIZE);
  const sortColumn = props.columns.find((column) => column.key === sort?.key);
  const sorted = sortColumn?.value ? [...props.rows].sort(compareBy(sortColumn.value, sort?.descending)) : props.rows;
  const shown = sorted.slice(page * pageSize, (page + 1) * pageSize);
  const toggle = (key: string) => setSort((now) => ({ key, descending: now?.key === key && !now.descending }));
  return (
    <>
      <Table size="small" aria-label={props.label}>
        <TableHead>
          <TableRow>
            {props.columns.map((column) => (
              <TableCell
                key={column.key}
                align={column.numeric ? "right" : "left"}
                sx={{ fontWeight: 600, fontSize: 13, width: column.width }}
                sortDirection={sort?.key === column.key ? (sort.descending ? "desc" : "asc") : false}
              >
                {column.value ? (
                  <TableSortLabel
                    active={sort?.key === column.key}
                    direction={sort?.key === column.key && sort.descending ? "desc" : "asc"}
                    onClick={() => toggle(column.key)}
                  >
                    {column.header}
                  </TableSortLabel>
                ) : (
                  column.header
                )}
              </TableCell>
            ))}
          </TableRow>
        </TableHead>
        <TableBody>
          {shown.map((row) => (
            <TableRow key={row.id} hover>
              {props.columns.map((column) => (
                <TableCell
                  key={column.key}
                  align={column.numeric ? "right" : "left"}
                  sx={column.nowrap ? { whiteSpace: "nowrap" } : undefined}
                >
                  {column.render(row)}
                </TableCell>
              ))}
            </TableRow>
          ))}
        </TableBody>
      </Table>
      {props.rows.length > PAGE_SIZE && (
        <TablePagination
          component="div"
          count={props.rows.length}
          page={page}
          rowsPerPage={pageSize}
          rowsPerPageOptions={PAGE_SIZES}
          onPageChange={(_event, next) => setPage(next)}
          onRowsPerPageChange={(event) => {
            setPageSize(Number(event.target.value));
            setPage(0);
          }}
        />
      )}
    </>
  );
}

function compareBy<Row>(value: (row: Row) => string | number, descending = false) {
  const sign = descending ? -1 : 1;
  return (a: Row, b: Row) => {
    const left = value(a);
    const right = value(b);
    const order =
      typeof left === "number" && typeof right === "number"
        ? left - right
        : String(left).localeCompare(String(right), undefined, { sensitivity: "base", numeric: true });
    return order * sign;
  };
}
