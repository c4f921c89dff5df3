import { API_KEY_EXPIRY_DAYS } from "@flotilla/domain";
import MenuItem from "@mui/material/MenuItem";
import TextField from "@mui/material/TextField";
import { useTranslation } from "react-i18next";
import type { ExpiryChoice } from "./api-key-expiry.ts";

/** The expiry of a new key (access token or provisioning key): days, a custom date-time, or never. */
export function ExpiryFields(props: {
  choice: ExpiryChoice;
  custom: string;
  error: string | undefined;
  onChoice: (choice: ExpiryChoice) => void;
  onCustom: (value: string) => void;
}) {
  const { t } = useTranslation();
  return (
    <>
      <TextField
        select
        label={t("preferences.tokens.expiry")}
        fullWidth
        value={props.choice}
        onChange={(event) => props.onChoice(event.target.value as ExpiryChoice)}
        error={Boolean(props.error) && props.choice !== "custom"}
        helperText={props.choice !== "custom" ? props.error : undefined}
      >
        {API_KEY_EXPIRY_DAYS.map((days) => (
          <MenuItem key={days} value={String(days)}>
            {t("preferences.tokens.days", { count: days })}
          </MenuItem>
        ))}
        <MenuItem value="custom">{t("preferences.tokens.custom")}</MenuItem>
        <MenuItem value="never">{t("preferences.tokens.never")}</MenuItem>
      </TextField>
      {props.choice === "custom" ? (
        <TextField
          type="datetime-local"
          label={t("preferences.tokens.custom_date")}
          fullWidth
          value={props.custom}
          onChange={(event) => props.onCustom(event.target.value)}
          error={Boolean(props.error)}
          helperText={props.error}
          slotProps={{ inputLabel: { shrink: true } }}
        />
      ) : null}
    </>
  );
}
