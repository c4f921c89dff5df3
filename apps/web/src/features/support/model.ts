import {
  SUPPORT_ATTACHMENT_LIMIT_MB,
  SUPPORT_ATTACHMENT_MAX_BYTES,
  SUPPORT_TICKET_PRIORITIES,
  type SupportTicketPriority,
} from "@flotilla/domain";
import { apiErrorCode, getStatusCode } from "../../lib/errors.ts";
import { t } from "../../lib/i18n.ts";
import { isValidEmail } from "../orgs/access.ts";
import type { SubmitTicketBody, SupportAccess, TicketField } from "./api.ts";

/**
 * What the support drawer's private-support section shows for an organization (spec 3 §2, §4
 * "Support ticket"; spec 1 §8): the check GET can-access-support decides (a "not authorized"
 * answer: no support access; any other failure: an unknown access error); a plan without private
 * support is offered an upgrade; a ticket needs an e-mail address, and a verified one.
 */
export type SupportView =
  | { kind: "loading" }
  | { kind: "no_support_access" }
  | { kind: "unknown_access_error" }
  | { kind: "no_private_support"; administrator: boolean }
  | { kind: "email_missing" }
  | { kind: "email_unverified" }
  | { kind: "ready" };

/** A "not authorized" answer: the caller may not ask about this organization. */
export function isNotAuthorized(error: unknown): boolean {
  const status = getStatusCode(error);
  const code = apiErrorCode(error);
  return status === 401 || status === 403 || status === 404 || code === "unauthorized" || code === "forbidden";
}

export function supportView(
  check: { data?: boolean; error?: unknown },
  access: { data?: SupportAccess; error?: unknown },
): SupportView {
  const failed = check.error ?? access.error;
  if (failed !== undefined && failed !== null) {
    return isNotAuthorized(failed) ? { kind: "no_support_access" } : { kind: "unknown_access_error" };
  }
  if (check.data === undefined || access.data === undefined) return { kind: "loading" };
  if (!check.data) return { kind: "no_private_support", administrator: access.data.is_administrator };
  if (!access.data.email.present) return { kind: "email_missing" };
  if (!access.data.email.verified) return { kind: "email_unverified" };
  return { kind: "ready" };
}

/** The docs search's address: the template with the encoded query; undefined for a blank query. */
export function docsSearchHref(template: string, query: string): string | undefined {
  const trimmed = query.trim();
  if (!trimmed) return undefined;
  return template.split("{query}").join(encodeURIComponent(trimmed));
}

// ---- The ticket form --------------------------------------------------------------------------

/** The system fields, sent at the top of the body keyed by their type (spec 3 §7). */
const SYSTEM_TYPES = new Set(["subject", "description", "priority"]);
/** Field types the form knows how to show; others (status, group…) are not the requester's. */
const CUSTOM_TYPES = new Set(["text", "textarea", "tagger", "integer", "decimal", "date", "checkbox", "regexp"]);

export const formFields = (fields: TicketField[]) =>
  fields.filter((field) => SYSTEM_TYPES.has(field.type) || CUSTOM_TYPES.has(field.type));

export type TicketValues = Record<string, string | boolean>;

export const fieldKey = (field: TicketField) => String(field.id);

export function initialValues(fields: TicketField[]): TicketValues {
  const values: TicketValues = {};
  for (const field of formFields(fields)) {
    values[fieldKey(field)] = field.type === "checkbox" ? false : field.type === "priority" ? "normal" : "";
  }
  return values;
}

/** The cc field's addresses: comma-separated, trimmed, blanks dropped. */
export const ccAddresses = (cc: string) =>
  cc
    .split(",")
    .map((address) => address.trim())
    .filter((address) => address !== "");

/**
 * The form's errors, by field key (and `cc`). A required field left blank is in error with a
 * blank message (spec 3 §5 "required-field messages blank"; spec decisions 15): the field is
 * marked, no text is added. Other errors have words.
 */
export function validateTicket(fields: TicketField[], values: TicketValues, cc: string): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const field of formFields(fields)) {
    const key = fieldKey(field);
    const value = values[key];
    const blank = value === undefined || value === false || (typeof value === "string" && value.trim() === "");
    if (blank) {
      if (field.required_in_portal || field.type === "subject" || field.type === "description") errors[key] = "";
      continue;
    }
    if (field.type === "integer" && typeof value === "string" && !/^-?\d{1,15}$/.test(value.trim())) {
      errors[key] = t("support.form.integer_required");
    }
  }
  const invalid = ccAddresses(cc).find((address) => !isValidEmail(address));
  if (invalid !== undefined) errors.cc = t("support.form.invalid_cc", { address: invalid });
  return errors;
}

/** The submit-ticket body (spec 3 §7): system fields by type, the others as custom_fields. */
export function ticketBody(
  fields: TicketField[],
  values: TicketValues,
  cc: string,
  uploads: string[],
): SubmitTicketBody {
  const body: SubmitTicketBody = {
    subject: "",
    comment: { body: "", uploads },
    email_ccs: ccAddresses(cc).map((user_email) => ({ user_email })),
    custom_fields: [],
  };
  for (const field of formFields(fields)) {
    const value = values[fieldKey(field)];
    if (field.type === "subject") body.subject = String(value ?? "").trim();
    else if (field.type === "description") body.comment.body = String(value ?? "").trim();
    else if (field.type === "priority") {
      if (SUPPORT_TICKET_PRIORITIES.includes(value as SupportTicketPriority)) {
        body.priority = value as SupportTicketPriority;
      }
    } else if (field.type === "checkbox") body.custom_fields.push({ id: field.id, value: value === true });
    else if (typeof value === "string" && value.trim() !== "") {
      body.custom_fields.push({ id: field.id, value: field.type === "integer" ? Number(value.trim()) : value.trim() });
    }
  }
  return body;
}

/** An attachment over 5 MB is refused before it is sent (spec 3 §5, §9; the server refuses it too). */
export const attachmentTooLarge = (file: { size: number }) => file.size > SUPPORT_ATTACHMENT_MAX_BYTES;

export const attachmentLimitText = () =>
  t("errors.support_attachment_exceed_limit", { limit: SUPPORT_ATTACHMENT_LIMIT_MB });

/**
 * The words for a failed ticket action (spec 3 §8): an attachment over the limit says so, any
 * other failure is errors.something_went_wrong — the server's text is never shown as it is.
 */
export function supportErrorText(error: unknown): string {
  const code = apiErrorCode(error);
  if (code === "support_attachment_exceed_limit" || getStatusCode(error) === 413) return attachmentLimitText();
  if (code === "support_attachment_type_not_allowed") return t("support.form.type_not_allowed");
  if (code === "no_private_support") return t("errors.no_private_support");
  return t("errors.something_went_wrong");
}

/** File sizes as people read them: "812 KB", "5.2 MB". */
export function fileSize(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.max(1, Math.round(bytes / 1024))} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
