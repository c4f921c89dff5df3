import type { Sdk } from "../../lib/sdk.ts";
import type { Delivery, Webhook } from "./model.ts";

/**
 * The webhook API of an organization under the API origin, through the SDK's request layer
 * (bearer token, the in-flight cap, 429 retries), as the billing calls go.
 */
export function webhooksApi(sdk: Sdk, apiUrl: string) {
  const send = async <T>(method: "GET" | "POST" | "PATCH" | "DELETE", url: string, body?: unknown): Promise<T> =>
    (await sdk.request.send({ method, url, baseUrl: apiUrl, ...(body === undefined ? {} : { body }) })).body as T;
  const base = (orgId: number) => `/webhooks/v1/organizations/${orgId}/webhooks`;
  return {
    list: async (orgId: number) => (await send<{ webhooks: Webhook[] }>("GET", base(orgId))).webhooks,
    /** The answer has the secret, this once. */
    create: (orgId: number, body: unknown) => send<Webhook & { secret: string }>("POST", base(orgId), body),
    update: (orgId: number, id: number, body: unknown) => send<Webhook>("PATCH", `${base(orgId)}/${id}`, body),
    remove: (orgId: number, id: number) => send<unknown>("DELETE", `${base(orgId)}/${id}`),
    test: (orgId: number, id: number) => send<{ delivery: number }>("POST", `${base(orgId)}/${id}/test`, {}),
    deliveries: async (orgId: number, id: number) =>
      (await send<{ deliveries: Delivery[] }>("GET", `${base(orgId)}/${id}/deliveries?limit=50`)).deliveries,
  };
}

export const webhookKeys = {
  list: (orgId: number) => ["webhooks", orgId] as const,
  deliveries: (orgId: number, id: number) => ["webhooks", orgId, id, "deliveries"] as const,
};
