import Box from "@mui/material/Box";
import { Outlet } from "@tanstack/react-router";
import { usePreference } from "../lib/preferences.ts";
import { AppHeader } from "./app-header.tsx";
import { AppBreadcrumbs } from "./breadcrumbs.tsx";
import { InFrameContext } from "./frame-context.ts";
import { Sidebar } from "./sidebar.tsx";

/** The signed-in frame (spec 1 §2.5): slim header, collapsible side menu, breadcrumbs, the page. */
export function AppLayout() {
  const [collapsed, setCollapsed] = usePreference("sidebarCollapsed");
  return (
    <Box sx={{ display: "flex", flexDirection: "column", height: "100%" }}>
      <AppHeader />
      <Box sx={{ display: "flex", flex: 1, minHeight: 0 }}>
        <Sidebar collapsed={collapsed} onToggle={() => setCollapsed(!collapsed)} />
        <Box
          component="main"
          id="main-content"
          tabIndex={-1}
          sx={{ flex: 1, minWidth: 0, overflow: "auto", outline: "none" }}
        >
          <Box sx={{ px: 3, pt: 2, pb: 4, maxWidth: 1440 }}>
            <AppBreadcrumbs />
            <InFrameContext value={true}>
              <Outlet />
            </InFrameContext>
          </Box>
        </Box>
      </Box>
    </Box>
  );
}
