import { ERROR_MESSAGE_MAX_LENGTH } from "@flotilla/domain";
import { CHUNK_LOAD_TIMEOUT_CODE } from "./chunk.ts";
import { t } from "./i18n.ts";
import { FAILED_QUERY_CHECK_CODE } from "./query-check.ts";

/** The fields of the SDK's errors (balena-errors) that decide the text; matched by shape, not class. */
interface ErrorFields {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  statusCode?: unknown;
  body?: unknown;
  parameterName?: unknown;
  suppliedValue?: unknown;
}

const fields = (error: unknown): ErrorFields =>
  typeof error === "object" && error !== null ? (error as ErrorFields) : {};

export { CHUNK_LOAD_TIMEOUT_CODE };

/** The user closed the re-authentication dialog: the action stops without a message. */
export const REAUTH_CANCELLED_CODE = "FlotillaReauthCancelled";

/** Reason phrases for the status codes a browser client meets. */
const REASON_PHRASES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  412: "Precondition Failed",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** Cut a text to the spec's 500-character cap. */
export function capErrorText(text: string, max = ERROR_MESSAGE_MAX_LENGTH): string {
  return text.length > max ? text.slice(0, max) : text;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity.startsWith("#x") || entity.startsWith("#X"))
      return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
    if (entity.startsWith("#")) return String.fromCodePoint(Number.parseInt(entity.slice(1), 10));
    return ENTITIES[entity.toLowerCase()] ?? whole;
  });
}

const squash = (text: string) =>
  decodeEntities(text.replace(/<[^>]*>/g, " "))
    .replace(/\s+/g, " ")
    .trim();

/**
 * A string that carries HTML (a proxy's error page, say) reduced to its error text: the page
 * title or first heading when there is one, otherwise the visible text. Plain text is kept.
 */
export function htmlToText(text: string): string {
  if (!/<\/?[a-z!][^>]*>/i.test(text)) return text.trim();
  for (const tag of ["title", "h1"]) {
    const match = new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, "i").exec(text);
    const inner = match?.[1] ? squash(match[1]) : "";
    if (inner) return inner;
  }
  return squash(text.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, " "));
}

/** The text of a message without its final full stop (the templates add their own). */
const detail = (value: unknown) => htmlToText(String(value)).replace(/\.+$/, "");

export function getStatusCode(error: unknown): number | undefined {
  const { statusCode } = fields(error);
  return typeof statusCode === "number" && Number.isInteger(statusCode) ? statusCode : undefined;
}

export function getErrorCode(error: unknown): string | undefined {
  const { code } = fields(error);
  return typeof code === "string" ? code : undefined;
}

/** A request that never got an answer: fetch's TypeError, balena-request's timeout. */
export function isNetworkError(error: unknown): boolean {
  if (getStatusCode(error) !== undefined) return false;
  if (error instanceof TypeError) return true;
  const { message } = fields(error);
  return typeof message === "string" && /^(network timeout|failed to fetch|networkerror|load failed)/i.test(message);
}

/** Errors that mean the session is gone: the app logs out (spec 1 §8). */
export function isAuthError(error: unknown): boolean {
  const code = getErrorCode(error);
  return code === "BalenaNotLoggedIn" || code === "BalenaExpiredToken" || code === "BalenaMalformedToken";
}

/** "Not reported" errors (spec 1 §8): the page handles them, no toast is shown. */
export function isUnreportedError(error: unknown): boolean {
  const code = getErrorCode(error) ?? "";
  return (
    isNetworkError(error) ||
    getStatusCode(error) === 404 ||
    /^Balena(Organization|Application|Device|Release)NotFound$/.test(code) ||
    code === "BalenaInvalidLoginCredentials" ||
    code === "BalenaNotLoggedIn" ||
    code === REAUTH_CANCELLED_CODE
  );
}

/**
 * The user-facing text of an error (spec 1 §8): known SDK errors get their catalogue text,
 * server failures the generic fallback, request errors "Request error: {body}.", other thrown
 * errors "Error: {message}.", and anything else "An error has occurred". HTML is reduced to
 * text and the result is cut to 500 characters.
 */
export function errorText(error: unknown): string {
  return capErrorText(uncappedErrorText(error));
}

function uncappedErrorText(error: unknown): string {
  if (error === null || error === undefined) return t("errors.generic");
  if (typeof error === "string") {
    const message = detail(error);
    return message ? t("errors.message", { message }) : t("errors.generic");
  }
  const e = fields(error);
  const status = getStatusCode(error);
  switch (getErrorCode(error)) {
    case "BalenaInvalidLoginCredentials":
      return t("errors.invalid_login_credentials");
    case "BalenaNotLoggedIn":
      return t("errors.not_logged_in");
    case "BalenaExpiredToken":
      return t("errors.token_expired");
    case "BalenaTooManyRequests":
      return t("errors.too_many_requests");
    case "BalenaInvalidParameterError":
      return t("errors.invalid_parameter", {
        suppliedValue: typeof e.suppliedValue === "string" ? e.suppliedValue : JSON.stringify(e.suppliedValue),
        parameterName: String(e.parameterName),
      });
    case CHUNK_LOAD_TIMEOUT_CODE:
      return t("errors.chunk_load_timeout");
    case FAILED_QUERY_CHECK_CODE:
      return t("errors.failed_query_check");
  }
  if (status === 429) return t("errors.too_many_requests");
  if (isUpdateRequired(error)) return t("errors.update_required");
  if (status !== undefined && status >= 500) return t("errors.unexpected");
  // An answer with an error code carries its catalogue text: shown as it is (spec 1 §8).
  const apiCode = (error as { apiCode?: unknown }).apiCode;
  if (status !== undefined && typeof apiCode === "string" && typeof e.body === "string" && htmlToText(e.body)) {
    return htmlToText(e.body);
  }
  if (status !== undefined) {
    const body =
      e.body === undefined || e.body === null
        ? ""
        : detail(typeof e.body === "string" ? e.body : JSON.stringify(e.body));
    return body ? t("errors.request", { body }) : t("errors.generic");
  }
  if (isNetworkError(error)) return t("errors.network");
  if (typeof e.message === "string" && detail(e.message)) return t("errors.message", { message: detail(e.message) });
  return t("errors.generic");
}

/**
 * A 400 whose body says `{"error": "updateRequired"}`: the device must be updated first (spec 1 §8).
 * balena-sdk passes the body's `error` on as the error's body, plain requests the body itself.
 */
export function isUpdateRequired(error: unknown): boolean {
  return getStatusCode(error) === 400 && updateRequired((error as { body?: unknown } | null)?.body);
}

function updateRequired(body: unknown): boolean {
  if (body === "updateRequired") return true;
  let parsed = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      return false;
    }
  }
  return typeof parsed === "object" && parsed !== null && (parsed as { error?: unknown }).error === "updateRequired";
}

/**
 * The status text of a failure for the error page: "503 Service Unavailable" for an HTTP
 * answer, otherwise the error's own message (HTML reduced, capped).
 */
export function statusText(error: unknown): string {
  const status = getStatusCode(error);
  if (status !== undefined) return `${status} ${REASON_PHRASES[status] ?? ""}`.trim();
  if (getErrorCode(error) === CHUNK_LOAD_TIMEOUT_CODE) return t("errors.chunk_load_timeout");
  if (getErrorCode(error) === FAILED_QUERY_CHECK_CODE) return t("errors.failed_query_check");
  const message = typeof error === "string" ? error : fields(error).message;
  const text = typeof message === "string" ? htmlToText(message) : "";
  return capErrorText(text || t("errors.generic"));
}
