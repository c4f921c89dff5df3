import Box from "@mui/material/Box";
import Paper from "@mui/material/Paper";
import { useQuery } from "@tanstack/react-query";
import { useNavigate, useParams } from "@tanstack/react-router";
import { useCallback } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { PageHeader } from "../../components/page.tsx";
import { sessionQuery } from "../auth/session.ts";
import { isSupportStaff } from "../auth/token.ts";
import { RequesterTicket } from "./ticket-thread.tsx";

/**
 * `/support/tickets/{id}`: where a reply e-mail's link leads (docs/support.md). A page of its own,
 * so a signed-out reader signs in and comes back here; the other tickets are in the help drawer.
 * Platform staff who cannot read it as a member of its organization are taken to the ticket in
 * the support inbox (`/support?ticket={id}`).
 */
export function SupportTicketPage() {
  const { t } = useTranslation();
  const { sdk } = useServices();
  const navigate = useNavigate();
  const { ticketId } = useParams({ from: "/signed-in/verified/support/tickets/$ticketId" });
  const id = Number(ticketId);
  const session = useQuery(sessionQuery(sdk));
  const staff = session.data?.kind === "signed-in" && isSupportStaff(session.data.claims);
  const toInbox = useCallback(
    () => void navigate({ to: "/support", search: { ticket: id }, replace: true }),
    [navigate, id],
  );
  return (
    <Box sx={{ maxWidth: 760 }}>
      <PageHeader title={t("support.thread.page_title", { id })} description={t("support.thread.all_tickets")} />
      <Paper variant="outlined" sx={{ p: 2 }}>
        <RequesterTicket id={id} onUnreadable={staff ? toInbox : undefined} />
      </Paper>
    </Box>
  );
}
