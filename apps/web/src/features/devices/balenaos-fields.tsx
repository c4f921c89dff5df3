import type { OsRelease } from "@flotilla/domain";
import VisibilityOffOutlined from "@mui/icons-material/VisibilityOffOutlined";
import VisibilityOutlined from "@mui/icons-material/VisibilityOutlined";
import Box from "@mui/material/Box";
import FormControl from "@mui/material/FormControl";
import FormControlLabel from "@mui/material/FormControlLabel";
import FormHelperText from "@mui/material/FormHelperText";
import FormLabel from "@mui/material/FormLabel";
import IconButton from "@mui/material/IconButton";
import InputAdornment from "@mui/material/InputAdornment";
import MenuItem from "@mui/material/MenuItem";
import Radio from "@mui/material/Radio";
import RadioGroup from "@mui/material/RadioGroup";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { type ReactNode, useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { type BalenaOsSettings, imageOf, type OsImage } from "./balenaos.ts";

const twoColumns = { display: "grid", gridTemplateColumns: { xs: "1fr", sm: "1fr 1fr" }, gap: 2 } as const;

/**
 * The balenaOS settings of the add-device dialog, as balena's own dialog asks them: the OS version
 * (those the catalogue holds for the device type, marked when this server has the image),
 * development or production, and the network (Ethernet only, or Wi-Fi with its SSID and passphrase).
 */
export function BalenaOsFields(props: {
  settings: BalenaOsSettings;
  onChange: (settings: BalenaOsSettings) => void;
  versions: readonly OsRelease[];
  images: readonly OsImage[];
  problems: { wifiSsid?: string; wifiKey?: string };
  /** Shown beside the version: the provisioning key's expiry. */
  beside: ReactNode;
}) {
  const { t } = useTranslation();
  const { settings, onChange } = props;
  const [showKey, setShowKey] = useState(false);
  const editionLabel = useId();
  const networkLabel = useId();
  const set = (change: Partial<BalenaOsSettings>) => onChange({ ...settings, ...change });
  return (
    <>
      <Box sx={twoColumns}>
        <TextField
          select
          size="small"
          label={t("devices.add.balenaos.version")}
          value={props.versions.some((release) => release.raw_version === settings.version) ? settings.version : ""}
          onChange={(event) => set({ version: event.target.value })}
          disabled={props.versions.length === 0}
          slotProps={{ select: { renderValue: (value) => String(value) } }}
        >
          {props.versions.map((release) => (
            <MenuItem key={release.raw_version} value={release.raw_version} sx={{ gap: 2 }}>
              <Box component="span" sx={{ flex: 1 }}>
                {release.raw_version}
                {release.osType === "esr" ? (
                  <Typography component="span" variant="caption" color="text.secondary" sx={{ ml: 1 }}>
                    {t("devices.add.balenaos.esr")}
                  </Typography>
                ) : null}
              </Box>
              {imageOf(props.images, release.raw_version) ? (
                <Typography component="span" variant="caption" color="success.main">
                  {t("devices.add.balenaos.on_server")}
                </Typography>
              ) : null}
            </MenuItem>
          ))}
        </TextField>
        {props.beside}
      </Box>
      <Box sx={twoColumns}>
        <FormControl>
          <FormLabel id={editionLabel} sx={{ typography: "body2", fontWeight: 500 }}>
            {t("devices.add.balenaos.edition")}
          </FormLabel>
          <RadioGroup
            aria-labelledby={editionLabel}
            value={settings.developmentMode ? "development" : "production"}
            onChange={(event) => set({ developmentMode: event.target.value === "development" })}
          >
            <FormControlLabel
              value="production"
              control={<Radio size="small" />}
              label={t("devices.add.balenaos.production")}
            />
            <FormControlLabel
              value="development"
              control={<Radio size="small" />}
              label={t("devices.add.balenaos.development")}
            />
          </RadioGroup>
          <FormHelperText sx={{ mx: 0 }}>
            {settings.developmentMode
              ? t("devices.add.balenaos.development_help")
              : t("devices.add.balenaos.production_help")}
          </FormHelperText>
        </FormControl>
        <FormControl>
          <FormLabel id={networkLabel} sx={{ typography: "body2", fontWeight: 500 }}>
            {t("devices.add.balenaos.network")}
          </FormLabel>
          <RadioGroup
            aria-labelledby={networkLabel}
            value={settings.network}
            onChange={(event) => set({ network: event.target.value as BalenaOsSettings["network"] })}
          >
            <FormControlLabel
              value="ethernet"
              control={<Radio size="small" />}
              label={t("devices.add.balenaos.ethernet")}
            />
            <FormControlLabel value="wifi" control={<Radio size="small" />} label={t("devices.add.balenaos.wifi")} />
          </RadioGroup>
          <FormHelperText sx={{ mx: 0 }}>
            {settings.network === "wifi"
              ? t("devices.add.balenaos.wifi_help")
              : t("devices.add.balenaos.ethernet_help")}
          </FormHelperText>
        </FormControl>
      </Box>
      {settings.network === "wifi" ? (
        <Box sx={twoColumns}>
          <TextField
            size="small"
            label={t("devices.add.balenaos.wifi_ssid")}
            value={settings.wifiSsid}
            onChange={(event) => set({ wifiSsid: event.target.value })}
            error={settings.wifiSsid !== "" && props.problems.wifiSsid !== undefined}
            helperText={settings.wifiSsid !== "" ? props.problems.wifiSsid : undefined}
            autoComplete="off"
            required
          />
          <TextField
            size="small"
            type={showKey ? "text" : "password"}
            label={t("devices.add.balenaos.wifi_key")}
            value={settings.wifiKey}
            onChange={(event) => set({ wifiKey: event.target.value })}
            error={props.problems.wifiKey !== undefined}
            helperText={props.problems.wifiKey ?? t("devices.add.balenaos.wifi_key_help")}
            autoComplete="new-password"
            slotProps={{
              input: {
                endAdornment: (
                  <InputAdornment position="end">
                    <IconButton
                      size="small"
                      edge="end"
                      aria-label={showKey ? t("devices.add.balenaos.hide_key") : t("devices.add.balenaos.show_key")}
                      onClick={() => setShowKey((shown) => !shown)}
                    >
                      {showKey ? <VisibilityOffOutlined fontSize="small" /> : <VisibilityOutlined fontSize="small" />}
                    </IconButton>
                  </InputAdornment>
                ),
              },
            }}
          />
        </Box>
      ) : null}
    </>
  );
}
