import { ERROR_PARAMS_HEADER, hasBalenaWords } from "@flotilla/domain";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { FlotillaError } from "../errors.ts";

/** balena clients (pinejs-client's upsert, the supervisor) read these routes' errors as plain text. */
const TEXT_ERROR_PREFIXES = ["/v7/", "/v7?", "/device/"];

/**
 * PostgreSQL's refusals of a text it cannot store: a NUL character (`\u0000`) in a text or jsonb
 * value (22021 character_not_in_repertoire, 22P05 untranslatable_character). What a client sent,
 * so a 400, not a server failure.
 */
const UNSTORABLE_TEXT = new Set(["22021", "22P05"]);

function toFlotillaError(error: FastifyError | Error): FlotillaError {
  if (error instanceof FlotillaError) return error;
  if (UNSTORABLE_TEXT.has(String((error as { code?: unknown }).code))) {
    return new FlotillaError("bad_request", "Text cannot contain NUL characters (\\u0000).");
  }
  const fastifyError = error as FastifyError;
  const status = fastifyError.statusCode ?? 500;
  if (fastifyError.validation) return new FlotillaError("bad_request", fastifyError.message);
  switch (status) {
    case 400:
      return new FlotillaError("bad_request", fastifyError.message);
    case 404:
      return new FlotillaError("not_found");
    case 413:
      return new FlotillaError("payload_too_large");
    case 415:
      return new FlotillaError("unsupported_media_type");
    case 429:
      return new FlotillaError("too_many_requests");
    default:
      return new FlotillaError(status === 503 ? "service_unavailable" : "internal_error", undefined, { cause: error });
  }
}

/**
 * Every error names its catalogue code in this header too: under /v7 the body is only the text.
 * Its params (when it has some) go in ERROR_PARAMS_HEADER.
 */
export const ERROR_CODE_HEADER = "x-flotilla-error-code";
export { ERROR_PARAMS_HEADER };

export function sendError(request: FastifyRequest, reply: FastifyReply, error: FlotillaError) {
  reply.code(error.statusCode).headers(error.headers).header(ERROR_CODE_HEADER, error.code);
  // The dashboard words these itself (domain errors.ts `balenaWords`): it needs their params.
  if (hasBalenaWords(error.code) && Object.keys(error.params).length > 0) {
    reply.header(ERROR_PARAMS_HEADER, encodeURIComponent(JSON.stringify(error.params)));
  }
  if (TEXT_ERROR_PREFIXES.some((prefix) => request.url.startsWith(prefix))) {
    return reply.type("text/plain; charset=utf-8").send(error.message);
  }
  return reply.send({ code: error.code, ...error.extra, message: error.message });
}

/** One error handler: 4xx say what is wrong in the catalogue's words, 5xx say nothing of the internals. */
export function registerErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const flotillaError = toFlotillaError(error);
    if (flotillaError.statusCode >= 500) request.log.error({ err: error }, "request failed");
    return sendError(request, reply, flotillaError);
  });
  app.setNotFoundHandler((request, reply) => sendError(request, reply, new FlotillaError("not_found")));
}
