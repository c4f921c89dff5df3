import { SUPPORT_TICKET_PRIORITIES } from "@flotilla/domain";
import type { SupportTicketField } from "../../config.ts";
import { FlotillaError } from "../../errors.ts";

/**
 * The fields of the ticket form (spec 3 §3 "Support ticket": title_in_portal, type,
 * required_in_portal, options), in Zendesk's ticket-field shape. The system fields (`subject`,
 * `description`, `priority`) are sent at the top of the submit-ticket body, keyed by their type;
 * the others as `custom_fields: [{id, value}]`.
 */
export type TicketField = {
  id: number;
  type: string;
  title_in_portal: string;
  description?: string;
  required_in_portal: boolean;
  options?: { name: string; value: string }[];
};

const SYSTEM_FIELDS: TicketField[] = [
  { id: 1, type: "subject", title_in_portal: "Subject", required_in_portal: true },
  { id: 2, type: "description", title_in_portal: "Description", required_in_portal: true },
  {
    id: 3,
    type: "priority",
    title_in_portal: "Priority",
    required_in_portal: false,
    options: SUPPORT_TICKET_PRIORITIES.map((value) => ({ name: value[0]?.toUpperCase() + value.slice(1), value })),
  },
];

/** The custom field every installation has unless FLOTILLA_SUPPORT_TICKET_FIELDS says otherwise. */
const DEFAULT_CUSTOM_FIELDS: TicketField[] = [
  {
    id: 100,
    type: "text",
    title_in_portal: "Affected fleet or device",
    description: "The name of the fleet, or the UUID of the device, the problem is about.",
    required_in_portal: false,
  },
];

/** The form's fields here (no Zendesk): system fields, then the configured custom ones. */
export function localTicketFields(configured: SupportTicketField[] | undefined): TicketField[] {
  return [...SYSTEM_FIELDS, ...(configured ?? DEFAULT_CUSTOM_FIELDS)];
}

const SYSTEM_TYPES = new Set(["subject", "description", "priority", "status", "tickettype", "group", "assignee"]);

const blank = (value: unknown) =>
  value === undefined || value === null || (typeof value === "string" && value.trim() === "") || value === false;

/**
 * Checks the submitted custom fields against the form: each names a custom field of the form
 * and has a value of its type; every required custom field has a value (a required checkbox is
 * ticked). Returns them in the form's order, values normalised.
 */
export function checkCustomFields(
  fields: TicketField[],
  submitted: { id: number; value: unknown }[],
): { id: number; value: string | number | boolean | null }[] {
  const custom = fields.filter((field) => !SYSTEM_TYPES.has(field.type));
  const byId = new Map(submitted.map((entry) => [entry.id, entry.value]));
  if (byId.size !== submitted.length) throw new FlotillaError("bad_request", "custom_fields: each field is sent once");
  for (const { id } of submitted) {
    if (!custom.some((field) => field.id === id)) {
      throw new FlotillaError("bad_request", `custom_fields: unknown field ${id}`);
    }
  }
  const result: { id: number; value: string | number | boolean | null }[] = [];
  for (const field of custom) {
    const value = byId.get(field.id);
    const name = field.title_in_portal;
    if (blank(value)) {
      if (field.required_in_portal) throw new FlotillaError("bad_request", `custom_fields: ${name} is required`);
      if (value !== undefined) result.push({ id: field.id, value: field.type === "checkbox" ? false : null });
      continue;
    }
    result.push({ id: field.id, value: fieldValue(field, value) });
  }
  return result;
}

function fieldValue(field: TicketField, value: unknown): string | number | boolean {
  const wrong = (what: string) =>
    new FlotillaError("bad_request", `custom_fields: ${field.title_in_portal} must be ${what}`);
  switch (field.type) {
    case "checkbox":
      if (typeof value !== "boolean") throw wrong("true or false");
      return value;
    case "integer": {
      const number = typeof value === "string" && /^-?\d{1,15}$/.test(value.trim()) ? Number(value) : value;
      if (typeof number !== "number" || !Number.isSafeInteger(number)) throw wrong("a whole number");
      return number;
    }
    case "date":
      if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(value))) {
        throw wrong("a date (YYYY-MM-DD)");
      }
      return value;
    case "tagger":
      if (typeof value !== "string" || !field.options?.some((option) => option.value === value)) {
        throw wrong(`one of ${(field.options ?? []).map((option) => option.value).join(", ")}`);
      }
      return value;
    default:
      if (typeof value !== "string" && typeof value !== "number") throw wrong("text");
      if (String(value).length > 10_000) throw wrong("at most 10000 characters");
      return String(value).trim();
  }
}

/**
 * A field of the form as the requester filled it (the ticket's `form`, shown to staff): its
 * title, type and whether it was required, the value sent (null when left blank) and the value
 * as a person reads it (an option's name, Yes/No for a checkbox).
 */
export type FilledField = {
  id: number;
  type: string;
  title: string;
  required: boolean;
  value: string | number | boolean | null;
  display: string | null;
};

/** The value of a field as a person reads it; null when blank. */
function displayOf(field: TicketField, value: string | number | boolean | null | undefined): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value === "boolean") return value ? "Yes" : "No";
  const option = field.options?.find((candidate) => candidate.value === value);
  return option ? option.name : String(value);
}

/**
 * Every field of the form, in its order, with what the requester filled in: the system fields
 * from the ticket's own columns (`priority` undefined: not chosen), the custom ones from the
 * checked `custom_fields` (checkCustomFields).
 */
export function filledForm(
  fields: TicketField[],
  filled: {
    subject: string;
    description: string;
    priority: string | undefined;
    type?: string | undefined;
    custom: { id: number; value: string | number | boolean | null }[];
  },
): FilledField[] {
  const custom = new Map(filled.custom.map((entry) => [entry.id, entry.value]));
  return fields.map((field) => {
    let value: string | number | boolean | null | undefined;
    if (field.type === "subject") value = filled.subject;
    else if (field.type === "description") value = filled.description;
    else if (field.type === "priority") value = filled.priority;
    else if (field.type === "tickettype") value = filled.type;
    else if (SYSTEM_TYPES.has(field.type)) value = undefined;
    else value = custom.get(field.id);
    return {
      id: field.id,
      type: field.type,
      title: field.title_in_portal,
      required: field.required_in_portal,
      value: value === undefined || value === "" ? null : value,
      display: displayOf(field, value),
    };
  });
}
