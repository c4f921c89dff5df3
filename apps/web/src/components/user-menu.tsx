import { APP_VERSION } from "@flotilla/domain";
import AdminPanelSettingsOutlined from "@mui/icons-material/AdminPanelSettingsOutlined";
import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import DarkModeOutlined from "@mui/icons-material/DarkModeOutlined";
import ExpandMore from "@mui/icons-material/ExpandMore";
import HistoryOutlined from "@mui/icons-material/HistoryOutlined";
import LightModeOutlined from "@mui/icons-material/LightModeOutlined";
import LoginOutlined from "@mui/icons-material/LoginOutlined";
import LogoutOutlined from "@mui/icons-material/LogoutOutlined";
import SettingsOutlined from "@mui/icons-material/SettingsOutlined";
import SupportAgentOutlined from "@mui/icons-material/SupportAgentOutlined";
import Avatar from "@mui/material/Avatar";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import Divider from "@mui/material/Divider";
import ListItemIcon from "@mui/material/ListItemIcon";
import ListItemText from "@mui/material/ListItemText";
import Menu from "@mui/material/Menu";
import MenuItem from "@mui/material/MenuItem";
import Skeleton from "@mui/material/Skeleton";
import Snackbar from "@mui/material/Snackbar";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useQuery } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../app-services.tsx";
import { logOut, menuUsername, sessionQuery } from "../features/auth/session.ts";
import { isSupportStaff } from "../features/auth/token.ts";
import { useLogInAs } from "../features/orgs/log-in-as.ts";
import { usePreference } from "../lib/use-preference.ts";
import { headerColors } from "../theme.ts";

/** The header's user dropdown (spec 1 §2.5): username (cut after 20 characters), copy, theme, log out. */
/** "Log in as user" for platform administrators (spec 3 §6): asks for the username. */
function LogInAsDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const logInAs = useLogInAs();
  const [username, setUsername] = useState("");
  const [busy, setBusy] = useState(false);
  return (
    <Dialog open onClose={onClose} maxWidth="xs" fullWidth>
      <Box
        component="form"
        noValidate
        onSubmit={async (event: FormEvent) => {
          event.preventDefault();
          if (!username.trim()) return;
          setBusy(true);
          await logInAs(username.trim());
          setBusy(false);
        }}
      >
        <DialogTitle>{t("orgs.log_in_as")}</DialogTitle>
        <DialogContent>
          <TextField
            autoFocus
            fullWidth
            margin="dense"
            label={t("orgs.username")}
            value={username}
            onChange={(event) => setUsername(event.target.value)}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t("confirm.cancel")}</Button>
          <Button type="submit" variant="contained" loading={busy} disabled={!username.trim()}>
            {t("orgs.log_in_as")}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}

