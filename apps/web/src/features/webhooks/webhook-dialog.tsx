import { WEBHOOK_EVENTS, WEBHOOK_LIMITS } from "@flotilla/domain";
import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import Alert from "@mui/material/Alert";
import Autocomplete from "@mui/material/Autocomplete";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Checkbox from "@mui/material/Checkbox";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import FormControl from "@mui/material/FormControl";
import FormControlLabel from "@mui/material/FormControlLabel";
import FormGroup from "@mui/material/FormGroup";
import FormHelperText from "@mui/material/FormHelperText";
import FormLabel from "@mui/material/FormLabel";
import IconButton from "@mui/material/IconButton";
import InputAdornment from "@mui/material/InputAdornment";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { type FormEvent, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { errorText } from "../../lib/errors.ts";
import type { OrgApplication } from "../orgs/data.ts";
import {
  EMPTY_WEBHOOK_FORM,
  fieldErrorOf,
  formProblems,
  type WebhookField,
  type WebhookForm,
  webhookBody,
} from "./model.ts";

/** The catalogue's name of an event ("device.offline" → "Device offline"). */
export function useEventLabel() {
  const { t } = useTranslation();
  return (event: string) =>
    t(`webhooks.events.${event.replace(".", "_")}` as "webhooks.events.device_offline", { defaultValue: event });
}

/**
 * Create or edit a webhook. The server's refusal of a field ("url: 10.0.0.1 is not a public
 * address …") shows under that field in its words; anything else above the buttons.
 */
export function WebhookDialog(props: {
  open: boolean;
  mode: "create" | "edit";
  initial?: WebhookForm;
  fleets: OrgApplication[];
  onSubmit: (body: ReturnType<typeof webhookBody>) => Promise<unknown>;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const eventLabel = useEventLabel();
  const [form, setForm] = useState<WebhookForm>(props.initial ?? EMPTY_WEBHOOK_FORM);
  const [shown, setShown] = useState<Partial<Record<WebhookField, string>>>({});
  const [general, setGeneral] = useState<string>();
  const [busy, setBusy] = useState(false);

  // A new opening starts from what it was opened with.
  useEffect(() => {
    if (props.open) {
      setForm(props.initial ?? EMPTY_WEBHOOK_FORM);
      setShown({});
      setGeneral(undefined);
    }
  }, [props.open, props.initial]);

  const set = <K extends keyof WebhookForm>(field: K, value: WebhookForm[K]) => {
    setForm((current) => ({ ...current, [field]: value }));
    setShown((current) => ({ ...current, [field]: undefined }));
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const problems = formProblems(form);
    if (Object.keys(problems).length > 0) {
      setShown({
        ...(problems.url
          ? { url: t(problems.url === "required" ? "webhooks.url_required" : "webhooks.url_invalid") }
          : {}),
        ...(problems.events ? { events: t("webhooks.events_required") } : {}),
      });
      return;
    }
    setBusy(true);
    setGeneral(undefined);
    try {
      await props.onSubmit(webhookBody(form));
    } catch (error) {
      const text = errorText(error);
      const field = fieldErrorOf(text);
      if (field) setShown({ [field.field]: field.message });
      else setGeneral(text);
    } finally {
      setBusy(false);
    }
  };

  const chosenFleets = props.fleets.filter((fleet) => form.fleets.includes(fleet.id));
  return (
    <Dialog open={props.open} onClose={busy ? undefined : props.onClose} maxWidth="sm" fullWidth>
      <Box component="form" noValidate onSubmit={submit}>
        <DialogTitle>{props.mode === "create" ? t("webhooks.add_title") : t("webhooks.edit_title")}</DialogTitle>
        <DialogContent sx={{ display: "flex", flexDirection: "column", gap: 2.5 }}>
          <TextField
            label={t("webhooks.url")}
            value={form.url}
            onChange={(event) => set("url", event.target.value)}
            error={Boolean(shown.url)}
            helperText={shown.url ?? t("webhooks.url_help")}
            placeholder="https://hooks.example.com/flotilla"
            required
            autoFocus
            fullWidth
            sx={{ mt: 1 }}
            slotProps={{ htmlInput: { maxLength: WEBHOOK_LIMITS.urlLength } }}
          />
          <FormControl component="fieldset" error={Boolean(shown.events)}>
            <FormLabel component="legend" sx={{ mb: 0.5 }}>
              {t("webhooks.events_label")}
            </FormLabel>
            <FormGroup sx={{ display: "grid", gridTemplateColumns: { xs: "1fr", sm: "1fr 1fr" }, columnGap: 2 }}>
              {WEBHOOK_EVENTS.map((name) => (
                <FormControlLabel
                  key={name}
                  control={
                    <Checkbox
                      size="small"
                      checked={form.events.includes(name)}
                      onChange={(event) =>
                        set(
                          "events",
                          event.target.checked
                            ? WEBHOOK_EVENTS.filter((item) => item === name || form.events.includes(item))
                            : form.events.filter((item) => item !== name),
                        )
                      }
                    />
                  }
                  label={
                    <Box>
                      <Typography variant="body2">{eventLabel(name)}</Typography>
                      <Typography variant="caption" color="text.secondary" sx={{ fontFamily: "monospace" }}>
                        {name}
                      </Typography>
                    </Box>
                  }
                  sx={{ alignItems: "flex-start", "& .MuiCheckbox-root": { pt: 0.5 } }}
                />
              ))}
            </FormGroup>
            {shown.events ? <FormHelperText>{shown.events}</FormHelperText> : null}
          </FormControl>
          <Autocomplete
            multiple
            options={props.fleets}
            value={chosenFleets}
            getOptionLabel={(fleet) => fleet.app_name}
            isOptionEqualToValue={(a, b) => a.id === b.id}
            onChange={(_event, value) =>
              set(
                "fleets",
                value.map((fleet) => fleet.id),
              )
            }
            renderInput={(params) => (
              <TextField
                {...params}
                label={t("webhooks.fleets_label")}
                placeholder={chosenFleets.length === 0 ? t("webhooks.all_fleets") : undefined}
                error={Boolean(shown.fleets)}
                helperText={shown.fleets ?? t("webhooks.fleets_help")}
              />
            )}
          />
          <TextField
            label={t("webhooks.description")}
            value={form.description}
            onChange={(event) => set("description", event.target.value)}
            error={Boolean(shown.description)}
            helperText={shown.description}
            fullWidth
            slotProps={{ htmlInput: { maxLength: WEBHOOK_LIMITS.descriptionLength } }}
          />
          {general ? <Alert severity="error">{general}</Alert> : null}
        </DialogContent>
        <DialogActions sx={{ px: 3, pb: 2 }}>
          <Button onClick={props.onClose} disabled={busy}>
            {t("webhooks.cancel")}
          </Button>
          <Button type="submit" variant="contained" disabled={busy}>
            {props.mode === "create" ? t("webhooks.create") : t("webhooks.save")}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}

/** The signing secret, shown once after creation: copy it now, it is never shown again. */
export function SecretDialog(props: { secret: string | undefined; onClose: () => void }) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (props.secret) setCopied(false);
  }, [props.secret]);
  const copy = () =>
    void navigator.clipboard?.writeText(props.secret ?? "").then(
      () => setCopied(true),
      () => undefined,
    );
  return (
    <Dialog open={props.secret !== undefined} maxWidth="sm" fullWidth aria-labelledby="webhook-secret-title">
      <DialogTitle id="webhook-secret-title">{t("webhooks.secret_title")}</DialogTitle>
      <DialogContent sx={{ display: "flex", flexDirection: "column", gap: 2 }}>
        <Typography variant="body2" color="text.secondary">
          {t("webhooks.secret_text")}
        </Typography>
        <TextField
          label={t("webhooks.secret")}
          value={props.secret ?? ""}
          fullWidth
          slotProps={{
            // Room below the baseline: the secret's underscores would be clipped at the default height.
            htmlInput: { readOnly: true, sx: { fontFamily: "monospace", height: "auto", lineHeight: 1.6 } },
            input: {
              endAdornment: (
                <InputAdornment position="end">
                  <Tooltip title={copied ? t("webhooks.copied") : t("webhooks.copy_secret")}>
                    <IconButton aria-label={t("webhooks.copy_secret")} onClick={copy} edge="end">
                      <ContentCopyOutlined fontSize="small" />
                    </IconButton>
                  </Tooltip>
                </InputAdornment>
              ),
            },
          }}
        />
        <Alert severity="warning">{t("webhooks.secret_once")}</Alert>
      </DialogContent>
      <DialogActions sx={{ px: 3, pb: 2 }}>
        <Button variant="contained" onClick={props.onClose}>
          {copied ? t("webhooks.done") : t("webhooks.saved_it")}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
