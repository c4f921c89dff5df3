import {
  SUPPORT_TICKET_PRIORITIES,
  SUPPORT_TICKET_STATUSES,
  type SupportTicketPriority,
  type SupportTicketStatus,
} from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import CircularProgress from "@mui/material/CircularProgress";
import List from "@mui/material/List";
import ListItemButton from "@mui/material/ListItemButton";
import MenuItem from "@mui/material/MenuItem";
import Paper from "@mui/material/Paper";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate, useSearch } from "@tanstack/react-router";
import { useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { PageHeader } from "../../components/page.tsx";
import { formatDate } from "../../lib/format.ts";
import { showToast } from "../../lib/toasts.ts";
import { supportKeys, type TicketSummary } from "./api.ts";
import { useSupportApi } from "./hooks.ts";
import { supportErrorText } from "./model.ts";
import { TicketStatusChip } from "./private-support.tsx";
import { ReplyBox, ThreadMessages } from "./ticket-thread.tsx";

type Filters = { status?: SupportTicketStatus; organization?: number };

/** The organizations the inbox can be narrowed to: those with tickets, by name. */
export function ticketOrganizations(tickets: TicketSummary[]): { id: number; name: string }[] {
  const byId = new Map(tickets.map((ticket) => [ticket.organization.id, ticket.organization]));
  return [...byId.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * `/support`: platform staff's inbox (balena_admin, support_agent; the route lets nobody else in).
 * Tickets by status and organization; the selected one (`?ticket={id}`, where the staff mails
 * link) with every field of the form as the requester filled it, its thread, a reply with the
 * status it leaves the ticket in, and its status and priority.
 */
export function SupportInboxPage() {
  const { t } = useTranslation();
  const api = useSupportApi();
  const [filters, setFilters] = useState<Filters>({});
  // The selected ticket is in the address (`/support?ticket={id}`): the staff mails link there.
  const selected = useSearch({ from: "/signed-in/verified/support" }).ticket;
  const navigate = useNavigate();
  const setSelected = (ticket: number) => void navigate({ to: "/support", search: { ticket } });
  const tickets = useQuery({
    queryKey: supportKeys.staffTickets(filters),
    queryFn: () => api.staffTickets(filters),
    meta: { handlesErrors: true },
  });
  const everything = useQuery({
    queryKey: supportKeys.staffTickets({}),
    queryFn: () => api.staffTickets({}),
    meta: { handlesErrors: true },
  });
  const organizations = useMemo(() => ticketOrganizations(everything.data ?? []), [everything.data]);
  const list = tickets.data ?? [];
  return (
    <Box>
      <PageHeader title={t("support.inbox.title")} />
      <Box sx={{ display: "flex", gap: 2, mb: 2, flexWrap: "wrap" }}>
        <TextField
          select
          size="small"
          label={t("support.inbox.status_filter")}
          slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
          value={filters.status ?? ""}
          onChange={(event) =>
            setFilters((current) => ({
              ...current,
              status: (event.target.value || undefined) as SupportTicketStatus | undefined,
            }))
          }
          fullWidth={false}
          sx={{ width: 160 }}
        >
          <MenuItem value="">{t("support.inbox.all")}</MenuItem>
          {SUPPORT_TICKET_STATUSES.map((status) => (
            <MenuItem key={status} value={status}>
              {t(`support.statuses.${status}`)}
            </MenuItem>
          ))}
        </TextField>
        <TextField
          select
          size="small"
          label={t("support.inbox.organization_filter")}
          slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
          value={filters.organization ? String(filters.organization) : ""}
          onChange={(event) =>
            setFilters((current) => ({
              ...current,
              organization: event.target.value ? Number(event.target.value) : undefined,
            }))
          }
          fullWidth={false}
          sx={{ width: 220 }}
        >
          <MenuItem value="">{t("support.inbox.all_organizations")}</MenuItem>
          {organizations.map((org) => (
            <MenuItem key={org.id} value={String(org.id)}>
              {org.name}
            </MenuItem>
          ))}
        </TextField>
      </Box>
      <Box sx={{ display: "grid", gridTemplateColumns: { xs: "1fr", md: "minmax(280px, 380px) 1fr" }, gap: 2 }}>
        <Paper variant="outlined" sx={{ alignSelf: "start", overflow: "hidden" }}>
          {tickets.isError ? <Alert severity="error">{t("support.inbox.load_failed")}</Alert> : null}
          {tickets.isPending ? (
            <Box sx={{ p: 2 }}>
              <CircularProgress size={24} aria-label={t("app.loading")} />
            </Box>
          ) : null}
          {tickets.isSuccess && list.length === 0 ? (
            <Typography sx={{ p: 2, color: "text.secondary", fontSize: 14 }}>
              {t("support.inbox.no_tickets")}
            </Typography>
          ) : null}
          {list.length > 0 ? (
            <List aria-label={t("support.inbox.tickets")} disablePadding>
              {list.map((ticket) => (
                <ListItemButton
                  key={ticket.id}
                  selected={ticket.id === selected}
                  onClick={() => setSelected(ticket.id)}
                  divider
                  sx={{ display: "block", py: 1 }}
                >
                  <Box sx={{ display: "flex", alignItems: "center", gap: 1 }}>
                    <Typography
                      component="span"
                      sx={{
                        flex: 1,
                        fontWeight: 600,
                        fontSize: 14,
                        overflow: "hidden",
                        textOverflow: "ellipsis",
                        whiteSpace: "nowrap",
                      }}
                    >
                      {ticket.subject}
                    </Typography>
                    <TicketStatusChip status={ticket.status} />
                  </Box>
                  <Typography component="span" sx={{ display: "block", fontSize: 12, color: "text.secondary" }}>
                    {`#${ticket.id} · ${ticket.organization.name} · ${ticket.requester_email ?? ""} · ${formatDate(ticket.updated_at)}`}
                  </Typography>
                </ListItemButton>
              ))}
            </List>
          ) : null}
        </Paper>
        <Paper variant="outlined" sx={{ p: 2, minWidth: 0 }}>
          {selected === undefined ? (
            <Typography sx={{ color: "text.secondary", fontSize: 14 }}>{t("support.inbox.select_ticket")}</Typography>
          ) : (
            <StaffTicket key={selected} id={selected} />
          )}
        </Paper>
      </Box>
    </Box>
  );
}

function StaffTicket({ id }: { id: number }) {
  const { t } = useTranslation();
  const api = useSupportApi();
  const queryClient = useQueryClient();
  const [replyStatus, setReplyStatus] = useState<SupportTicketStatus>("pending");
  const ticket = useQuery({
    queryKey: supportKeys.staffTicket(id),
    queryFn: () => api.staffTicket(id),
    retry: false,
    meta: { handlesErrors: true },
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["support", "staff"] });
  const statusChoices = SUPPORT_TICKET_STATUSES.map((status): [SupportTicketStatus, string] => [
    status,
    t(`support.statuses.${status}`),
  ]);
  const update = useMutation({
    mutationFn: (change: { status?: SupportTicketStatus; priority?: SupportTicketPriority }) =>
      api.staffUpdate(id, change),
    meta: { reportErrors: false },
    onSuccess: async () => {
      await refresh();
      showToast("success", t("support.inbox.updated_toast"));
    },
    onError: (error) => showToast("error", supportErrorText(error)),
  });
  if (ticket.isError) return <Alert severity="error">{t("support.thread.load_failed")}</Alert>;
  if (!ticket.data) return <CircularProgress size={24} aria-label={t("app.loading")} />;
  const data = ticket.data;
  return (
    <Box aria-label={t("support.thread.title", { id })} role="region">
      <ThreadMessages
        ticket={data}
        header={
          <Box sx={{ display: "flex", gap: 1.5, mt: 1.5, mb: 2, flexWrap: "wrap" }}>
            <ChoiceField
              label={t("support.inbox.set_status")}
              value={data.status}
              choices={statusChoices}
              disabled={update.isPending}
              onChange={(status) => update.mutate({ status })}
            />
            <ChoiceField
              label={t("support.inbox.set_priority")}
              value={data.priority}
              choices={SUPPORT_TICKET_PRIORITIES.map((priority): [SupportTicketPriority, string] => [
                priority,
                t(`support.priority.${priority}`),
              ])}
              disabled={update.isPending}
              onChange={(priority) => update.mutate({ priority })}
            />
          </Box>
        }
      />
      <ReplyBox
        onSend={async (body) => {
          await api.staffReply(id, body, replyStatus);
          await refresh();
        }}
        extra={
          <ChoiceField
            label={t("support.inbox.reply_status")}
            value={replyStatus}
            choices={statusChoices}
            onChange={setReplyStatus}
            width={200}
          />
        }
      />
    </Box>
  );
}

/** A small select of a ticket's status or priority. */
function ChoiceField<T extends string>(props: {
  label: string;
  value: T;
  choices: Array<[T, string]>;
  disabled?: boolean;
  onChange: (value: T) => void;
  width?: number;
}) {
  return (
    <TextField
      select
      size="small"
      label={props.label}
      value={props.value}
      disabled={props.disabled}
      onChange={(event) => props.onChange(event.target.value as T)}
      fullWidth={false}
      sx={{ width: props.width ?? 150 }}
    >
      {props.choices.map(([value, text]) => (
        <MenuItem key={value} value={value}>
          {text}
        </MenuItem>
      ))}
    </TextField>
  );
}
