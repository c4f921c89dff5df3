import AppBar from "@mui/material/AppBar";
import Box from "@mui/material/Box";
import Toolbar from "@mui/material/Toolbar";
import { Link } from "@tanstack/react-router";
import { useTranslation } from "react-i18next";
import { HEADER_HEIGHT, headerColors } from "../theme.ts";
import { Wordmark } from "./logo.tsx";
import { ServiceStatusLink } from "./service-status.tsx";
import { UserMenu } from "./user-menu.tsx";

/** The slim header (spec 1 §2.5): product name, "Service status" (with a status page) and the user dropdown. */
export function AppHeader() {
  const { t } = useTranslation();
  return (
    <AppBar
      position="static"
      sx={{
        bgcolor: headerColors.background,
        color: headerColors.text,
        height: HEADER_HEIGHT,
        flexShrink: 0,
        borderBottom: "1px solid rgba(255,255,255,0.06)",
      }}
    >
      <Toolbar disableGutters sx={{ minHeight: `${HEADER_HEIGHT}px !important`, px: 1.5, gap: 1 }}>
        <Box
          component="a"
          href="#main-content"
          sx={{
            position: "absolute",
            left: -9999,
            "&:focus": {
              left: 8,
              top: 8,
              zIndex: 10,
              bgcolor: "background.paper",
              color: "text.primary",
              px: 1.5,
              py: 0.5,
              borderRadius: 1,
            },
          }}
        >
          {t("nav.skip_to_content")}
        </Box>
        <Box
          component={Link}
          to="/"
          aria-label={`${t("app.name")} – ${t("nav.home")}`}
          sx={{
            display: "inline-flex",
            alignItems: "center",
            color: "inherit",
            textDecoration: "none",
            px: 0.75,
            py: 0.5,
            borderRadius: 1,
            "&:hover": { bgcolor: "rgba(255,255,255,0.06)" },
          }}
        >
          <Wordmark size={24} color={headerColors.text} />
        </Box>
        <Box sx={{ flex: 1 }} />
        <ServiceStatusLink />
        <UserMenu />
      </Toolbar>
    </AppBar>
  );
}
