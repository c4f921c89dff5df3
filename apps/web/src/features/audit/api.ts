import type { Sdk } from "../../lib/sdk.ts";
import type { AuditPage } from "./model.ts";

/**
 * The audit log's read API under the API origin, through the SDK's request layer (bearer token,
 * the in-flight cap, 429 retries), as the billing calls go.
 */
export function auditApi(sdk: Sdk, apiUrl: string) {
  const base = (orgId: number) => `/audit/v1/organizations/${orgId}/entries`;
  return {
    list: async (orgId: number, query: URLSearchParams): Promise<AuditPage> =>
      (await sdk.request.send({ method: "GET", url: `${base(orgId)}?${query}`, baseUrl: apiUrl })).body as AuditPage,
    /** The same filters as CSV (the server streams at most 100,000 rows). */
    csv: async (orgId: number, query: URLSearchParams): Promise<Blob> =>
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
  all: (orgId: number) => ["audit", orgId] as const,
  list: (orgId: number, query: string) => ["audit", orgId, "entries", query] as const,
};
