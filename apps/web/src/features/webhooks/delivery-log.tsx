import Box from "@mui/material/Box";
import Chip from "@mui/material/Chip";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useQuery } from "@tanstack/react-query";
import { format } from "date-fns";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { formatDate, formatFullDate } from "../../lib/format.ts";
import { webhookKeys, webhooksApi } from "./api.ts";
import {
  attemptOutcome,
  DELIVERY_POLL_MS,
  type Delivery,
  type DeliveryState,
  deliveryState,
  formatDuration,
} from "./model.ts";
import { useEventLabel } from "./webhook-dialog.tsx";

const STATE_COLOR: Record<DeliveryState, "success" | "warning" | "default" | "error"> = {
  delivered: "success",
  retrying: "warning",
  queued: "default",
  failed: "error",
};

/** A webhook's delivery log, read again every few seconds while it is open so retries appear. */
export function DeliveryLog({ orgId, webhookId, label }: { orgId: number; webhookId: number; label: string }) {
  const { t } = useTranslation();
  const { sdk, config } = useServices();
  const api = webhooksApi(sdk, config.apiUrl);
  const deliveries = useQuery({
    queryKey: webhookKeys.deliveries(orgId, webhookId),
    queryFn: () => api.deliveries(orgId, webhookId),
    refetchInterval: DELIVERY_POLL_MS,
    // The page stays; the log says it could not load.
    meta: { handlesErrors: true },
    throwOnError: false,
  });

  if (deliveries.isPending) {
    return (
      <Typography variant="body2" color="text.secondary" role="status" sx={{ py: 2 }}>
        {t("webhooks.deliveries_loading")}
      </Typography>
    );
  }
  if (deliveries.isError && !deliveries.data) {
    return (
      <Typography variant="body2" color="error" sx={{ py: 2 }}>
        {t("webhooks.deliveries_failed")}
      </Typography>
    );
  }
  const rows = deliveries.data ?? [];
  if (rows.length === 0) {
    return (
      <Typography variant="body2" color="text.secondary" sx={{ py: 2 }}>
        {t("webhooks.no_deliveries")}
      </Typography>
    );
  }
  return (
    <Table size="small" aria-label={label}>
      <TableHead>
        <TableRow>
          <TableCell sx={{ width: 190 }}>{t("webhooks.time")}</TableCell>
          <TableCell sx={{ width: 200 }}>{t("webhooks.event")}</TableCell>
          <TableCell sx={{ width: 130 }}>{t("webhooks.status")}</TableCell>
          <TableCell>{t("webhooks.attempts")}</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {rows.map((delivery) => (
          <DeliveryRow key={delivery.id} delivery={delivery} />
        ))}
      </TableBody>
    </Table>
  );
}

function DeliveryRow({ delivery }: { delivery: Delivery }) {
  const { t } = useTranslation();
  const eventLabel = useEventLabel();
  const state = deliveryState(delivery);
  return (
    <TableRow sx={{ verticalAlign: "top" }}>
      <TableCell sx={{ whiteSpace: "nowrap" }}>
        <Tooltip title={formatFullDate(delivery.created_at)}>
          <span>{formatDate(delivery.created_at)}</span>
        </Tooltip>
      </TableCell>
      <TableCell>
        <Typography variant="body2">{eventLabel(delivery.event)}</Typography>
        <Typography variant="caption" color="text.secondary" sx={{ fontFamily: "monospace" }}>
          {delivery.event}
        </Typography>
      </TableCell>
      <TableCell>
        <Chip size="small" color={STATE_COLOR[state]} label={t(`webhooks.delivery_states.${state}`)} />
      </TableCell>
      <TableCell>
        {delivery.log.length === 0 ? (
          <Typography variant="body2" color="text.secondary">
            {t("webhooks.not_attempted")}
          </Typography>
        ) : (
          <Box component="ol" sx={{ m: 0, p: 0, listStyle: "none", display: "grid", gap: 0.5 }}>
            {delivery.log.map((attempt) => {
              const outcome = attemptOutcome(attempt);
              return (
                <Box
                  component="li"
                  key={attempt.attempt}
                  sx={{ display: "grid", gridTemplateColumns: "76px 96px 64px 1fr", gap: 1.5, alignItems: "baseline" }}
                >
                  <Typography variant="body2" color="text.secondary">
                    {t("webhooks.attempt_n", { n: attempt.attempt })}
                  </Typography>
                  <Typography
                    variant="body2"
                    sx={{ fontWeight: 600, color: outcome.ok ? "success.main" : "error.main", whiteSpace: "nowrap" }}
                  >
                    {attempt.status_code !== null ? outcome.text : t("webhooks.no_answer")}
                  </Typography>
                  <Typography variant="body2" color="text.secondary" sx={{ textAlign: "right" }}>
                    {formatDuration(attempt.duration_ms)}
                  </Typography>
                  <Box sx={{ minWidth: 0 }}>
                    <Tooltip title={formatFullDate(attempt.at)}>
                      {/* Retries are seconds apart: the time of day to the second; the date on hover. */}
                      <Typography variant="body2" color="text.secondary" component="span" sx={{ whiteSpace: "nowrap" }}>
                        {format(new Date(attempt.at), "h:mm:ss a")}
                      </Typography>
                    </Tooltip>
                    {attempt.error && attempt.error !== outcome.text ? (
                      <Typography variant="caption" color="error" sx={{ display: "block", wordBreak: "break-word" }}>
                        {attempt.error}
                      </Typography>
                    ) : null}
                  </Box>
                </Box>
              );
            })}
            {state === "retrying" && delivery.next_attempt_at ? (
              <Typography component="li" variant="caption" color="text.secondary">
                {t("webhooks.next_retry", { time: formatDate(delivery.next_attempt_at) })}
              </Typography>
            ) : null}
          </Box>
        )}
      </TableCell>
    </TableRow>
  );
}
