import HelpOutlineOutlined from "@mui/icons-material/HelpOutlineOutlined";
import OpenInNew from "@mui/icons-material/OpenInNew";
import IconButton from "@mui/material/IconButton";
import ListItemText from "@mui/material/ListItemText";
import Menu from "@mui/material/Menu";
import MenuItem from "@mui/material/MenuItem";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { headerColors } from "../theme.ts";

/**
 * The header's help links (spec 1 §2.5). Devices run balenaOS and the command-line tool is
 * balena-cli, so the public balena documentation, forums and hub are the places to read on.
 */
export const HELP_LINKS = [
  { key: "getting_started", href: "https://docs.balena.io/learn/getting-started/raspberrypi4-64/nodejs/" },
  { key: "docs", href: "https://docs.balena.io/" },
  { key: "feature_requests", href: "https://forums.balena.io/c/product-support/feature-requests/" },
  { key: "forums", href: "https://forums.balena.io/" },
  { key: "help", href: "https://forums.balena.io/c/product-support/" },
  { key: "hub", href: "https://hub.balena.io/" },
] as const;

export function HelpMenu() {
  const { t } = useTranslation();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  return (
    <>
      <IconButton
        aria-label={t("help_menu.open")}
        aria-haspopup="menu"
        aria-expanded={anchor ? "true" : "false"}
        onClick={(event) => setAnchor(event.currentTarget)}
        sx={{ color: headerColors.text, "&:hover": { bgcolor: "rgba(255,255,255,0.08)" } }}
      >
        <HelpOutlineOutlined fontSize="small" />
      </IconButton>
      <Menu anchorEl={anchor} open={anchor !== null} onClose={() => setAnchor(null)}>
        {HELP_LINKS.map((link) => (
          <MenuItem
            key={link.key}
            component="a"
            href={link.href}
            target="_blank"
            rel="noopener noreferrer"
            onClick={() => setAnchor(null)}
          >
            <ListItemText>{t(`help_menu.${link.key}`)}</ListItemText>
            <OpenInNew fontSize="small" sx={{ ml: 2, color: "text.secondary" }} />
          </MenuItem>
        ))}
      </Menu>
    </>
  );
}
