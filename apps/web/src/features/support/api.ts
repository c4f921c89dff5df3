import type { SupportTicketPriority, SupportTicketStatus } from "@flotilla/domain";
import { responseError } from "../../lib/errors.ts";
import type { Sdk } from "../../lib/sdk.ts";

/**
 * The support calls (spec 3 §7 "Support"; docs/support.md): plain `fetch` with the session's
 * bearer token, as the other non-SDK calls go. A failed answer throws the app's one API error
 * shape (`responseError`: status, catalogue code, text); `supportErrorText` words it.
 */

export interface SupportAccess {
  can_access_support: boolean;
  support_tier: { title: string; includes_private_support: boolean; includes__SLA?: boolean };
  is_administrator: boolean;
  email: { present: boolean; verified: boolean };
}

/** A field of the ticket form, Zendesk's shape (spec 3 §3). */
export interface TicketField {
  id: number;
  type: string;
  title_in_portal: string;
  description?: string;
  required_in_portal: boolean;
  options?: { name: string; value: string }[];
}

export interface UploadedAttachment {
  id: number;
  file_name: string;
  content_type: string;
  size: number;
}

export interface AttachmentLink extends UploadedAttachment {
  href: string;
}

export interface TicketSummary {
  id: number;
  organization: { id: number; name: string };
  requester: { id: number; username: string | null } | null;
  requester_email?: string;
  subject: string;
  status: SupportTicketStatus;
  priority: SupportTicketPriority;
  comment_count: number;
  created_at: string;
  updated_at: string;
}

export interface TicketComment {
  id: number;
  author: { id: number; username: string | null } | null;
  body: string;
  is_staff: boolean;
  created_at: string;
  attachments?: AttachmentLink[];
}

/** A field of the form as the requester filled it (staff view; docs/support.md). */
export interface FilledField {
  id: number;
  type: string;
  title: string;
  required: boolean;
  value: string | number | boolean | null;
  /** The value as a person reads it (an option's name, Yes/No); null when left blank. */
  display: string | null;
}

export interface TicketThread extends TicketSummary {
  description: string;
  /** Every field of the ticket form with the requester's values: in the staff view only. */
  form?: FilledField[];
  email_ccs: string[];
  attachments: AttachmentLink[];
  comments: TicketComment[];
}

export interface SubmitTicketBody {
  subject: string;
  comment: { body: string; uploads: string[] };
  priority?: SupportTicketPriority;
  email_ccs: { user_email: string }[];
  custom_fields: { id: number; value: string | number | boolean | null }[];
}

export const supportKeys = {
  all: ["support"] as const,
  access: (orgId: number) => ["support", "access", orgId] as const,
  canAccess: (orgId: number) => ["support", "can-access", orgId] as const,
  fields: (orgId: number) => ["support", "fields", orgId] as const,
  tickets: ["support", "tickets"] as const,
  ticket: (id: number) => ["support", "tickets", id] as const,
  staffTickets: (filters: { status?: string; organization?: number }) => ["support", "staff", filters] as const,
  staffTicket: (id: number) => ["support", "staff", "ticket", id] as const,
};

export function supportApi(sdk: Sdk, apiUrl: string) {
  async function call<T>(method: string, path: string, body?: unknown, as: "json" | "blob" = "json"): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    const token = await sdk.auth.getToken().catch(() => undefined);
    if (token) headers.authorization = `Bearer ${token}`;
    let payload: BodyInit | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(body);
    }
    const response = await fetch(`${apiUrl}${path}`, { method, headers, body: payload, credentials: "omit" });
    if (!response.ok) throw await responseError(response);
    if (as === "blob") return (await response.blob()) as T;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }
  return {
    access: (orgId: number) => call<SupportAccess>("GET", `/support/v1/organizations/${orgId}/access`),
    /** The spec's check (spec 3 §7): a bare boolean. */
    canAccessSupport: (orgId: number) => call<boolean>("GET", `/billing/v1/account/${orgId}/can-access-support`),
    ticketFields: (orgId: number) => call<TicketField[]>("GET", `/zendesk/v1/${orgId}/ticket-fields`),
    /** One file, multipart with the bearer token (spec 3 §7). */
    uploadAttachment: (orgId: number, file: File) => {
      const form = new FormData();
      form.append("file", file, file.name);
      return call<{ upload: { token: string; attachment: UploadedAttachment } }>(
        "POST",
        `/zendesk/v1/${orgId}/upload-attachment`,
        form,
      );
    },
    submitTicket: (orgId: number, body: SubmitTicketBody) =>
      call<unknown>("POST", `/zendesk/v1/${orgId}/submit-ticket`, body),
    tickets: () => call<TicketSummary[]>("GET", "/support/v1/tickets"),
    ticket: (id: number) => call<TicketThread>("GET", `/support/v1/tickets/${id}`),
    reply: (id: number, body: string) => call<TicketComment>("POST", `/support/v1/tickets/${id}/comments`, { body }),
    /** An attachment's bytes (the link needs the bearer token, so it is fetched, then saved). */
    attachment: (href: string) => call<Blob>("GET", href, undefined, "blob"),
    staffTickets: (filters: { status?: string; organization?: number }) => {
      const query = new URLSearchParams();
      if (filters.status) query.set("status", filters.status);
      if (filters.organization) query.set("organization", String(filters.organization));
      const search = query.toString();
      return call<TicketSummary[]>("GET", `/support/v1/staff/tickets${search ? `?${search}` : ""}`);
    },
    staffTicket: (id: number) => call<TicketThread>("GET", `/support/v1/staff/tickets/${id}`),
    staffReply: (id: number, body: string, status: SupportTicketStatus) =>
      call<TicketComment>("POST", `/support/v1/staff/tickets/${id}/comments`, { body, status }),
    staffUpdate: (id: number, change: { status?: SupportTicketStatus; priority?: SupportTicketPriority }) =>
      call<TicketSummary>("PATCH", `/support/v1/staff/tickets/${id}`, change),
  };
}

export type SupportApi = ReturnType<typeof supportApi>;
