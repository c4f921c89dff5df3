import Box from "@mui/material/Box";
import Tab from "@mui/material/Tab";
import Tabs from "@mui/material/Tabs";
import { Link, Outlet, useRouterState } from "@tanstack/react-router";
import { useTranslation } from "react-i18next";
import { PageHeader } from "../../components/page.tsx";

export const PREFERENCE_TABS = ["details", "profile", "sshkeys", "access-tokens", "2fa", "experimental"] as const;

/** `/preferences/*` (spec 1 §2.4): a tab per sub-page; the side menu is hidden here. */
export function PreferencesLayout() {
  const { t } = useTranslation();
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  const current = PREFERENCE_TABS.find((tab) => pathname.startsWith(`/preferences/${tab}`)) ?? "details";
  return (
    <Box sx={{ maxWidth: 880, mx: "auto" }}>
      <PageHeader title={t("preferences.title")} description={t("preferences.description")} />
      <Tabs
        value={current}
        variant="scrollable"
        scrollButtons="auto"
        aria-label={t("preferences.title")}
        sx={{
          mb: 3,
          borderBottom: 1,
          borderColor: "divider",
          minHeight: 40,
          "& .MuiTab-root": { minHeight: 40, textTransform: "none", fontWeight: 500 },
        }}
      >
        {PREFERENCE_TABS.map((tab) => (
          <Tab key={tab} value={tab} label={t(`preferences.tabs.${tab}`)} component={Link} to={`/preferences/${tab}`} />
        ))}
      </Tabs>
      <Outlet />
    </Box>
  );
}
