/**
 * The audit log page's pure parts (docs/audit-and-webhooks.md "Audit log"): the entry as the
 * server sends it, the filter form and the query it becomes, and what a row shows.
 */

export interface AuditEntry {
  id: number;
  time: string;
  actor: { user: number | null; username: string | null; api_key: number | null; api_key_name?: string | null };
  organization: number | null;
  action: string;
  target: { type: string | null; id: string | null; user: number | null };
  client_address: string | null;
  details: unknown;
}

export interface AuditPage {
  entries: AuditEntry[];
  /** The `before` of the following page; null on the last one. */
  next: number | null;
}

/** The actions an organization's entries can have, by category (the server's list). */
export const AUDIT_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  sign_in: ["succeeded", "failed"],
  membership: ["created", "role_changed", "deleted"],
  fleet_membership: ["created", "role_changed", "deleted"],
  invitation: ["created", "deleted"],
  fleet_invitation: ["created", "deleted"],
  team: ["created", "renamed", "deleted"],
  api_key: ["created", "updated", "revoked"],
  variable: ["created", "updated", "deleted"],
  release: ["finalized", "invalidated", "revalidated"],
  fleet: ["release_pinned"],
  device: ["release_pinned"],
  identity_provider: [
    "created",
    "updated",
    "deleted",
    "authorized",
    "membership_changed",
    "deauthorized",
    "account_unlinked",
  ],
  domain: ["added", "verified", "verification_failed", "removed"],
  billing: ["plan_changed", "payment_method_changed", "payment_method_removed"],
  webhook: ["created", "updated", "deleted"],
  command_run: ["started", "finished"],
  terminal_session: [],
  device_tunnel: [],
  login_as_user: [],
  global_role: ["granted", "revoked"],
};

export const AUDIT_TARGET_TYPES = [
  "organization",
  "fleet",
  "device",
  "release",
  "user",
  "api_key",
  "invitation",
  "team",
  "identity_provider",
  "domain",
  "webhook",
  "command_run",
] as const;

/** The filter form: text as typed; times as `<input type="datetime-local">` gives them, in local time. */
export interface AuditFilterForm {
  /** A user id, or "" for anyone. */
  actor: string;
  /** An exact action, a category prefix ending in "." (`variable.`), or "" for every action. */
  action: string;
  targetType: string;
  targetId: string;
  from: string;
  to: string;
}

export const EMPTY_AUDIT_FILTER: AuditFilterForm = {
  actor: "",
  action: "",
  targetType: "",
  targetId: "",
  from: "",
  to: "",
};

/** A local `yyyy-MM-ddTHH:mm` as ISO 8601 UTC; undefined when it is empty or not a time. */
export function localTimeToIso(value: string): string | undefined {
  if (!value.trim()) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** What the form asks of the server, empty fields left out; `before` pages on. */
export function auditQuery(form: AuditFilterForm, before?: number | null): URLSearchParams {
  const query = new URLSearchParams();
  const put = (name: string, value: string | undefined) => {
    const trimmed = value?.trim();
    if (trimmed) query.set(name, trimmed);
  };
  if (/^\d+$/.test(form.actor.trim())) put("actor", form.actor);
  put("action", form.action);
  put("target_type", form.targetType);
  put("target_id", form.targetId);
  put("from", localTimeToIso(form.from));
  put("to", localTimeToIso(form.to));
  if (before !== undefined && before !== null) query.set("before", String(before));
  return query;
}

/** A "to" before its "from" finds nothing: the form says so instead of asking. */
export function filterProblem(form: AuditFilterForm): "range" | undefined {
  const from = localTimeToIso(form.from);
  const to = localTimeToIso(form.to);
  return from && to && to <= from ? "range" : undefined;
}

/** "variable.created" → category "variable", verb "created"; one-part actions have no verb. */
export function actionParts(action: string): { category: string; verb: string | undefined } {
  const dot = action.indexOf(".");
  return dot < 0
    ? { category: action, verb: undefined }
    : { category: action.slice(0, dot), verb: action.slice(dot + 1) };
}

/** snake_case as words: "role_changed" → "role changed". */
export const words = (text: string) => text.replaceAll("_", " ");

/** Sentence case of snake_case: "api_key" → "Api key" (the catalogue names the known ones). */
export const sentence = (text: string) => {
  const spaced = words(text);
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
};

/** Who did it: the username (or user id), and the API key's name when a key was used. */
export function actorOf(actor: AuditEntry["actor"]): { name: string | undefined; key: string | undefined } {
  const name = actor.username ?? (actor.user !== null ? `#${actor.user}` : undefined);
  const key = actor.api_key === null ? undefined : actor.api_key_name ? actor.api_key_name : `#${actor.api_key}`;
  return { name, key };
}

export type DetailItem = { label: string; value: string };

/** A detail's value as a person reads it: lists joined, objects as key=value, nothing raw. */
function detailValue(value: unknown): string {
  if (value === null || value === undefined) return "–";
  if (Array.isArray(value)) return value.map(detailValue).join(", ");
  if (typeof value === "object") {
    return Object.entries(value as Record<string, unknown>)
      .map(([key, inner]) => `${words(key)} ${detailValue(inner)}`)
      .join(", ");
  }
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

/** A detail's name: "timeout_s" → "Timeout (s)", "retry_ms" → "Retry (ms)". */
const detailLabel = (key: string) => {
  const unit = /_(s|ms)$/.exec(key)?.[1];
  return unit ? `${sentence(key.slice(0, -unit.length - 1))} (${unit})` : sentence(key);
};

/** Details that say most about an entry come first (the database keeps JSON keys in its own order). */
const LEADING_DETAILS = ["name", "command"];

/** The details object as label/value pairs, the leading ones first, the rest in the server's order. */
export function detailItems(details: unknown): DetailItem[] {
  if (details === null || details === undefined) return [];
  if (typeof details !== "object" || Array.isArray(details)) return [{ label: "", value: detailValue(details) }];
  const entries = Object.entries(details as Record<string, unknown>);
  const lead = (key: string) => (LEADING_DETAILS.includes(key) ? 0 : 1);
  return [...entries]
    .sort(([a], [b]) => lead(a) - lead(b))
    .map(([key, value]) => ({ label: detailLabel(key), value: detailValue(value) }));
}

/** The file name of an export: the organization and the day. */
export const csvFileName = (orgId: number | undefined, now: Date) =>
  `audit-log-${orgId === undefined ? "all" : `org-${orgId}`}-${now.toISOString().slice(0, 10)}.csv`;
