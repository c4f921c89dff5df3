import {
  ERROR_MESSAGE_MAX_LENGTH,
  ERROR_PARAMS_HEADER,
  errorCatalogue,
  formatErrorText,
  hasBalenaWords,
} from "@flotilla/domain";
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

/** The `message` (or `error`) string of an object body, as balena-request would read it. */
function objectMessage(body: unknown): string {
  if (typeof body !== "object" || body === null) return "";
  const { message, error } = body as { message?: unknown; error?: unknown };
  const text = typeof message === "string" ? message : typeof error === "string" ? error : "";
  return text ? detail(text) : "";
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
  return (
    code === "BalenaNotLoggedIn" ||
    code === "BalenaExpiredToken" ||
    code === "BalenaMalformedToken" ||
    isNotLoggedIn(error)
  );
}

/** The SDK's "not logged in", or the API's (a write sent without a token): "You have to log in." (spec 1 §8). */
export function isNotLoggedIn(error: unknown): boolean {
  return getErrorCode(error) === "BalenaNotLoggedIn" || apiErrorCode(error) === "not_logged_in";
}

/** "Not reported" errors (spec 1 §8): the page handles them, no toast is shown. */
export function isUnreportedError(error: unknown): boolean {
  const code = getErrorCode(error) ?? "";
  return (
    isNetworkError(error) ||
    getStatusCode(error) === 404 ||
    /^Balena(Organization|Application|Device|Release)NotFound$/.test(code) ||
    code === "BalenaInvalidLoginCredentials" ||
    isNotLoggedIn(error) ||
    code === REAUTH_CANCELLED_CODE
  );
}

/** The header in which every API error names its catalogue code (packages/domain errors.ts). */
export const API_ERROR_CODE_HEADER = "x-flotilla-error-code";

/**
 * The catalogue code of an API answer: the account calls keep it (`apiCode`), the SDK's request
 * errors keep the answer's headers (balena-errors' BalenaRequestError `responseHeaders`).
 */
export function apiErrorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { apiCode, responseHeaders } = error as { apiCode?: unknown; responseHeaders?: unknown };
  if (typeof apiCode === "string" && apiCode) return apiCode;
  const headers = responseHeaders as { get?: (name: string) => string | null } | undefined;
  const code = typeof headers?.get === "function" ? headers.get(API_ERROR_CODE_HEADER) : null;
  return code || undefined;
}

/**
 * The params of an API error's catalogue text (ERROR_PARAMS_HEADER, URI-encoded JSON), from the
 * SDK's request errors (`responseHeaders`) or a plain answer's (`params`, responseError below).
 */
export function apiErrorParams(error: unknown): Record<string, string | number> {
  if (typeof error !== "object" || error === null) return {};
  const { params, responseHeaders } = error as { params?: unknown; responseHeaders?: unknown };
  if (typeof params === "object" && params !== null) return params as Record<string, string | number>;
  const headers = responseHeaders as { get?: (name: string) => string | null } | undefined;
  const raw = typeof headers?.get === "function" ? headers.get(ERROR_PARAMS_HEADER) : null;
  if (!raw) return {};
  try {
    const parsed: unknown = JSON.parse(decodeURIComponent(raw));
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, string | number>) : {};
  } catch {
    return {};
  }
}

/**
 * API codes whose words for a person are the dashboard's catalogue text (spec 1 §8, spec 2 §8),
 * not the server's short form ("code invalid") or a database rule ("It is necessary that…").
 * Any other code shows the server's text, which is the catalogue's.
 */
