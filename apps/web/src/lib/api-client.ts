/**
 * The dashboard's own way to the API for what it does most: pine (`/v7`) and plain requests
 * (`request.send`), answering and failing as balena-sdk's do (balena-request's body rules,
 * balena-errors' shapes), so callers and lib/errors.ts see no difference. The SDK itself (a
 * third of the first signed-in page's JavaScript, issue performance-2) then loads only for the
 * `models` helpers a page calls.
 */

export interface SendOptions {
  method?: string;
  url: string;
  baseUrl?: string;
  body?: unknown;
  qs?: Record<string, string | number | boolean>;
  headers?: Record<string, string>;
  /** As balena-request: "json", "text", "blob" or "none"; by default the answer's content type decides. */
  responseFormat?: "json" | "text" | "blob" | "none";
  /** Send the stored token (default); pine's `anonymous` requests do not. */
  sendToken?: boolean;
}

export interface SendResult {
  statusCode: number;
  headers: Headers;
  body: unknown;
}

export type Send = (options: SendOptions) => Promise<SendResult>;

const named = (code: string, message: string, fields: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { name: code, code, ...fields });

/** balena-errors' BalenaNotLoggedIn: no stored token, or an answer that needs one. */
export const notLoggedIn = () => named("BalenaNotLoggedIn", "You have to log in");

/** balena-errors' BalenaRequestError: `Request error: {text}` with the status and the answer's headers. */
const requestError = (body: unknown, statusCode: number, responseHeaders: Headers) =>
  named("BalenaRequestError", `Request error: ${String(body)}`, { body, statusCode, responseHeaders });

/** The expiry (ms) of a JWT session token; undefined for API keys and tokens without one. */
function tokenExpiry(token: string): number | undefined {
  const payload = token.split(".")[1];
  if (!payload) return undefined;
  try {
    const { exp } = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/"))) as { exp?: unknown };
    return typeof exp === "number" ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** Where balena-sdk keeps the session token in the browser (balena-settings-storage: `balena-` + key). */
export const TOKEN_STORAGE_KEY = "balena-token";

export const storedToken = () => globalThis.localStorage?.getItem(TOKEN_STORAGE_KEY) ?? null;

/** Keeps a new session token where balena-sdk's `auth.loginWithToken` does (the login page has no SDK). */
export const storeToken = (token: string) => globalThis.localStorage?.setItem(TOKEN_STORAGE_KEY, token);

/** The text balena-request makes of a failed answer's body. */
function errorText(body: unknown): unknown {
  if (!body) return "The request was unsuccessful";
  if (typeof body === "object") {
    const record = body as Record<string, unknown>;
    const nested = (record.error as { text?: unknown } | undefined)?.text;
    if (nested != null) return nested;
    for (const key of ["message", "error"]) if (typeof record[key] === "string") return record[key];
  }
  return body;
}

async function readBody(response: Response, format: SendOptions["responseFormat"]): Promise<unknown> {
  if (format === "none") return null;
  if (format === "blob") return response.blob();
  if (
    format === "json" ||
    (format === undefined && response.headers.get("content-type")?.includes("application/json"))
  ) {
    return response.json();
  }
  return response.text();
}

/** `request.send` as balena-request does it in a browser, for the given client header. */
export function createSend(clientHeader: string): Send {
  return async (options) => {
    let url = options.baseUrl ? new URL(options.url, options.baseUrl).href : options.url;
    if (options.qs) {
      const query = new URLSearchParams(Object.entries(options.qs).map(([key, value]) => [key, String(value)]));
      url += `${url.includes("?") ? "&" : "?"}${query}`;
    }
    const headers: Record<string, string> = { "X-Balena-Client": clientHeader, ...options.headers };
    const token = options.sendToken === false ? null : storedToken();
    if (token) {
      const expiry = tokenExpiry(token);
      if (expiry !== undefined && expiry <= Date.now()) throw named("BalenaExpiredToken", "The token expired");
      headers.Authorization = `Bearer ${token}`;
    }
    let body: BodyInit | undefined;
    if (options.body instanceof FormData || options.body instanceof Blob) body = options.body;
    else if (options.body !== undefined && options.body !== null && options.body !== "") {
      body = JSON.stringify(options.body);
      headers["Content-Type"] = "application/json";
    }
    const response = await fetch(url, { method: options.method ?? "GET", headers, body });
    const answer = await readBody(response, options.responseFormat);
    if (response.status >= 400) throw requestError(errorText(answer), response.status, response.headers);
    return { statusCode: response.status, headers: response.headers, body: answer };
  };
}
