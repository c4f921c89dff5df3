import SearchOutlined from "@mui/icons-material/SearchOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import MenuItem from "@mui/material/MenuItem";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useInfiniteQuery } from "@tanstack/react-query";
import { format } from "date-fns";
import { type FormEvent, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../../app-services.tsx";
import { TextLink } from "../../../components/links.tsx";
import { errorText } from "../../../lib/errors.ts";
import { MONO_FONT_STACK } from "../../../theme.ts";
import { Card } from "../../orgs/ui.tsx";
import { useFleetServices } from "../../variables/data.ts";
import { EMPTY_LOG_SEARCH, type LogSearchForm, logSearchApi, logSearchQuery } from "./search.ts";

/**
 * Search of a device's or a fleet's stored logs (docs/logs.md): text, service and a time range
 * of the device's own clock, newest first, "Load more" for older lines. Each line shows the time
 * the device logged it, so lines uploaded after an outage sit where they happened.
 */
export function LogSearchCard(props: {
  scope: { device: string } | { fleet: number };
  fleetId: number;
  /** Shows the newest lines without waiting for a first search (the fleet's log page). */
  searchOnOpen?: boolean;
}) {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const api = useMemo(() => logSearchApi(sdk, config.apiUrl), [sdk, config.apiUrl]);
  const services = useFleetServices(props.fleetId);
  const [form, setForm] = useState<LogSearchForm>(EMPTY_LOG_SEARCH);
  const [submitted, setSubmitted] = useState<LogSearchForm | null>(props.searchOnOpen ? EMPTY_LOG_SEARCH : null);
  const scopeKey = "device" in props.scope ? `device:${props.scope.device}` : `fleet:${props.scope.fleet}`;
  const results = useInfiniteQuery({
    queryKey: ["log-search", scopeKey, submitted],
    queryFn: ({ pageParam }) => api.search(logSearchQuery(props.scope, submitted ?? EMPTY_LOG_SEARCH, pageParam)),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next ?? undefined,
    enabled: submitted !== null,
  });
  const lines = results.data?.pages.flatMap((page) => page.lines) ?? [];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSubmitted({ ...form });
  };
  const field = (name: keyof LogSearchForm) => ({
    value: form[name],
    onChange: (event: { target: { value: string } }) =>
      setForm((current) => ({ ...current, [name]: event.target.value })),
  });

  return (
    <Card title={t("log_search.title")}>
      <Box
        component="form"
        onSubmit={submit}
        sx={{
          display: "grid",
          // One row on a wide screen (the theme makes fields full width); stacked on a narrow one.
          gridTemplateColumns: { xs: "1fr", md: "minmax(180px, 2fr) minmax(130px, 1fr) 210px 210px auto" },
          gap: 1,
          alignItems: "center",
          mb: 1.5,
        }}
      >
        <TextField size="small" label={t("log_search.text")} {...field("q")} />
        <TextField
          size="small"
          select
          label={t("log_search.service")}
          slotProps={{ inputLabel: { shrink: true }, select: { displayEmpty: true } }}
          {...field("service")}
        >
          <MenuItem value="">{t("log_search.any_service")}</MenuItem>
          {(services.data ?? []).map((service) => (
            <MenuItem key={service.id} value={service.name}>
              {service.name}
            </MenuItem>
          ))}
        </TextField>
        <TextField
          size="small"
          type="datetime-local"
          label={t("log_search.from")}
          slotProps={{ inputLabel: { shrink: true } }}
          {...field("from")}
        />
        <TextField
          size="small"
          type="datetime-local"
          label={t("log_search.to")}
          slotProps={{ inputLabel: { shrink: true } }}
          {...field("to")}
        />
        <Button type="submit" variant="contained" startIcon={<SearchOutlined />}>
          {t("log_search.search")}
        </Button>
      </Box>
      {results.isError ? <Alert severity="error">{errorText(results.error)}</Alert> : null}
      {submitted && results.isSuccess && lines.length === 0 ? (
        <Typography color="text.secondary">{t("log_search.no_results")}</Typography>
      ) : null}
      {lines.length > 0 ? (
        <Box
          role="list"
          aria-label={t("log_search.results")}
          sx={{ fontFamily: MONO_FONT_STACK, fontSize: 12, maxHeight: 480, overflow: "auto" }}
        >
          {lines.map((line) => (
            <Box
              key={line.id}
              role="listitem"
              sx={{ display: "flex", gap: 1.5, py: 0.25, color: line.isStdErr ? "error.main" : undefined }}
            >
              <Tooltip title={t("log_search.received", { time: new Date(line.createdAt).toLocaleString() })}>
                <Box component="time" dateTime={new Date(line.timestamp).toISOString()} sx={{ whiteSpace: "nowrap" }}>
                  {format(new Date(line.timestamp), "yyyy-MM-dd HH:mm:ss")}
                </Box>
              </Tooltip>
              {"fleet" in props.scope ? (
                <TextLink
                  to="/devices/$uuid"
                  params={{ uuid: line.device }}
                  underline="hover"
                  aria-label={t("log_search.device_link", { uuid: line.device })}
                >
                  {line.device.slice(0, 7)}
                </TextLink>
              ) : null}
              <Box component="span" sx={{ color: "text.secondary", minWidth: 64 }}>
                {line.isSystem ? t("log_search.system") : (line.serviceName ?? "—")}
              </Box>
              <Box component="span" sx={{ whiteSpace: "pre-wrap", wordBreak: "break-word" }}>
                {line.message}
              </Box>
            </Box>
          ))}
        </Box>
      ) : null}
      {results.hasNextPage ? (
        <Button sx={{ mt: 1 }} onClick={() => void results.fetchNextPage()} disabled={results.isFetchingNextPage}>
          {t("log_search.load_more")}
        </Button>
      ) : null}
    </Card>
  );
}
