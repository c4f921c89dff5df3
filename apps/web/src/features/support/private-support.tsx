import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import CircularProgress from "@mui/material/CircularProgress";
import List from "@mui/material/List";
import ListItemButton from "@mui/material/ListItemButton";
import ListItemText from "@mui/material/ListItemText";
import MenuItem from "@mui/material/MenuItem";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation } from "@tanstack/react-query";
import { Link as RouterLink } from "@tanstack/react-router";
import { useTranslation } from "react-i18next";
import { useAccountApi } from "../../lib/use-account-api.ts";
import { useOrganizations } from "../orgs/data.ts";
import type { TicketSummary } from "./api.ts";
import { Section } from "./drawer-section.tsx";
import { supportDrawer, useSupportDrawer } from "./drawer-state.ts";
import { useMyTickets, useSupportView } from "./hooks.ts";

const STATUS_COLORS = { open: "info", pending: "warning", solved: "success" } as const;

export function TicketStatusChip({ status }: { status: TicketSummary["status"] }) {
  const { t } = useTranslation();
  return (
    <Chip
      size="small"
      variant="outlined"
      color={STATUS_COLORS[status] ?? "default"}
      label={t(`support.statuses.${status}`)}
      sx={{ height: 20, fontSize: 11 }}
    />
  );
}

/**
 * Private support in the drawer (spec 3 §2, §4 "Support ticket"): the organization (a picker when
 * the user has several), what its plan and the user's e-mail allow, the "Create ticket" button,
 * and the user's tickets.
 */
export function PrivateSupport() {
  const { t } = useTranslation();
  const organizations = useOrganizations();
  const { orgId: picked, created } = useSupportDrawer();
  const orgs = organizations.data ?? [];
  const org = orgs.find((entry) => entry.id === picked) ?? orgs[0];
  return (
    <Section title={t("support.private_support")}>
      {created ? (
        <Alert severity="success" sx={{ mb: 1.5 }} onClose={() => supportDrawer.show({ name: "home" })}>
          {t("support.ticket_created")}
        </Alert>
      ) : null}
      {organizations.isPending ? <CircularProgress size={20} aria-label={t("app.loading")} /> : null}
      {organizations.isError ? <Alert severity="error">{t("errors.unknown_access_error")}</Alert> : null}
      {organizations.isSuccess && orgs.length === 0 ? (
        <Typography sx={{ fontSize: 14, color: "text.secondary" }}>{t("support.no_organizations")}</Typography>
      ) : null}
      {orgs.length > 1 ? (
        <TextField
          select
          size="small"
          fullWidth
          label={t("support.organization")}
          value={org ? String(org.id) : ""}
          onChange={(event) => supportDrawer.pickOrganization(Number(event.target.value))}
          sx={{ mb: 1.5 }}
        >
          {orgs.map((entry) => (
            <MenuItem key={entry.id} value={String(entry.id)}>
              {entry.name}
            </MenuItem>
          ))}
        </TextField>
      ) : null}
      {org ? <OrganizationSupport orgId={org.id} name={org.name} /> : null}
      <MyTickets />
    </Section>
  );
}

