import ArrowDropDown from "@mui/icons-material/ArrowDropDown";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Divider from "@mui/material/Divider";
import Menu from "@mui/material/Menu";
import MenuItem from "@mui/material/MenuItem";
import Typography from "@mui/material/Typography";
import { type ReactNode, useState } from "react";

export type BatchItem<K extends string> = {
  key: K;
  label: string;
  allowed: boolean;
  danger?: boolean;
  divider?: boolean;
};

/**
 * The bar above a list with selectable rows (devices, releases): the search field, the selection
 * count and the batch-actions menu (spec 2 §4 "Batch actions"), then any extra buttons.
 */
export function ListToolbar<K extends string>(props: {
  search: ReactNode;
  /** "N selected", shown while rows are selected. */
  selectedText: string | undefined;
  actionsLabel: string;
  /** The batch actions; undefined hides the menu (nothing the user may do). */
  items: Array<BatchItem<K>> | undefined;
  onAction(key: NoInfer<K>): void;
  children?: ReactNode;
}) {
  const [menu, setMenu] = useState<HTMLElement | null>(null);
  return (
    <>
      <Box sx={{ display: "flex", gap: 1, alignItems: "center", mb: 1.5, flexWrap: "wrap" }}>
        {props.search}
        <Box sx={{ flex: 1 }} />
        {props.selectedText ? (
          <Typography variant="body2" color="text.secondary">
            {props.selectedText}
          </Typography>
        ) : null}
        {props.items ? (
          <Button
            variant="outlined"
            endIcon={<ArrowDropDown />}
            disabled={!props.selectedText}
            onClick={(event) => setMenu(event.currentTarget)}
          >
            {props.actionsLabel}
          </Button>
        ) : null}
        {props.children}
      </Box>
      <Menu anchorEl={menu} open={menu !== null} onClose={() => setMenu(null)}>
        {(props.items ?? []).flatMap((item) => [
          ...(item.divider ? [<Divider key={`${item.key}-divider`} />] : []),
          <MenuItem
            key={item.key}
            disabled={!item.allowed}
            sx={item.danger ? { color: "error.main" } : undefined}
            onClick={() => {
              setMenu(null);
              props.onAction(item.key);
            }}
          >
            {item.label}
          </MenuItem>,
        ])}
      </Menu>
    </>
  );
}