export function UserMenu({ admin = false }: { admin?: boolean }) {
  const { t } = useTranslation();
  const { sdk, queryClient, config } = useServices();
  const navigate = useNavigate();
  const menuId = useId();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const [copied, setCopied] = useState(false);
  const [colorMode, setColorMode] = usePreference("colorMode");
  // The session check already read the user's row: no request of its own.
  const session = useQuery(sessionQuery(sdk));
  const username = session.data?.kind === "signed-in" ? session.data.user.username : "";
  const shown = menuUsername(username);
  const close = () => setAnchor(null);
  const [loggingInAs, setLoggingInAs] = useState(false);
  const impersonating = session.data?.kind === "signed-in" && session.data.claims.actualUser !== undefined;
  const staff = session.data?.kind === "signed-in" && isSupportStaff(session.data.claims);

  const copyUsername = async () => {
    close();
    try {
      await navigator.clipboard.writeText(username);
      setCopied(true);
    } catch {
      // Clipboard refused (permissions); nothing to report.
    }
  };

  const logOutAndLeave = async () => {
    close();
    await logOut(queryClient, sdk, config.apiUrl);
    await navigate({ to: "/login", search: {} });
  };

  return (
    <>
      <Button
        id={`${menuId}-button`}
        aria-label={t("user_menu.open")}
        aria-haspopup="menu"
        aria-controls={anchor ? menuId : undefined}
        aria-expanded={anchor ? "true" : undefined}
        onClick={(event) => setAnchor(event.currentTarget)}
        endIcon={<ExpandMore sx={{ color: headerColors.muted }} />}
        sx={{
          color: headerColors.text,
          px: 1,
          py: 0.5,
          fontWeight: 500,
          "&:hover": { bgcolor: "rgba(255,255,255,0.08)" },
        }}
      >
        <Avatar
          sx={{ width: 24, height: 24, fontSize: 12, fontWeight: 700, bgcolor: "primary.main", color: "#fff", mr: 1 }}
        >
          {username ? username.charAt(0).toUpperCase() : ""}
        </Avatar>
        {session.isPending ? <Skeleton variant="text" width={80} sx={{ bgcolor: "rgba(255,255,255,0.12)" }} /> : shown}
      </Button>
      <Menu
        id={menuId}
        anchorEl={anchor}
        open={anchor !== null}
        onClose={close}
        anchorOrigin={{ vertical: "bottom", horizontal: "right" }}
        transformOrigin={{ vertical: "top", horizontal: "right" }}
        slotProps={{
          paper: { sx: { minWidth: 240, mt: 0.5 } },
          list: { "aria-labelledby": `${menuId}-button`, dense: true },
        }}
      >
        <Box sx={{ px: 2, pt: 1, pb: 1.5 }}>
          <Typography variant="caption" color="text.secondary">
            {t("user_menu.signed_in_as")}
          </Typography>
          <Typography sx={{ fontWeight: 600 }}>{shown}</Typography>
        </Box>
        <Divider />
        <MenuItem onClick={copyUsername} disabled={!username}>
          <ListItemIcon>
            <ContentCopyOutlined fontSize="small" />
          </ListItemIcon>
          <ListItemText>{t("user_menu.copy_username")}</ListItemText>
        </MenuItem>
        <MenuItem
          onClick={() => {
            close();
            void navigate({ to: "/preferences/details" });
          }}
        >
          <ListItemIcon>
            <SettingsOutlined fontSize="small" />
          </ListItemIcon>
          <ListItemText>{t("user_menu.preferences")}</ListItemText>
        </MenuItem>
        {admin && !impersonating ? (
          <MenuItem
            onClick={() => {
              close();
              setLoggingInAs(true);
            }}
          >
            <ListItemIcon>
              <LoginOutlined fontSize="small" />
            </ListItemIcon>
            <ListItemText>{t("orgs.log_in_as")}</ListItemText>
          </MenuItem>
        ) : null}
        {admin ? (
          <MenuItem
            onClick={() => {
              close();
              void navigate({ to: "/audit" });
            }}
          >
            <ListItemIcon>
              <HistoryOutlined fontSize="small" />
            </ListItemIcon>
            <ListItemText>{t("user_menu.audit_log")}</ListItemText>
          </MenuItem>
        ) : null}
        {staff ? (
          <MenuItem
            onClick={() => {
              close();
              void navigate({ to: "/support" });
            }}
          >
            <ListItemIcon>
              <SupportAgentOutlined fontSize="small" />
            </ListItemIcon>
            <ListItemText>{t("user_menu.support_inbox")}</ListItemText>
          </MenuItem>
        ) : null}
        {admin ? (
          <MenuItem
            onClick={() => {
              close();
              void navigate({ to: "/admin/users" });
            }}
          >
            <ListItemIcon>
              <AdminPanelSettingsOutlined fontSize="small" />
            </ListItemIcon>
            <ListItemText>{t("user_menu.admin")}</ListItemText>
          </MenuItem>
        ) : null}
        <MenuItem
          onClick={() => {
            setColorMode(colorMode === "dark" ? "light" : "dark");
            close();
          }}
        >
          <ListItemIcon>
            {colorMode === "dark" ? <LightModeOutlined fontSize="small" /> : <DarkModeOutlined fontSize="small" />}
          </ListItemIcon>
          <ListItemText>{colorMode === "dark" ? t("user_menu.light_theme") : t("user_menu.dark_theme")}</ListItemText>
        </MenuItem>
        <Divider />
        <MenuItem onClick={logOutAndLeave}>
          <ListItemIcon>
            <LogoutOutlined fontSize="small" />
          </ListItemIcon>
          <ListItemText>{t("user_menu.log_out")}</ListItemText>
        </MenuItem>
        <Typography variant="caption" color="text.disabled" component="p" sx={{ px: 2, pt: 1, pb: 0.5 }}>
          {t("app.name")} · {t("app.version", { version: APP_VERSION })}
        </Typography>
      </Menu>
      {loggingInAs ? <LogInAsDialog onClose={() => setLoggingInAs(false)} /> : null}
      <Snackbar
        open={copied}
        autoHideDuration={2500}
        onClose={() => setCopied(false)}
        message={t("user_menu.copied")}
        anchorOrigin={{ vertical: "bottom", horizontal: "center" }}
      />
    </>
  );
}