function OrganizationSupport({ orgId, name }: { orgId: number; name: string }) {
  const { t } = useTranslation();
  const { view, refetch } = useSupportView(orgId);
  const accountApi = useAccountApi();
  const verification = useMutation({
    mutationFn: () => accountApi.requestVerificationEmail(),
    meta: { reportErrors: false },
  });
  switch (view.kind) {
    case "loading":
      return <CircularProgress size={20} aria-label={t("app.loading")} />;
    case "no_support_access":
      return <Alert severity="warning">{t("errors.no_support_access")}</Alert>;
    case "unknown_access_error":
      return (
        <Alert
          severity="error"
          action={
            <Button color="inherit" size="small" onClick={() => void refetch()}>
              {t("support.retry")}
            </Button>
          }
        >
          {t("errors.unknown_access_error")}
        </Alert>
      );
    case "no_private_support":
      return (
        <Alert severity="info" sx={{ "& .MuiAlert-message": { width: "100%" } }}>
          <Box sx={{ mb: 1 }}>{t("errors.no_private_support")}</Box>
          {view.administrator ? (
            <Button
              component={RouterLink}
              to={`/orgs/${orgId}/billing`}
              hash="billing-plans"
              variant="contained"
              size="small"
              onClick={supportDrawer.close}
            >
              {t("support.upgrade_plan")}
            </Button>
          ) : (
            <Box sx={{ fontSize: 13 }}>{t("support.ask_administrator", { organization: name })}</Box>
          )}
        </Alert>
      );
    case "email_missing":
      return (
        <Alert severity="warning" sx={{ "& .MuiAlert-message": { width: "100%" } }}>
          <Box sx={{ mb: 1 }}>{t("support.email_missing")}</Box>
          <Button
            component={RouterLink}
            to="/preferences/details"
            size="small"
            variant="outlined"
            color="inherit"
            onClick={supportDrawer.close}
          >
            {t("support.add_email")}
          </Button>
        </Alert>
      );
    case "email_unverified":
      return (
        <Alert severity="warning" sx={{ "& .MuiAlert-message": { width: "100%" } }}>
          <Box sx={{ mb: 1 }}>{t("support.email_unverified")}</Box>
          {verification.isSuccess ? (
            <Box role="status" sx={{ fontWeight: 600 }}>
              {t("support.verification_sent")}
            </Box>
          ) : (
            <Button
              size="small"
              variant="outlined"
              color="inherit"
              loading={verification.isPending}
              onClick={() => verification.mutate()}
            >
              {t("support.send_verification")}
            </Button>
          )}
          {verification.isError ? (
            <Box role="alert" sx={{ mt: 1 }}>
              {t("support.verification_failed")}
            </Box>
          ) : null}
        </Alert>
      );
    case "ready":
      return (
        <Box>
          <Typography sx={{ fontSize: 14, color: "text.secondary", mb: 1 }}>
            {t("support.private_support_text", { organization: name })}
          </Typography>
          <Button variant="contained" fullWidth onClick={() => supportDrawer.show({ name: "create" })}>
            {t("support.create_ticket")}
          </Button>
        </Box>
      );
  }
}

function MyTickets() {
  const { t } = useTranslation();
  const tickets = useMyTickets();
  const list = tickets.data ?? [];
  // Nothing to show before the first answer or without tickets.
  if (tickets.isPending || (tickets.isSuccess && list.length === 0)) return null;
  return (
    <Box component="section" aria-label={t("support.your_tickets")} sx={{ mt: 2 }}>
      <Typography sx={{ fontSize: 14, fontWeight: 600, mb: 0.5 }}>{t("support.your_tickets")}</Typography>
      {tickets.isError ? (
        <Typography role="alert" sx={{ fontSize: 13, color: "error.main" }}>
          {t("support.tickets_failed")}
        </Typography>
      ) : null}
      <List dense disablePadding>
        {list.map((ticket) => (
          <ListItemButton
            key={ticket.id}
            onClick={() => supportDrawer.show({ name: "ticket", id: ticket.id })}
            sx={{ px: 1, borderRadius: 1, alignItems: "flex-start", gap: 1 }}
          >
            <ListItemText
              primary={ticket.subject}
              secondary={`#${ticket.id} · ${ticket.organization.name}`}
              slotProps={{
                primary: { sx: { fontSize: 14, overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" } },
                secondary: { sx: { fontSize: 12 } },
              }}
              sx={{ minWidth: 0, my: 0.25 }}
            />
            <Box sx={{ pt: 0.5 }}>
              <TicketStatusChip status={ticket.status} />
            </Box>
          </ListItemButton>
        ))}
      </List>
    </Box>
  );
}
