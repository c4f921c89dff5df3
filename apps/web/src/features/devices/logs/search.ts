import type { Sdk } from "../../../lib/sdk.ts";

/** A stored line as `GET /logs/v1/search` answers it (docs/logs.md). */
export interface FoundLogLine {
  id: number;
  /** The device's uuid. */
  device: string;
  message: string;
  /** When the device logged it (its clock; kept as sent, also for lines uploaded after an outage). */
  timestamp: number;
  /** When the API received it. */
  createdAt: number;
  isSystem: boolean;
  isStdErr: boolean;
  serviceId: number | null;
  serviceName: string | null;
}

export interface LogSearchPage {
  lines: FoundLogLine[];
  next: string | null;
}

/** What the search form holds; empty strings are "any". `from`/`to` are `datetime-local` values. */
export interface LogSearchForm {
  q: string;
  service: string;
  from: string;
  to: string;
}

export const EMPTY_LOG_SEARCH: LogSearchForm = { q: "", service: "", from: "", to: "" };
export const LOG_SEARCH_PAGE = 100;

/** A `datetime-local` value (the browser's zone) as ms since the epoch; undefined when empty or invalid. */
export function localTimeToMs(value: string): number | undefined {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}

/** The query string of one page of a device's or a fleet's search. */
export function logSearchQuery(
  scope: { device: string } | { fleet: number },
  form: LogSearchForm,
  before?: string | null,
): URLSearchParams {
  const query = new URLSearchParams();
  if ("device" in scope) query.set("device", scope.device);
  else query.set("fleet", String(scope.fleet));
  if (form.q.trim()) query.set("q", form.q.trim());
  if (form.service) query.set("service", form.service);
  const from = localTimeToMs(form.from);
  const to = localTimeToMs(form.to);
  if (from !== undefined) query.set("from", String(from));
  if (to !== undefined) query.set("to", String(to));
  query.set("limit", String(LOG_SEARCH_PAGE));
  if (before) query.set("before", before);
  return query;
}

/** Log search and retention under the API origin, through the SDK's request layer (bearer token, 429 retries). */
export function logSearchApi(sdk: Sdk, apiUrl: string) {
  return {
    search: async (query: URLSearchParams): Promise<LogSearchPage> =>
      (await sdk.request.send({ method: "GET", url: `/logs/v1/search?${query}`, baseUrl: apiUrl }))
        .body as LogSearchPage,
    retention: async (orgId: number): Promise<LogRetention> =>
      (await sdk.request.send({ method: "GET", url: `/logs/v1/organizations/${orgId}/retention`, baseUrl: apiUrl }))
        .body as LogRetention,
    setRetention: async (orgId: number, body: Partial<Pick<LogRetention, "maxAgeDays" | "maxLinesPerDevice">>) =>
      (
        await sdk.request.send({
          method: "PATCH",
          url: `/logs/v1/organizations/${orgId}/retention`,
          baseUrl: apiUrl,
          body,
        })
      ).body as LogRetention,
  };
}

export interface LogRetention {
  maxAgeDays: number | null;
  maxLinesPerDevice: number | null;
  server: { maxAgeDays: number; maxLinesPerDevice: number };
}
