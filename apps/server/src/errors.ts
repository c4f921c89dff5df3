import { type ErrorCode, errorCatalogue, formatErrorText } from "@flotilla/domain";

/**
 * The one error type of the server. Handlers throw it; the central error handler turns it into
 * a response. `message` is what the client sees, so it must never carry internals.
 */
export class FlotillaError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  /** Further fields of the JSON error body (e.g. the two-factor `errorCode` of spec 1 §8). */
  readonly extra: Record<string, unknown>;
  /** The catalogue text's placeholders, sent in ERROR_PARAMS_HEADER for the dashboard's own words. */
  readonly params: Record<string, string | number>;

  constructor(
    code: ErrorCode,
    message?: string,
    options: {
      params?: Record<string, string | number>;
      headers?: Record<string, string>;
      extra?: Record<string, unknown>;
      cause?: unknown;
    } = {},
  ) {
    const entry = errorCatalogue[code];
    super(message ?? formatErrorText(entry.text, options.params), { cause: options.cause });
    this.name = "FlotillaError";
    this.code = code;
    this.statusCode = entry.status;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
    this.params = options.params ?? {};
  }
}

/**
 * An error worded for the API as balena words it (`balenaText`: what balena's clients match on),
 * with the spec's `params` for the dashboard's catalogue text (domain errors.ts `balenaWords`).
 */
export const inBalenaWords = (code: ErrorCode, balenaText: string, params: Record<string, string | number>) =>
  new FlotillaError(code, balenaText, { params });

export const badRequest = (message?: string) => new FlotillaError("bad_request", message);
export const notFound = (message?: string) => new FlotillaError("not_found", message);
export const unauthorized = (code: ErrorCode = "not_logged_in", message?: string) => new FlotillaError(code, message);
