import { getSdk } from "balena-sdk";
import type { RuntimeConfig } from "./config.ts";
import { type Connectivity, createRequestLayer } from "./request-layer.ts";
import { type Sdk, withClientId } from "./sdk.ts";
import { noteThrottled } from "./throttle-notice.ts";

/**
 * The balena-sdk instance itself, in its own chunk (with balena-request, pinejs-client and their
 * dependencies, about half of the dashboard's JavaScript): lib/sdk.ts loads it on the first call
 * that needs it, so the login page does not wait for it.
 */
export function createBalenaSdk(config: RuntimeConfig, connectivity: Connectivity): Sdk {
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
