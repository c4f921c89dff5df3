import Box from "@mui/material/Box";
import { useQuery } from "@tanstack/react-query";
import { Outlet, useMatches, useRouterState } from "@tanstack/react-router";
import { useEffect } from "react";
import { useSdk } from "../app-services.tsx";
import { rememberLastPath } from "../features/auth/navigation.ts";
import { sessionQuery } from "../features/auth/session.ts";
import { usePreference } from "../lib/use-preference.ts";
import { AppHeader } from "./app-header.tsx";
import { AppBreadcrumbs } from "./breadcrumbs.tsx";
import { InFrameContext } from "./frame-context.ts";
import { Sidebar } from "./sidebar.tsx";

/** The signed-in frame (spec 1 §2.5): slim header, collapsible side menu, breadcrumbs, the page. */
export function AppLayout() {
  const [collapsed, setCollapsed] = usePreference("sidebarCollapsed");
  const sdk = useSdk();
  const session = useQuery(sessionQuery(sdk));
  const userId = session.data?.kind === "signed-in" ? session.data.user.id : undefined;
  const href = useRouterState({ select: (state) => state.location.href });
  const hideSidebar = useMatches({ select: (matches) => matches.some((match) => match.staticData?.hideSidebar) });
  // The last visited path, per user, is restored on the first load after the next login (spec 1 §2.2).
  useEffect(() => {
    if (userId !== undefined) rememberLastPath(userId, href);
  }, [userId, href]);
  return (
    <Box sx={{ display: "flex", flexDirection: "column", height: "100%" }}>
      <AppHeader />
      <Box sx={{ display: "flex", flex: 1, minHeight: 0 }}>
        {hideSidebar ? null : <Sidebar collapsed={collapsed} onToggle={() => setCollapsed(!collapsed)} />}
        <Box
          component="main"
          id="main-content"
          tabIndex={-1}
          sx={{ flex: 1, minWidth: 0, overflow: "auto", outline: "none" }}
        >
          <Box sx={{ px: 3, pt: 2, pb: 4, maxWidth: 1440 }}>
            {hideSidebar ? null : <AppBreadcrumbs />}
            <InFrameContext value={true}>
              <Outlet />
            </InFrameContext>
          </Box>
        </Box>
      </Box>
    </Box>
  );
}
