import { COMMAND_RUN_LIMITS } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import FormControl from "@mui/material/FormControl";
import FormControlLabel from "@mui/material/FormControlLabel";
import FormLabel from "@mui/material/FormLabel";
import MenuItem from "@mui/material/MenuItem";
import Radio from "@mui/material/Radio";
import RadioGroup from "@mui/material/RadioGroup";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useNavigate } from "@tanstack/react-router";
import { type ReactNode, useState } from "react";
import { useTranslation } from "react-i18next";
import { errorText } from "../../lib/errors.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { AccountApiError } from "../auth/api.ts";
import { useFleetServices } from "../variables/data.ts";
import { useStartCommandRun } from "./data.ts";
import {
  defaultRunForm,
  fieldOfMessage,
  formProblems,
  HOST_TARGET,
  type RunField,
  type RunForm,
  runRequest,
} from "./model.ts";

function Section(props: { label: string; children: ReactNode }) {
  return (
    <FormControl component="fieldset" sx={{ display: "grid", gap: 0.5 }}>
      <FormLabel component="legend" sx={{ fontSize: 13, fontWeight: 600, color: "text.primary", mb: 0.5 }}>
        {props.label}
      </FormLabel>
      {props.children}
    </FormControl>
  );
}

/**
 * "Run command" (docs/bulk-commands.md): a shell command on the selected devices, the whole fleet
 * or the fleet's devices with a tag, on the host OS or in a service, with a timeout, a concurrency
 * limit and what to do with offline devices. The server's validation answers show on the fields;
 * a started run opens its page.
 */
