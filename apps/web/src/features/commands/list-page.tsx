import TerminalOutlined from "@mui/icons-material/TerminalOutlined";
import Button from "@mui/material/Button";
import LinearProgress from "@mui/material/LinearProgress";
import Paper from "@mui/material/Paper";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useNavigate } from "@tanstack/react-router";
import { useTranslation } from "react-i18next";
import { ErrorPage } from "../../components/error-page.tsx";
import { TextLink } from "../../components/links.tsx";
import { EmptyState, PageHeader } from "../../components/page.tsx";
import { formatDate, formatFullDate } from "../../lib/format.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { usePageFleet } from "../fleets/summary-page.tsx";
import { useFleetCommandRuns } from "./data.ts";
import { summaryOfStates } from "./model.ts";
import { RunStatusChip, useSummarySentence, useTargetText } from "./parts.tsx";

/** `/fleets/{id}/commands`: the fleet's command runs the caller may read, newest first. */
export function FleetCommandsPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const targetText = useTargetText();
  const sentence = useSummarySentence();
  const { fleet, fleetId } = usePageFleet();
  const runs = useFleetCommandRuns(fleetId);
  if (runs.isError) return <ErrorPage error={runs.error} />;
  if (!fleet) return null;
  return (
    <>
      <PageHeader title={t("commands.list.title")} description={t("commands.list.description")} />
      {runs.isPending ? <LinearProgress aria-label={t("commands.list.loading")} /> : null}
      {runs.isSuccess && runs.data.length === 0 ? (
        <EmptyState
          icon={<TerminalOutlined />}
          title={t("commands.list.empty_title")}
          text={t("commands.list.empty_text")}
          action={
            <Button variant="contained" onClick={() => void navigate({ to: `/fleets/${fleetId}/devices` as "/" })}>
              {t("commands.list.go_to_devices")}
            </Button>
          }
        />
      ) : null}
      {runs.isSuccess && runs.data.length > 0 ? (
        <Paper variant="outlined" sx={{ overflow: "hidden" }}>
          <Table size="small" aria-label={t("commands.list.title")}>
            <TableHead>
              <TableRow>
                <TableCell>{t("commands.columns.command")}</TableCell>
                <TableCell>{t("commands.columns.target")}</TableCell>
                <TableCell>{t("commands.columns.status")}</TableCell>
                <TableCell>{t("commands.columns.result")}</TableCell>
                <TableCell>{t("commands.columns.started_by")}</TableCell>
                <TableCell>{t("commands.columns.started")}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {runs.data.map((run) => (
                <TableRow key={run.id} hover>
                  <TableCell sx={{ maxWidth: 360 }}>
                    <TextLink
                      to={`/fleets/${fleetId}/commands/${run.id}` as "/"}
                      underline="hover"
                      sx={{
                        fontFamily: MONO_FONT_STACK,
                        fontSize: 13,
                        display: "block",
                        overflow: "hidden",
                        textOverflow: "ellipsis",
                        whiteSpace: "nowrap",
                      }}
                    >
                      {run.command}
                    </TextLink>
                  </TableCell>
                  <TableCell sx={{ whiteSpace: "nowrap" }}>{targetText(run.target)}</TableCell>
                  <TableCell>
                    <RunStatusChip
                      status={run.status}
                      allSucceeded={(run.states.succeeded ?? 0) === run.device_count}
                    />
                  </TableCell>
                  <TableCell>
                    <Typography variant="body2">
                      {t("commands.run.summary", {
                        count: run.device_count,
                        counts: sentence(summaryOfStates(run.states)),
                      })}
                    </Typography>
                  </TableCell>
                  <TableCell>{run.created_by_username ?? "–"}</TableCell>
                  <TableCell sx={{ whiteSpace: "nowrap" }}>
                    <Tooltip title={formatFullDate(run.created_at)}>
                      <span>{formatDate(run.created_at)}</span>
                    </Tooltip>
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </Paper>
      ) : null}
    </>
  );
}
