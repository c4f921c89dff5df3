import AppsOutlined from "@mui/icons-material/AppsOutlined";
import BadgeOutlined from "@mui/icons-material/BadgeOutlined";
import BoltOutlined from "@mui/icons-material/BoltOutlined";
import CorporateFareOutlined from "@mui/icons-material/CorporateFareOutlined";
import CreditCardOutlined from "@mui/icons-material/CreditCardOutlined";
import DashboardOutlined from "@mui/icons-material/DashboardOutlined";
import DataObjectOutlined from "@mui/icons-material/DataObjectOutlined";
import DevicesOtherOutlined from "@mui/icons-material/DevicesOtherOutlined";
import GroupsOutlined from "@mui/icons-material/GroupsOutlined";
import HealthAndSafetyOutlined from "@mui/icons-material/HealthAndSafetyOutlined";
import HistoryOutlined from "@mui/icons-material/HistoryOutlined";
import KeyboardDoubleArrowLeft from "@mui/icons-material/KeyboardDoubleArrowLeft";
import KeyboardDoubleArrowRight from "@mui/icons-material/KeyboardDoubleArrowRight";
import ManageSearchOutlined from "@mui/icons-material/ManageSearchOutlined";
import MemoryOutlined from "@mui/icons-material/MemoryOutlined";
import NewReleasesOutlined from "@mui/icons-material/NewReleasesOutlined";
import PersonOutlined from "@mui/icons-material/PersonOutlined";
import PlaceOutlined from "@mui/icons-material/PlaceOutlined";
import SettingsOutlined from "@mui/icons-material/SettingsOutlined";
import TerminalOutlined from "@mui/icons-material/TerminalOutlined";
import TollOutlined from "@mui/icons-material/TollOutlined";
import TuneOutlined from "@mui/icons-material/TuneOutlined";
import ViewInArOutlined from "@mui/icons-material/ViewInArOutlined";
import VpnKeyOutlined from "@mui/icons-material/VpnKeyOutlined";
import WavesOutlined from "@mui/icons-material/WavesOutlined";
import WebhookOutlined from "@mui/icons-material/WebhookOutlined";
import Box from "@mui/material/Box";
import Chip from "@mui/material/Chip";
import Divider from "@mui/material/Divider";
import List from "@mui/material/List";
import ListItemButton, { type ListItemButtonProps } from "@mui/material/ListItemButton";
import ListItemIcon from "@mui/material/ListItemIcon";
import ListItemText from "@mui/material/ListItemText";
import { alpha } from "@mui/material/styles";
import Tooltip from "@mui/material/Tooltip";
import { createLink } from "@tanstack/react-router";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { usePreference } from "../lib/use-preference.ts";
import { SIDEBAR_COLLAPSED_WIDTH, SIDEBAR_WIDTH } from "../theme.ts";
import { type MenuIcon, type NavLabel, useContextMenu } from "./context-menu.ts";

function ListItemAnchor(props: ListItemButtonProps<"a">) {
  return <ListItemButton component="a" {...props} />;
}
/** A side-menu entry that navigates with the router. */
const ListItemLink = createLink(ListItemAnchor);

const ICONS: Record<MenuIcon, ReactNode> = {
  fleets: <DevicesOtherOutlined fontSize="small" />,
  apps: <AppsOutlined fontSize="small" />,
  blocks: <ViewInArOutlined fontSize="small" />,
  orgs: <CorporateFareOutlined fontSize="small" />,
  identity: <BadgeOutlined fontSize="small" />,
  summary: <DashboardOutlined fontSize="small" />,
  members: <PersonOutlined fontSize="small" />,
  teams: <GroupsOutlined fontSize="small" />,
  billing: <CreditCardOutlined fontSize="small" />,
  credits: <TollOutlined fontSize="small" />,
  audit: <HistoryOutlined fontSize="small" />,
  webhooks: <WebhookOutlined fontSize="small" />,
  settings: <SettingsOutlined fontSize="small" />,
  keys: <VpnKeyOutlined fontSize="small" />,
  devices: <MemoryOutlined fontSize="small" />,
  actions: <BoltOutlined fontSize="small" />,
  location: <PlaceOutlined fontSize="small" />,
  diagnostics: <HealthAndSafetyOutlined fontSize="small" />,
  variables: <DataObjectOutlined fontSize="small" />,
  config: <TuneOutlined fontSize="small" />,
  releases: <NewReleasesOutlined fontSize="small" />,
  rollouts: <WavesOutlined fontSize="small" />,
  commands: <TerminalOutlined fontSize="small" />,
  logs: <ManageSearchOutlined fontSize="small" />,
};

