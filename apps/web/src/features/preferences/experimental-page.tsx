import Box from "@mui/material/Box";
import Chip from "@mui/material/Chip";
import Divider from "@mui/material/Divider";
import Stack from "@mui/material/Stack";
import Switch from "@mui/material/Switch";
import Typography from "@mui/material/Typography";
import type { ReactNode } from "react";
import { useId } from "react";
import { useTranslation } from "react-i18next";
import { usePreference } from "../../lib/use-preference.ts";
import { HEADER_COLOR_CHOICES } from "../../theme.ts";
import { Section } from "./section.tsx";

function Option(props: { label: ReactNode; help: string; control: (labelId: string) => ReactNode }) {
  const id = useId();
  return (
    <Box sx={{ display: "flex", alignItems: "center", gap: 2, py: 1.5 }}>
      <Box sx={{ flex: 1 }}>
        <Typography id={id} sx={{ fontWeight: 500, display: "flex", alignItems: "center", gap: 1 }}>
          {props.label}
        </Typography>
        <Typography variant="body2" color="text.secondary">
          {props.help}
        </Typography>
      </Box>
      {props.control(id)}
    </Box>
  );
}

/** `/preferences/experimental` (spec 1 §2.4): display apps (Alpha), header colour, navigation stripes. */
export function ExperimentalPreferencesPage() {
  const { t } = useTranslation();
  const [displayApps, setDisplayApps] = usePreference("displayApps");
  const [headerColor, setHeaderColor] = usePreference("headerColor");
  const [stripes, setStripes] = usePreference("navigationStripes");
  return (
    <Section title={t("preferences.experimental.title")} text={t("preferences.experimental.text")}>
      <Stack divider={<Divider flexItem />}>
        <Option
          label={
            <>
              {t("preferences.experimental.display_apps")}
              <Chip
                label={t("nav.alpha")}
                size="small"
                color="warning"
                variant="outlined"
                sx={{ height: 20, fontSize: 11 }}
              />
            </>
          }
          help={t("preferences.experimental.display_apps_help")}
          control={(id) => (
            <Switch
              checked={displayApps}
              onChange={(event) => setDisplayApps(event.target.checked)}
              slotProps={{ input: { "aria-labelledby": id } }}
            />
          )}
        />
        <Option
          label={t("preferences.experimental.navigation_stripes")}
          help={t("preferences.experimental.navigation_stripes_help")}
          control={(id) => (
            <Switch
              checked={stripes}
              onChange={(event) => setStripes(event.target.checked)}
              slotProps={{ input: { "aria-labelledby": id } }}
            />
          )}
        />
        <Option
          label={t("preferences.experimental.header_color")}
          help={t("preferences.experimental.header_color_help")}
          control={(id) => (
            <Box role="radiogroup" aria-labelledby={id} sx={{ display: "flex", gap: 1 }}>
              {HEADER_COLOR_CHOICES.map((color) => (
                <Box
                  key={color || "default"}
                  component="button"
                  type="button"
                  role="radio"
                  aria-checked={headerColor === color}
                  aria-label={color || t("preferences.experimental.header_default")}
                  title={color || t("preferences.experimental.header_default")}
                  onClick={() => setHeaderColor(color)}
                  sx={{
                    width: 28,
                    height: 28,
                    p: 0,
                    borderRadius: "50%",
                    cursor: "pointer",
                    bgcolor: color || "#151a23",
                    border: "2px solid",
                    borderColor: "background.paper",
                    boxShadow: (theme) =>
                      headerColor === color
                        ? `0 0 0 2px ${theme.palette.primary.main}`
                        : `0 0 0 1px ${theme.palette.divider}`,
                    "&:focus-visible": { outline: "2px solid", outlineColor: "primary.main", outlineOffset: 3 },
                  }}
                />
              ))}
            </Box>
          )}
        />
      </Stack>
    </Section>
  );
}
