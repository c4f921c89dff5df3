/**
 * The webhooks page's pure parts (docs/audit-and-webhooks.md "Webhooks"): the shapes the server
 * sends, the form and its body, the server's field errors, and what a delivery row shows.
 */

export interface Webhook {
  id: number;
  created_at: string;
  organization: number;
  url: string;
  description: string;
  events: string[];
  /** null: every fleet of the organization. */
  fleets: number[] | null;
  is_enabled: boolean;
  consecutive_failures: number;
  /** Why the server disabled it (repeated failures); null when a person did, or it is enabled. */
  disabled_reason: string | null;
}

export interface DeliveryAttempt {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
}

export interface Delivery {
  id: number;
  created_at: string;
  event: string;
  /** pending (queued or waiting for a retry), delivered, failed (given up). */
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
  log: DeliveryAttempt[];
}

export interface WebhookForm {
  url: string;
  events: string[];
  /** Fleet ids; empty: every fleet. */
  fleets: number[];
  description: string;
}

export const EMPTY_WEBHOOK_FORM: WebhookForm = { url: "", events: [], fleets: [], description: "" };

export const formOf = (webhook: Webhook): WebhookForm => ({
  url: webhook.url,
  events: [...webhook.events],
  fleets: webhook.fleets ? [...webhook.fleets] : [],
  description: webhook.description,
});

/** The create/update body: no fleets chosen means every fleet (null). */
export function webhookBody(form: WebhookForm) {
  return {
    url: form.url.trim(),
    events: form.events,
    fleets: form.fleets.length > 0 ? form.fleets : null,
    description: form.description.trim(),
  };
}

export type WebhookField = "url" | "events" | "fleets" | "description";
const FIELDS: readonly WebhookField[] = ["url", "events", "fleets", "description"];

/**
 * The server names the field first ("url: must be an http(s) URL without credentials",
 * "events.0: must be events among …"): that text goes under the field, in the server's words.
 */
export function fieldErrorOf(text: string): { field: WebhookField; message: string } | undefined {
  const match = /^([a-z_]+)(?:\.\d+)*: (.+)$/s.exec(text.trim());
  const field = match?.[1] as WebhookField | undefined;
  if (!match?.[2] || !field || !FIELDS.includes(field)) return undefined;
  return { field, message: match[2] };
}

/** What the form refuses before asking: the server checks again, and its words win. */
export function formProblems(form: WebhookForm): Partial<Record<WebhookField, "required" | "url" | "events">> {
  const problems: Partial<Record<WebhookField, "required" | "url" | "events">> = {};
  const url = form.url.trim();
  if (!url) problems.url = "required";
  else if (!/^https?:\/\/[^\s]+$/i.test(url)) problems.url = "url";
  if (form.events.length === 0) problems.events = "events";
  return problems;
}

export type DeliveryState = "delivered" | "retrying" | "queued" | "failed";

/** A pending delivery that has failed at least once is waiting for its retry. */
export function deliveryState(delivery: Pick<Delivery, "status" | "log">): DeliveryState {
  if (delivery.status === "delivered") return "delivered";
  if (delivery.status === "failed") return "failed";
  return delivery.log.length > 0 ? "retrying" : "queued";
}

/** An attempt's outcome in a few words: "HTTP 500", "HTTP 200", or the error. */
export function attemptOutcome(attempt: DeliveryAttempt): { ok: boolean; text: string } {
  const ok = attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300;
  if (attempt.status_code !== null) return { ok, text: `HTTP ${attempt.status_code}` };
  return { ok: false, text: attempt.error ?? "–" };
}

/** A response time with its unit: 87 ms, 1.2 s. */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** How long a delivery log stays fresh while it is open: retries show up within this. */
export const DELIVERY_POLL_MS = 3_000;
