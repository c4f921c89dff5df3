import { DATE_FORMAT } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { format } from "date-fns";
import { type ReactNode, useState } from "react";
import { useTranslation } from "react-i18next";
import { errorText } from "../lib/errors.ts";
import { defaultSupportAccessInput, supportAccessState, supportAccessUntil } from "../lib/support-access.ts";

/** Settings pages (fleet, device): one setting per row, its explanation left, its control right. */
export function Setting(props: { title: string; text?: ReactNode; children: ReactNode; label?: string }) {
  return (
    <Box
      component="section"
      aria-label={props.label ?? props.title}
      sx={{
        display: "grid",
        gridTemplateColumns: { xs: "1fr", md: "minmax(220px, 1fr) minmax(320px, 1.4fr)" },
        gap: { xs: 1.5, md: 4 },
        py: 2.5,
        px: 2.5,
        "& + &": { borderTop: 1, borderColor: "divider" },
      }}
    >
      <Box>
        <Typography variant="subtitle2" component="h3" sx={{ fontWeight: 600 }}>
          {props.title}
        </Typography>
        {props.text ? (
          <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
            {props.text}
          </Typography>
        ) : null}
      </Box>
      <Box sx={{ minWidth: 0 }}>{props.children}</Box>
    </Box>
  );
}

/** A row of a setting's controls. */
export const settingRow = { display: "flex", gap: 1, alignItems: "flex-start" } as const;

/**
 * A form's or setting's submit: busy while the action runs, and the error's text kept for the
 * form to show next to its controls (the user's input stays).
 */
export function useSubmission() {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };
  return { error, setError, busy, run };
}

export function ErrorNote({ error }: { error: string | undefined }) {
  return error ? (
    <Alert severity="error" sx={{ mb: 1.5 }}>
      {error}
    </Alert>
  ) : null;
}

/** Label/value pairs of a summary card. */
export function Facts({ rows }: { rows: Array<[string, ReactNode]> }) {
  return (
    <Box
      component="dl"
      sx={{ display: "grid", gridTemplateColumns: "150px 1fr", rowGap: 1, columnGap: 2, m: 0, "& dd": { m: 0 } }}
    >
      {rows.map(([label, value]) => (
        <Box key={label} sx={{ display: "contents" }}>
          <Typography component="dt" variant="body2" color="text.secondary">
            {label}
          </Typography>
          <Typography component="dd" variant="body2" sx={{ minWidth: 0, overflowWrap: "anywhere" }}>
            {value}
          </Typography>
        </Box>
      ))}
    </Box>
  );
}

/**
 * Support access of a fleet or a device (spec 2 §4): off / granted until / expired; grant until a
 * date-time (default 5 days ahead, not in the past, sent in ms) or revoke (null).
 */
export function SupportAccessSetting(props: {
  text: string;
  until: string | null;
  save: (ms: number | null, toast: string) => Promise<void>;
}) {
  const { t } = useTranslation();
  const [input, setInput] = useState(defaultSupportAccessInput);
  const { error, busy, run, setError } = useSubmission();
  const state = supportAccessState(props.until);
  const status =
    state.state === "off"
      ? t("fleets.support.off")
      : state.state === "granted"
        ? t("fleets.support.granted_until", { date: format(state.until, DATE_FORMAT) })
        : t("fleets.support.expired_on", { date: format(state.until, DATE_FORMAT) });
  const grant = () => {
    const until = supportAccessUntil(input);
    if (!until.ok) {
      setError(t(`fleets.support.${until.error}`));
      return;
    }
    void run(() =>
      props.save(until.ms, t("fleets.support.granted_toast", { date: format(new Date(until.ms), DATE_FORMAT) })),
    );
  };
  return (
    <Setting title={t("fleets.support.title")} text={props.text}>
      <Typography variant="body2" sx={{ mb: 1.5, fontWeight: 500 }} data-testid="support-access-status">
        {status}
      </Typography>
      <ErrorNote error={error} />
      <Box sx={settingRow}>
        <TextField
          size="small"
          type="datetime-local"
          label={t("fleets.support.until")}
          value={input}
          onChange={(event) => setInput(event.target.value)}
          slotProps={{ inputLabel: { shrink: true } }}
          sx={{ flex: 1 }}
        />
        <Button variant="outlined" onClick={grant} loading={busy}>
          {t("fleets.support.grant")}
        </Button>
        {state.state === "granted" ? (
          <Button color="error" onClick={() => void run(() => props.save(null, t("fleets.support.revoked_toast")))}>
            {t("fleets.support.revoke")}
          </Button>
        ) : null}
      </Box>
    </Setting>
  );
}
