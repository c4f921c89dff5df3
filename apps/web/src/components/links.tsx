import Button, { type ButtonProps } from "@mui/material/Button";
import MuiLink, { type LinkProps as MuiLinkProps } from "@mui/material/Link";
import ListItemButton, { type ListItemButtonProps } from "@mui/material/ListItemButton";
import { createLink } from "@tanstack/react-router";

/** MUI components that navigate with the router (typed `to`, preloading, active state). */

function ButtonAnchor(props: ButtonProps<"a">) {
  return <Button component="a" {...props} />;
}
export const ButtonLink = createLink(ButtonAnchor);

function ListItemAnchor(props: ListItemButtonProps<"a">) {
  return <ListItemButton component="a" {...props} />;
}
export const ListItemLink = createLink(ListItemAnchor);

function TextAnchor(props: MuiLinkProps) {
  return <MuiLink {...props} />;
}
export const TextLink = createLink(TextAnchor);
