import { PinejsClientCore } from "pinejs-client-core";
import { notLoggedIn, type Send, storedToken } from "./api-client.ts";

/** balena-sdk's pine: `/v7` on the API, a 401 without a stored token read as "not logged in". */
export function createPine(apiUrl: string, send: Send): PinejsClientCore {
  class Pine extends PinejsClientCore {
    async _request(options: { method: string; url: string; body?: object; anonymous?: boolean }): Promise<object> {
      const authenticated = storedToken() !== null;
      try {
        return (await send({ ...options, sendToken: authenticated && !options.anonymous })).body as object;
      } catch (error) {
        const status = (error as { statusCode?: unknown }).statusCode;
        if (status === 401 && !options.anonymous && !authenticated) {
          throw notLoggedIn();
        }
        throw error;
      }
    }
  }
  return new Pine({ apiPrefix: new URL("/v7/", apiUrl).href });
}
