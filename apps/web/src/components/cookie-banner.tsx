import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Checkbox from "@mui/material/Checkbox";
import FormControlLabel from "@mui/material/FormControlLabel";
import FormGroup from "@mui/material/FormGroup";
import Paper from "@mui/material/Paper";
import Typography from "@mui/material/Typography";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { usePreference } from "../lib/preferences.ts";

/**
 * The cookie banner (spec 1 §2.5): essential cookies (required, always on) and analytics
 * (optional). Asked once per browser; the answer is kept as `flotilla.cookieConsent`.
 */
export function CookieBanner() {
  const { t } = useTranslation();
  const [consent, setConsent] = usePreference("cookieConsent");
  const [analytics, setAnalytics] = useState(false);
  if (consent) return null;
  return (
    <Paper
      role="region"
      aria-label={t("banners.cookies_essentials")}
      elevation={6}
      sx={{ position: "fixed", right: 16, bottom: 16, zIndex: 1200, width: 380, maxWidth: "calc(100vw - 32px)", p: 2 }}
    >
      <Typography variant="body2" sx={{ mb: 1 }}>
        {t("banners.cookies")}
      </Typography>
      <FormGroup sx={{ mb: 1 }}>
        <FormControlLabel
          control={<Checkbox size="small" checked disabled />}
          label={t("banners.cookies_essentials")}
          slotProps={{ typography: { variant: "body2" } }}
        />
        <FormControlLabel
          control={
            <Checkbox size="small" checked={analytics} onChange={(event) => setAnalytics(event.target.checked)} />
          }
          label={t("banners.cookies_analytics")}
          slotProps={{ typography: { variant: "body2" } }}
        />
      </FormGroup>
      <Box sx={{ display: "flex", gap: 1, justifyContent: "flex-end" }}>
        <Button size="small" onClick={() => setConsent(analytics ? "analytics" : "essentials")}>
          {t("banners.cookies_save")}
        </Button>
        <Button size="small" variant="contained" onClick={() => setConsent("analytics")}>
          {t("banners.cookies_accept_all")}
        </Button>
      </Box>
    </Paper>
  );
}
