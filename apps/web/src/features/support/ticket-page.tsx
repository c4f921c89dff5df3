import Box from "@mui/material/Box";
import Paper from "@mui/material/Paper";
import { useParams } from "@tanstack/react-router";
import { useTranslation } from "react-i18next";
import { PageHeader } from "../../components/page.tsx";
import { RequesterTicket } from "./ticket-thread.tsx";

/**
 * `/support/tickets/{id}`: where a reply e-mail's link leads (docs/support.md). A page of its own,
 * so a signed-out reader signs in and comes back here; the other tickets are in the help drawer.
 */
export function SupportTicketPage() {
  const { t } = useTranslation();
  const { ticketId } = useParams({ from: "/signed-in/verified/support/tickets/$ticketId" });
  const id = Number(ticketId);
  return (
    <Box sx={{ maxWidth: 760 }}>
      <PageHeader title={t("support.thread.page_title", { id })} description={t("support.thread.all_tickets")} />
      <Paper variant="outlined" sx={{ p: 2 }}>
        <RequesterTicket id={id} />
      </Paper>
    </Box>
  );
}
