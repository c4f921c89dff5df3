import HelpOutlineOutlined from "@mui/icons-material/HelpOutlineOutlined";
import IconButton from "@mui/material/IconButton";
import { Suspense } from "react";
import { useTranslation } from "react-i18next";
import { supportDrawer, useSupportDrawer } from "../features/support/drawer-state.ts";
import { lazyComponent } from "../lib/lazy-component.ts";
import { headerColors } from "../theme.ts";

/** The drawer's code loads when it is first opened: most visits never open it. */
const SupportDrawer = lazyComponent(() => import("../features/support/support-drawer.tsx"), "SupportDrawer");

/**
 * The header's "?" (spec 1 §2.5; spec 3 §2 Support drawer): it opens the support drawer on the
 * right, with private support, the community links, docs search, the status page and the outside
 * documentation.
 */
export function HelpMenu() {
  const { t } = useTranslation();
  const { open } = useSupportDrawer();
  return (
    <>
      <IconButton
        aria-label={t("help_menu.open")}
        aria-haspopup="dialog"
        aria-expanded={open ? "true" : "false"}
        onClick={() => supportDrawer.open()}
        sx={{ color: headerColors.text, "&:hover": { bgcolor: "rgba(255,255,255,0.08)" } }}
      >
        <HelpOutlineOutlined fontSize="small" />
      </IconButton>
      {open ? (
        <Suspense fallback={null}>
          <SupportDrawer />
        </Suspense>
      ) : null}
    </>
  );
}
