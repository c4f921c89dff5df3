import { FlotillaError } from "../errors.ts";
import { fromDatabaseError } from "./database-errors.ts";
import {
  executeCreate,
  executeDelete,
  executeRead,
  executeUpdate,
  type ODataContext,
  type ODataResponse,
} from "./execute.ts";
import { parseODataUrl } from "./parse.ts";

export type ODataRequest = ODataContext & {
  method: string;
  /** Path and query as received, relative to the API root or starting with `/v7/`. */
  url: string;
  /** The parsed JSON body of a POST or PATCH. */
  body?: unknown;
};

/**
 * The data API: one OData request in, one response out. Failures are thrown as `FlotillaError`
 * (the central error handler answers them as text under /v7/, which pinejs-client's upsert needs
 * for its 409); database refusals are mapped to 400/409 on the way (see `fromDatabaseError`).
 *
 * Mounted like this (test/odata/http.test.ts does exactly that):
 *   app.route({ method: ["GET", "POST", "PATCH", "DELETE"], url: "/v7/*", handler: async (request, reply) => {
 *     const response = await handleODataRequest({ db, model, permissions, hooks, actorId,
 *       method: request.method, url: request.url, body: request.body });
 *     return reply.code(response.status).headers(response.headers).send(response.body);
 *   } });
 */
export async function handleODataRequest(request: ODataRequest): Promise<ODataResponse> {
  const url = parseODataUrl(request.url);
  try {
    switch (request.method.toUpperCase()) {
      case "GET":
      case "HEAD":
        return await executeRead(request, url);
      case "POST":
        return await executeCreate(request, url, request.body);
      case "PATCH":
      case "MERGE":
        return await executeUpdate(request, url, request.body);
      case "DELETE":
        return await executeDelete(request, url);
      default:
        throw new FlotillaError("bad_request", `${request.method} is not supported on the data API`);
    }
  } catch (error) {
    throw fromDatabaseError(error, request.model, request.model.resource(url.resource)) ?? error;
  }
}
