import type { Config } from "../../config.ts";
import { FlotillaError } from "../../errors.ts";
import type { TicketField } from "./fields.ts";

/**
 * Zendesk's Tickets API (docs/support.md "Zendesk"): with ZENDESK_URL, ZENDESK_EMAIL and
 * ZENDESK_API_TOKEN set, the ticket form's fields are Zendesk's (GET /api/v2/ticket_fields),
 * each attachment is uploaded to it (POST /api/v2/uploads?filename=… → an upload token) and each
 * ticket created there (POST /api/v2/tickets), authenticated as `{email}/token:{api_token}`.
 *
 * These calls use `fetch`, not the guarded fetcher of lib/outbound-fetch.ts: that one exists to
 * keep URLs a *user* supplies off internal addresses, while ZENDESK_URL is the operator's own
 * setting (trusted like SMTP_URL or STRIPE_API_URL; a proxy or a test double on a private
 * address is legitimate), and it only reads (GET). What is kept from it: a deadline on every
 * exchange, redirects refused (the credentials go to ZENDESK_URL and nowhere else), a bound on
 * the answer's size, and one error for the client whatever went wrong (the detail is logged).
 */
const TIMEOUT_MS = 15_000;
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
/** Zendesk's form changes rarely: its fields are asked for at most this often. */
const FIELDS_CACHE_MS = 5 * 60_000;

type Log = { warn(object: object, message: string): void };

export type NewZendeskTicket = {
  subject: string;
  body: string;
  requester: { name: string; email: string };
  emailCcs: string[];
  priority: string;
  type?: string | undefined;
  customFields: { id: number; value: unknown }[];
  uploads: string[];
  organization: { id: number; name: string };
  localId: number;
};

type ZendeskField = {
  id: number;
  type: string;
  title?: string;
  title_in_portal?: string;
  description?: string;
  required_in_portal?: boolean;
  visible_in_portal?: boolean;
  editable_in_portal?: boolean;
  active?: boolean;
  custom_field_options?: { name: string; value: string }[] | null;
  system_field_options?: { name: string; value: string }[] | null;
};

/** Fields agents set, never the requester. */
const AGENT_ONLY = new Set(["status", "group", "assignee", "custom_status"]);

export function zendeskClient(settings: NonNullable<Config["zendesk"]>, log: Log) {
  const authorization = `Basic ${Buffer.from(`${settings.email}/token:${settings.apiToken}`).toString("base64")}`;
  let fields: { at: number; value: TicketField[] } | undefined;

  async function call<T>(path: string, init: { method: string; headers?: Record<string, string>; body?: BodyInit }) {
    let detail: string;
    try {
      const response = await fetch(`${settings.url}${path}`, {
        method: init.method,
        headers: { accept: "application/json", authorization, ...init.headers },
        body: init.body ?? null,
        redirect: "error",
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const declared = Number(response.headers.get("content-length"));
      if (Number.isFinite(declared) && declared > MAX_ANSWER_BYTES) {
        await response.body?.cancel();
        detail = `answer of ${declared} bytes`;
      } else {
        const text = await response.text();
        if (text.length > MAX_ANSWER_BYTES) detail = "answer too large";
        else if (response.ok) return JSON.parse(text) as T;
        else detail = `HTTP ${response.status}: ${text.slice(0, 500)}`;
      }
    } catch (error) {
      detail = (error as Error).message || (error as Error).name;
    }
    log.warn({ zendesk: `${init.method} ${path.split("?")[0]}`, detail }, "the Zendesk API call failed");
    throw new FlotillaError("something_went_wrong");
  }

  return {
    /** The fields of Zendesk's ticket form that a requester fills in, as the dashboard reads them. */
    async ticketFields(): Promise<TicketField[]> {
      if (fields && Date.now() - fields.at < FIELDS_CACHE_MS) return fields.value;
      const answer = await call<{ ticket_fields?: ZendeskField[] }>("/api/v2/ticket_fields", { method: "GET" });
      const value = (answer.ticket_fields ?? [])
        .filter(
          (field) =>
            field.active !== false &&
            field.visible_in_portal !== false &&
            field.editable_in_portal !== false &&
            !AGENT_ONLY.has(field.type),
        )
        .map((field) => {
          const options = field.custom_field_options ?? field.system_field_options ?? undefined;
          return {
            id: field.id,
            type: field.type,
            title_in_portal: field.title_in_portal || field.title || String(field.id),
            ...(field.description ? { description: field.description } : {}),
            required_in_portal: field.required_in_portal === true,
            ...(options && options.length > 0
              ? { options: options.map(({ name, value }) => ({ name, value: String(value) })) }
              : {}),
          };
        });
      fields = { at: Date.now(), value };
      return value;
    },

    /** Uploads one file; Zendesk's upload token (valid 3 days there) is returned. */
    async upload(file: { name: string; contentType: string; bytes: Buffer }): Promise<string> {
      const answer = await call<{ upload?: { token?: string } }>(
        `/api/v2/uploads?filename=${encodeURIComponent(file.name)}`,
        {
          method: "POST",
          headers: { "content-type": file.contentType.split(";")[0] ?? "application/binary" },
          body: new Uint8Array(file.bytes),
        },
      );
      const token = answer.upload?.token;
      if (typeof token !== "string" || token === "") {
        log.warn({ zendesk: "POST /api/v2/uploads" }, "Zendesk answered an upload without a token");
        throw new FlotillaError("something_went_wrong");
      }
      return token;
    },

    /** Creates the ticket in Zendesk; its id there is returned. */
    async createTicket(ticket: NewZendeskTicket): Promise<string> {
      const answer = await call<{ ticket?: { id?: number } }>("/api/v2/tickets", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          ticket: {
            subject: ticket.subject,
            comment: { body: ticket.body, ...(ticket.uploads.length > 0 ? { uploads: ticket.uploads } : {}) },
            requester: ticket.requester,
            priority: ticket.priority,
            ...(ticket.type ? { type: ticket.type } : {}),
            ...(ticket.emailCcs.length > 0
              ? { email_ccs: ticket.emailCcs.map((email) => ({ user_email: email, action: "put" })) }
              : {}),
            ...(ticket.customFields.length > 0 ? { custom_fields: ticket.customFields } : {}),
            external_id: `flotilla-${ticket.localId}`,
            tags: ["flotilla", `flotilla_org_${ticket.organization.id}`],
          },
        }),
      });
      const id = answer.ticket?.id;
      if (typeof id !== "number") {
        log.warn({ zendesk: "POST /api/v2/tickets" }, "Zendesk answered a ticket without an id");
        throw new FlotillaError("something_went_wrong");
      }
      return String(id);
    },
  };
}

export type ZendeskClient = ReturnType<typeof zendeskClient>;