export function RunCommandDialog(props: {
  fleetId: number;
  devices: ReadonlyArray<{ uuid: string; device_name: string }>;
  can: { host: boolean; service: boolean };
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const services = useFleetServices(props.fleetId);
  const start = useStartCommandRun(props.fleetId);
  const [form, setForm] = useState<RunForm>(() => ({
    ...defaultRunForm(props.devices.length > 0 ? "selected" : "fleet"),
    target: props.can.host ? HOST_TARGET : "",
  }));
  const [errors, setErrors] = useState<Partial<Record<RunField, string>>>({});
  const set = <K extends keyof RunForm>(key: K, value: RunForm[K]) => {
    setForm((current) => ({ ...current, [key]: value }));
    setErrors((current) => ({ ...current, [key]: undefined, form: undefined }));
  };
  const submit = () => {
    const problems = formProblems(form);
    if (Object.keys(problems).length > 0) {
      setErrors(Object.fromEntries(Object.keys(problems).map((field) => [field, t("commands.form.required")])));
      return;
    }
    const request = runRequest(form, { fleetId: props.fleetId, selected: props.devices.map((d) => d.uuid) });
    start.mutate(request, {
      onSuccess: (run) => {
        props.onClose();
        void navigate({ to: `/fleets/${props.fleetId}/commands/${run.id}` as "/" });
      },
      onError: (error) => {
        // A 400 names its field ("timeout_s: must be at least 1"); anything else is the form's.
        const placed =
          error instanceof AccountApiError && error.statusCode === 400 && error.body
            ? fieldOfMessage(error.body)
            : { field: "form" as const, text: errorText(error) };
        setErrors({ [placed.field]: placed.text });
      },
    });
  };
  const field = (name: RunField) => ({ error: Boolean(errors[name]), helperText: errors[name] });
  const L = COMMAND_RUN_LIMITS;
  return (
    <Dialog open onClose={props.onClose} maxWidth="sm" fullWidth aria-labelledby="run-command-title">
      <Box
        component="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <DialogTitle id="run-command-title">{t("commands.form.title")}</DialogTitle>
        <DialogContent sx={{ display: "grid", gap: 2.5, pt: "8px !important" }}>
          <TextField
            label={t("commands.form.command")}
            placeholder="uname -a"
            value={form.command}
            onChange={(event) => set("command", event.target.value)}
            multiline
            minRows={2}
            maxRows={8}
            autoFocus
            slotProps={{ htmlInput: { spellCheck: false, style: { fontFamily: MONO_FONT_STACK, fontSize: 14 } } }}
            {...field("command")}
            helperText={errors.command ?? t("commands.form.command_help")}
          />
          <TextField
            select
            label={t("commands.form.target")}
            value={form.target}
            onChange={(event) => set("target", event.target.value)}
            {...field("target")}
            helperText={errors.target ?? t("commands.form.target_help")}
          >
            <MenuItem value={HOST_TARGET} disabled={!props.can.host}>
              {t("commands.target.host")}
            </MenuItem>
            {(services.data ?? []).map((service) => (
              <MenuItem key={service.id} value={service.name} disabled={!props.can.service}>
                {t("commands.target.service_option", { service: service.name })}
              </MenuItem>
            ))}
          </TextField>
          <Box sx={{ display: "grid", gridTemplateColumns: "1fr 1fr", gap: 2 }}>
            <TextField
              type="number"
              label={t("commands.form.timeout")}
              value={form.timeoutS}
              onChange={(event) => set("timeoutS", event.target.value)}
              slotProps={{ htmlInput: { min: L.timeoutS.min, max: L.timeoutS.max } }}
              {...field("timeoutS")}
              helperText={errors.timeoutS ?? t("commands.form.timeout_help")}
            />
            <TextField
              type="number"
              label={t("commands.form.concurrency")}
              value={form.concurrency}
              onChange={(event) => set("concurrency", event.target.value)}
              slotProps={{ htmlInput: { min: L.concurrency.min, max: L.concurrency.max } }}
              {...field("concurrency")}
              helperText={errors.concurrency ?? t("commands.form.concurrency_help")}
            />
          </Box>
          <Section label={t("commands.form.offline")}>
            <RadioGroup
              value={form.offline}
              onChange={(event) => set("offline", event.target.value as RunForm["offline"])}
              aria-label={t("commands.form.offline")}
            >
              <FormControlLabel
                value="report"
                control={<Radio size="small" />}
                label={t("commands.form.offline_report")}
              />
              <FormControlLabel value="wait" control={<Radio size="small" />} label={t("commands.form.offline_wait")} />
            </RadioGroup>
            {form.offline === "wait" ? (
              <TextField
                type="number"
                size="small"
                label={t("commands.form.wait_minutes")}
                value={form.waitMinutes}
                onChange={(event) => set("waitMinutes", event.target.value)}
                slotProps={{ htmlInput: { min: 1, max: L.queueWindowS.max / 60 } }}
                sx={{ ml: 4, maxWidth: 220 }}
                {...field("waitMinutes")}
              />
            ) : null}
          </Section>
          <Section label={t("commands.form.scope")}>
            <RadioGroup
              value={form.scope}
              onChange={(event) => set("scope", event.target.value as RunForm["scope"])}
              aria-label={t("commands.form.scope")}
            >
              <FormControlLabel
                value="selected"
                disabled={props.devices.length === 0}
                control={<Radio size="small" />}
                label={t("commands.form.scope_selected", { count: props.devices.length })}
              />
              {props.devices.length > 0 ? (
                <Typography variant="caption" color="text.secondary" sx={{ ml: 4, mt: -0.75, mb: 0.5 }}>
                  {props.devices
                    .slice(0, 5)
                    .map((device) => device.device_name)
                    .join(", ")}
                  {props.devices.length > 5
                    ? ` ${t("commands.form.and_more", { count: props.devices.length - 5 })}`
                    : ""}
                </Typography>
              ) : null}
              <FormControlLabel value="fleet" control={<Radio size="small" />} label={t("commands.form.scope_fleet")} />
              <FormControlLabel value="tag" control={<Radio size="small" />} label={t("commands.form.scope_tag")} />
            </RadioGroup>
            {form.scope === "tag" ? (
              <Box sx={{ display: "grid", gridTemplateColumns: "1fr 1fr", gap: 2, ml: 4 }}>
                <TextField
                  size="small"
                  label={t("commands.form.tag_key")}
                  value={form.tagKey}
                  onChange={(event) => set("tagKey", event.target.value)}
                  {...field("tagKey")}
                />
                <TextField
                  size="small"
                  label={t("commands.form.tag_value")}
                  value={form.tagValue}
                  onChange={(event) => set("tagValue", event.target.value)}
                  helperText={t("commands.form.tag_value_help")}
                />
              </Box>
            ) : null}
          </Section>
          {errors.form ? <Alert severity="error">{errors.form}</Alert> : null}
        </DialogContent>
        <DialogActions sx={{ px: 3, pb: 2 }}>
          <Button onClick={props.onClose}>{t("commands.form.cancel")}</Button>
          <Button type="submit" variant="contained" loading={start.isPending}>
            {t("commands.form.submit")}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}
