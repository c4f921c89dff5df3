import AppBar from "@mui/material/AppBar";
import Box from "@mui/material/Box";
import Chip from "@mui/material/Chip";
import Toolbar from "@mui/material/Toolbar";
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useTranslation } from "react-i18next";
import { useSdk } from "../app-services.tsx";
import { sessionQuery } from "../features/auth/session.ts";
import { isAdmin } from "../features/auth/token.ts";
import { usePreference } from "../lib/use-preference.ts";
import { ADMIN_HEADER_COLOR, HEADER_HEIGHT, headerColors } from "../theme.ts";
import { HelpMenu } from "./help-menu.tsx";
import { Wordmark } from "./logo.tsx";
import { ServiceStatusLink } from "./service-status.tsx";
import { UserMenu } from "./user-menu.tsx";

/** The slim header (spec 1 §2.5): product name, "Service status" (with a status page) and the user dropdown. */
export function AppHeader() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const session = useQuery(sessionQuery(sdk));
  const admin = session.data?.kind === "signed-in" && isAdmin(session.data.claims);
  // "Log in as user" (spec 3 §6): the token names the administrator in actualUser.
  const impersonated = session.data?.kind === "signed-in" && session.data.claims.actualUser !== undefined;
  const [headerColor] = usePreference("headerColor");
  // Red for platform administrators (spec 1 §2.5); otherwise the experimental colour, if chosen.
  const background = admin ? ADMIN_HEADER_COLOR : headerColor || headerColors.background;
  return (
    <AppBar
      position="static"
      data-admin={admin ? "true" : "false"}
      sx={{
        bgcolor: background,
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
        {impersonated ? (
          <Chip
            size="small"
            color="warning"
            role="status"
            label={t("nav.impersonating", {
              username: session.data?.kind === "signed-in" ? session.data.user.username : "",
            })}
            sx={{ fontWeight: 600 }}
          />
        ) : null}
        <ServiceStatusLink />
        <HelpMenu />
        <UserMenu admin={admin} />
      </Toolbar>
    </AppBar>
  );
}
