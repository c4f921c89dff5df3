import type { Sdk } from "../../lib/sdk.ts";
import type { AuditPage } from "./model.ts";

/**
 * The audit log's read API under the API origin, through the SDK's request layer (bearer token,
 * the in-flight cap, 429 retries), as the billing calls go.
 */
export function auditApi(sdk: Sdk, apiUrl: string) {
  /** An organization's log, or every organization's (`undefined`: platform administrators). */
  const base = (orgId: number | undefined) =>
    orgId === undefined ? "/audit/v1/entries" : `/audit/v1/organizations/${orgId}/entries`;
  return {
    list: async (orgId: number | undefined, query: URLSearchParams): Promise<AuditPage> =>
      (await sdk.request.send({ method: "GET", url: `${base(orgId)}?${query}`, baseUrl: apiUrl })).body as AuditPage,
    /** The same filters as CSV (the server streams at most 100,000 rows). */
    csv: async (orgId: number | undefined, query: URLSearchParams): Promise<Blob> =>
      (
        await sdk.request.send({
          method: "GET",
          url: `${base(orgId)}.csv?${query}`,
          baseUrl: apiUrl,
          responseFormat: "blob",
        })
      ).body as Blob,
  };
}

export const auditKeys = {
  all: (orgId: number | undefined) => ["audit", orgId ?? "platform"] as const,
  list: (orgId: number | undefined, query: string) => ["audit", orgId ?? "platform", "entries", query] as const,
};
