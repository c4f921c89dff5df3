import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Checkbox from "@mui/material/Checkbox";
import FormControlLabel from "@mui/material/FormControlLabel";
import Paper from "@mui/material/Paper";
import Typography from "@mui/material/Typography";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { usePreference } from "../lib/preferences.ts";

/**
 * The cookie banner (spec 1 §2.5): essential cookies (required, always on) and analytics
 * (optional). Asked once per browser; the answer is kept as `flotilla.cookieConsent`.
 *
 * A bar at the bottom of the page's column, in the flow (not floating over it): the page above
 * gets shorter while it is shown, so it never covers a form's buttons (issue 17).
 */
export function CookieBanner() {
  const { t } = useTranslation();
  const [consent, setConsent] = usePreference("cookieConsent");
  const [analytics, setAnalytics] = useState(false);
  if (consent) return null;
  return (
    <Paper
      component="section"
      role="region"
      aria-label={t("banners.cookies_title")}
      square
      elevation={0}
      sx={{
        flexShrink: 0,
        borderTop: 1,
        borderColor: "divider",
        px: { xs: 2, sm: 3 },
        py: 1.5,
        display: "flex",
        flexWrap: "wrap",
        alignItems: "center",
        columnGap: 3,
        rowGap: 1,
      }}
    >
      <Typography variant="body2" sx={{ flex: "1 1 360px", minWidth: 0 }}>
        {t("banners.cookies")}
      </Typography>
      <Box sx={{ display: "flex", flexWrap: "wrap", alignItems: "center", columnGap: 2, rowGap: 0.5 }}>
        <FormControlLabel
          sx={{ mr: 0 }}
          control={<Checkbox size="small" checked disabled />}
          label={t("banners.cookies_essentials")}
          slotProps={{ typography: { variant: "body2" } }}
        />
        <FormControlLabel
          sx={{ mr: 0 }}
          control={
            <Checkbox size="small" checked={analytics} onChange={(event) => setAnalytics(event.target.checked)} />
          }
          label={t("banners.cookies_analytics")}
          slotProps={{ typography: { variant: "body2" } }}
        />
        <Box sx={{ display: "flex", gap: 1 }}>
          <Button size="small" onClick={() => setConsent(analytics ? "analytics" : "essentials")}>
            {t("banners.cookies_save")}
          </Button>
          <Button size="small" variant="contained" onClick={() => setConsent("analytics")}>
            {t("banners.cookies_accept_all")}
          </Button>
        </Box>
      </Box>
    </Paper>
  );
}
