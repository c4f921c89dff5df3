import { createRoute, notFound } from "@tanstack/react-router";
import { isNumericId } from "../../lib/route-id.ts";
import { page } from "../../route-kit.ts";
import type { VerifiedRoute } from "../../router.tsx";
import { getSessionState } from "../auth/session.ts";
import { isSupportStaff } from "../auth/token.ts";

/**
 * `/support`: the platform staff's support inbox (balena_admin, support_agent); anybody else gets
 * the not-found page, as for a path that is not there. `/support/tickets/{id}`: a ticket, where the
 * reply e-mails link to (signed-out: log in, then back).
 */
export function supportRoutes(verified: VerifiedRoute) {
  return [
    createRoute({
      getParentRoute: () => verified,
      path: "/support",
      // `?ticket={id}` opens that ticket (the staff mails link there).
      validateSearch: (search: Record<string, unknown>): { ticket?: number } => {
        const ticket = typeof search.ticket === "number" ? String(search.ticket) : search.ticket;
        return typeof ticket === "string" && isNumericId(ticket) ? { ticket: Number(ticket) } : {};
      },
      beforeLoad: async ({ context }) => {
        const session = await getSessionState(context.queryClient, context.sdk);
        if (session.kind !== "signed-in" || !isSupportStaff(session.claims)) throw notFound();
      },
      component: page(() => import("./inbox-page.tsx"), "SupportInboxPage"),
    }),
    createRoute({
      getParentRoute: () => verified,
      path: "/support/tickets/$ticketId",
      beforeLoad: ({ params }) => {
        if (!isNumericId(params.ticketId)) throw notFound();
      },
      component: page(() => import("./ticket-page.tsx"), "SupportTicketPage"),
    }),
  ];
}
