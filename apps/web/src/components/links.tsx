import Button, { type ButtonProps } from "@mui/material/Button";
import MuiLink, { type LinkProps as MuiLinkProps } from "@mui/material/Link";
import { createLink } from "@tanstack/react-router";

/**
 * MUI components that navigate with the router (typed `to`, preloading, active state). The
 * side menu's list item link lives with the side menu (signed-in pages only).
 */

function ButtonAnchor(props: ButtonProps<"a">) {
  return <Button component="a" {...props} />;
}
export const ButtonLink = createLink(ButtonAnchor);

function TextAnchor(props: MuiLinkProps) {
  return <MuiLink {...props} />;
}
export const TextLink = createLink(TextAnchor);