const CODE_TEXTS = {
  not_logged_in: "errors.not_logged_in",
  session_expired: "errors.session_expired",
  token_expired: "errors.token_expired",
  invalid_login_credentials: "errors.invalid_login_credentials",
  too_many_requests: "errors.too_many_requests",
  not_found: "errors.resource_not_found",
  internal_error: "errors.unexpected",
  service_unavailable: "errors.unexpected",
  invalid_password: "errors.invalid_password",
  two_factor_code_required: "errors.two_factor_1",
  two_factor_code_invalid: "errors.two_factor_2",
  reset_code_expired: "errors.two_factor_3",
  reset_code_invalid: "errors.two_factor_4",
  invitation_invalid: "errors.invitation_invalid",
  email_verification_invalid: "errors.verification_link_invalid",
  organization_membership_required: "errors.organization_membership_required",
  device_must_be_online: "errors.device_must_be_online",
  device_must_be_offline: "errors.device_must_be_offline",
  diagnostics_state_invalid: "errors.diagnostics_state_invalid",
  device_update_required: "errors.update_required",
  support_portal_not_configured: "errors.support_portal_not_configured",
} as const satisfies Record<string, Parameters<typeof t>[0]>;

/** Sentences that are the data model's rules or a serialised object: never shown as they are. */
const RAW_TEXT = /^it is necessary that|\[object object\]/i;
/** The data API's not-null refusal, in pinejs's words. */
const NOT_NULL = /^"([^"]+)" must not be null\.?$/;
/** What the supervisor relay says of a device it cannot reach (spec 2 §8: shown unwrapped). */
const NO_ONLINE_DEVICE = /^no online device\(s\) found\.?$/i;

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
  const body = typeof e.body === "string" ? htmlToText(e.body) : "";
  if (NO_ONLINE_DEVICE.test(body)) return t("errors.device_must_be_online");
  const apiCode = apiErrorCode(error);
  if (apiCode !== undefined && status !== undefined) {
    if (apiCode in CODE_TEXTS) return t(CODE_TEXTS[apiCode as keyof typeof CODE_TEXTS]);
    // The API words these as balena does (what its clients match on); people read the spec's text.
    if (hasBalenaWords(apiCode)) return formatErrorText(errorCatalogue[apiCode].text, apiErrorParams(error));
    if (status >= 500) return t("errors.unexpected");
    // A database rule's words ('"key_hash" must not be null.') name the field for a person.
    const missing = NOT_NULL.exec(body);
    if (missing) return t("errors.value_missing", { field: (missing[1] ?? "").replace(/_+/g, " ") });
    // Other codes: the server's text is the catalogue's (spec 1 §8), shown as it is.
    if (body && !RAW_TEXT.test(body)) return body;
    return t("errors.generic");
  }
  if (status !== undefined && status >= 500) return t("errors.unexpected");
  if (status !== undefined) {
    // An object body (no message in it) or a data rule is no text for a person.
    const text = typeof e.body === "string" ? detail(e.body) : objectMessage(e.body);
    return text && !RAW_TEXT.test(text) ? t("errors.request", { body: text }) : t("errors.generic");
  }
  if (isNetworkError(error)) return t("errors.network");
  if (typeof e.message === "string") {
    // A request error's message re-thrown as a plain Error keeps only its body.
    const message = detail(e.message.replace(/^Request error: /, ""));
    if (message && !RAW_TEXT.test(message)) return t("errors.message", { message });
  }
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

/** A failed answer of a plain `fetch` to the API, shaped like the SDK's request errors. */
export interface ApiAnswerError {
  statusCode: number;
  apiCode: string | undefined;
  body: string;
  /** The catalogue text's params (ERROR_PARAMS_HEADER), for the codes the dashboard words itself. */
  params: Record<string, string | number>;
}

/**
 * The error of a failed `fetch` answer, for `errorText`: its status, its catalogue code (header or
 * JSON `code`) and its text (JSON `message` or the plain body). Pages never show the body as it is.
 */
export async function responseError(response: Response): Promise<ApiAnswerError> {
  const text = await response.text().catch(() => "");
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  const fields = (typeof json === "object" && json !== null ? json : {}) as { code?: unknown; message?: unknown };
  const header = response.headers.get(API_ERROR_CODE_HEADER);
  return {
    statusCode: response.status,
    apiCode: header || (typeof fields.code === "string" ? fields.code : undefined),
    body: typeof fields.message === "string" ? fields.message : json === undefined ? text : "",
    params: apiErrorParams({ responseHeaders: response.headers }),
  };
}
