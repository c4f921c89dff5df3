import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useCallback, useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { logSearchApi } from "../devices/logs/search.ts";
import { Card } from "./ui.tsx";

/** An input's text as a setting: empty is the server's default (null), else the number typed. */
const settingOf = (text: string): number | null => (text.trim() === "" ? null : Number(text));

/**
 * The organization's device log retention (docs/logs.md): members see it, administrators set a
 * shorter age and a line cap per device; the server's 400 message shows as it is, and a failed
 * save puts the stored values back in the fields (spec 2 §8 Behaviour).
 */
export function LogRetentionCard(props: { orgId: number; editable: boolean }) {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const queryClient = useQueryClient();
  const api = useMemo(() => logSearchApi(sdk, config.apiUrl), [sdk, config.apiUrl]);
  const key = ["orgs", props.orgId, "log-retention"];
  const retention = useQuery({ queryKey: key, queryFn: () => api.retention(props.orgId) });
  const [days, setDays] = useState("");
  const [lines, setLines] = useState("");
  /** The fields as stored: on load, and again after a failed save (spec 2 §8: a failed change reverts). */
  const showStored = useCallback(() => {
    if (!retention.data) return;
    setDays(retention.data.maxAgeDays === null ? "" : String(retention.data.maxAgeDays));
    setLines(retention.data.maxLinesPerDevice === null ? "" : String(retention.data.maxLinesPerDevice));
  }, [retention.data]);
  useEffect(showStored, [showStored]);
  const save = useMutation({
    mutationFn: () =>
      api.setRetention(props.orgId, { maxAgeDays: settingOf(days), maxLinesPerDevice: settingOf(lines) }),
    meta: { reportErrors: false },
    // The error says why; the fields go back to the stored values.
    onError: showStored,
    onSuccess: (data) => {
      queryClient.setQueryData(key, data);
      showToast("success", t("log_search.saved"));
    },
  });
  if (!retention.data) return null;
  const { server } = retention.data;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <Card title={t("log_search.retention_title")}>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1.5 }}>
        {t("log_search.retention_help", {
          days: server.maxAgeDays,
          lines: server.maxLinesPerDevice.toLocaleString("en-US"),
        })}
      </Typography>
      <Box component="form" onSubmit={submit} sx={{ display: "flex", flexWrap: "wrap", gap: 1, alignItems: "center" }}>
        <TextField
          size="small"
          type="number"
          label={t("log_search.max_age_days")}
          placeholder={t("log_search.server_default", { value: server.maxAgeDays })}
          slotProps={{ inputLabel: { shrink: true }, htmlInput: { min: 1, max: server.maxAgeDays } }}
          value={days}
          onChange={(event) => setDays(event.target.value)}
          disabled={!props.editable}
        />
        <TextField
          size="small"
          type="number"
          label={t("log_search.max_lines")}
          placeholder={t("log_search.server_default", { value: server.maxLinesPerDevice })}
          slotProps={{ inputLabel: { shrink: true }, htmlInput: { min: 1, max: server.maxLinesPerDevice } }}
          value={lines}
          onChange={(event) => setLines(event.target.value)}
          disabled={!props.editable}
        />
        {props.editable ? (
          <Button type="submit" variant="outlined" loading={save.isPending}>
            {t("log_search.save")}
          </Button>
        ) : null}
      </Box>
      {save.isError ? (
        <Alert severity="error" sx={{ mt: 1 }}>
          {errorText(save.error)}
        </Alert>
      ) : null}
    </Card>
  );
}