type HomeEntry = {
  to: string;
  label: NavLabel;
  icon: ReactNode;
  alpha?: boolean;
  /** Active only on this exact path (a context's summary entry). */
  exact?: boolean;
};

const itemSx = (collapsed: boolean) =>
  ({
    minHeight: 36,
    borderRadius: 1,
    px: collapsed ? 1.25 : 1.5,
    mb: 0.25,
    color: "text.secondary",
    "& .MuiListItemIcon-root": { minWidth: collapsed ? 0 : 32, color: "inherit" },
    "& .MuiListItemText-primary": { fontSize: "0.875rem", fontWeight: 500 },
    "&:hover": { color: "text.primary" },
    "&[data-status='active']": {
      color: "primary.main",
      bgcolor: (theme: import("@mui/material/styles").Theme) => alpha(theme.palette.primary.main, 0.1),
      "& .MuiListItemText-primary": { fontWeight: 600 },
    },
  }) as const;

/**
 * The side menu (spec 1 §2.5), Home context: Fleets, Apps (Alpha; only with the display-apps
 * option), Blocks, Organizations. Collapsible: 220 px wide, 56 px collapsed, icons with tooltips.
 */
export function Sidebar({ collapsed, onToggle }: { collapsed: boolean; onToggle: () => void }) {
  const { t } = useTranslation();
  const [displayApps] = usePreference("displayApps");
  const [stripes] = usePreference("navigationStripes");
  const menu = useContextMenu(displayApps);
  const entries: HomeEntry[] = menu.map((entry) => ({ ...entry, icon: ICONS[entry.icon] }));
  const toggleLabel = collapsed ? t("nav.expand") : t("nav.collapse");

  return (
    <Box
      component="nav"
      aria-label={t("nav.main")}
      data-collapsed={collapsed ? "true" : "false"}
      sx={{
        width: collapsed ? SIDEBAR_COLLAPSED_WIDTH : SIDEBAR_WIDTH,
        flexShrink: 0,
        display: "flex",
        flexDirection: "column",
        bgcolor: "background.paper",
        borderRight: 1,
        borderColor: "divider",
        transition: (theme) => theme.transitions.create("width", { duration: theme.transitions.duration.shorter }),
        overflowX: "hidden",
      }}
    >
      <List
        component="div"
        data-stripes={stripes ? "true" : "false"}
        sx={{
          px: 1,
          py: 1.5,
          flex: 1,
          // The experimental navigation stripes (spec 1 §2.4): every other entry shaded.
          ...(stripes ? { "& > a:nth-of-type(even):not([data-status='active'])": { bgcolor: "action.hover" } } : {}),
        }}
      >
        {menu.context !== "home" ? (
          <Box
            sx={{
              px: 1.5,
              pb: 1,
              fontSize: 11,
              fontWeight: 600,
              letterSpacing: 0.6,
              textTransform: "uppercase",
              color: "text.disabled",
              display: collapsed ? "none" : "block",
            }}
          >
            {t(`nav.context.${menu.context}`)}
          </Box>
        ) : null}
        {entries.map((entry) => {
          const label = t(entry.label);
          return (
            <Tooltip key={entry.to} title={collapsed ? label : ""} placement="right" disableInteractive>
              <ListItemLink
                to={entry.to as "/"}
                activeOptions={{ exact: entry.exact === true }}
                aria-label={collapsed ? label : undefined}
                sx={itemSx(collapsed)}
              >
                <ListItemIcon>{entry.icon}</ListItemIcon>
                {collapsed ? null : (
                  <>
                    <ListItemText primary={label} sx={{ my: 0 }} />
                    {entry.alpha ? (
                      <Chip
                        label={t("nav.alpha")}
                        size="small"
                        color="primary"
                        variant="outlined"
                        sx={{ height: 18, fontSize: 11 }}
                      />
                    ) : null}
                  </>
                )}
              </ListItemLink>
            </Tooltip>
          );
        })}
      </List>
      <Divider />
      <Box sx={{ p: 1 }}>
        <Tooltip title={collapsed ? toggleLabel : ""} placement="right" disableInteractive>
          <ListItemButton
            onClick={onToggle}
            aria-label={toggleLabel}
            aria-expanded={!collapsed}
            sx={{ ...itemSx(collapsed), mb: 0 }}
          >
            <ListItemIcon>
              {collapsed ? <KeyboardDoubleArrowRight fontSize="small" /> : <KeyboardDoubleArrowLeft fontSize="small" />}
            </ListItemIcon>
            {collapsed ? null : <ListItemText primary={t("nav.collapse")} sx={{ my: 0 }} />}
          </ListItemButton>
        </Tooltip>
      </Box>
    </Box>
  );
}
