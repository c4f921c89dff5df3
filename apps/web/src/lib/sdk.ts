import { APP_VERSION } from "@flotilla/domain";
import { type BalenaSDK, getSdk } from "balena-sdk";
import type { RuntimeConfig } from "./config.ts";
import { type Connectivity, createRequestLayer } from "./request-layer.ts";
import { noteThrottled } from "./throttle-notice.ts";

export type Sdk = BalenaSDK;

/**
 * How the dashboard identifies itself (spec 1 §9: app version 31.1.1). It rides on the header
 * the SDK already sends to the API and CORS allows: `X-Balena-Client: balena-sdk/23.x flotilla-dashboard/31.1.1`.
 */
export const CLIENT_ID = `flotilla-dashboard/${APP_VERSION}`;

export function withClientId(header: string | undefined): string {
  if (!header) return CLIENT_ID;
  return header.includes(CLIENT_ID) ? header : `${header} ${CLIENT_ID}`;
}

/**
 * The one balena-sdk instance of the page, talking to the API named by `/config.json`. The
 * session token lives in localStorage (key `balena-token`), so it survives reloads and is shared
 * by the tabs. (`dataDirectory: false` would NOT do that: in the browser it selects an in-memory
 * store, so it is left unset.) Every request goes through the request layer: ≤ 350 in flight,
 * 429 retried, GETs held while offline.
 */
export function createSdk(config: RuntimeConfig, connectivity: Connectivity): Sdk {
  const sdk = getSdk({
    apiUrl: config.apiUrl,
    dashboardUrl: config.publicUrl,
    isBrowser: true,
    // Builds from a URL (release.createFromUrl, deploy with a button) go to this API's
    // POST /v3/buildFromUrl, not to balena's cloud builder.
    builderUrl: config.apiUrl,
    ...(config.deviceUrlsBaseDomain ? { deviceUrlsBase: config.deviceUrlsBaseDomain } : {}),
    // The request layer retries 429s itself (also those without Retry-After).
    retryRateLimitedRequests: false,
  });
  const send = sdk.request.send.bind(sdk.request);
  sdk.request.send = createRequestLayer(send, {
    connectivity,
    onRateLimited: noteThrottled,
  }) as typeof sdk.request.send;
  // Runs after the SDK's own interceptor, which sets X-Balena-Client on API requests.
  sdk.interceptors.push({
    request(request) {
      const headers = request.headers as Record<string, string> | undefined;
      if (headers?.["X-Balena-Client"]) headers["X-Balena-Client"] = withClientId(headers["X-Balena-Client"]);
      return request;
    },
  });
  return sdk;
}
