import { getStatusCode } from "../../lib/errors.ts";
import type { Sdk } from "../../lib/sdk.ts";

/**
 * Account calls that have no balena-sdk method (spec 1 §7). They go straight to the API with
 * fetch, because the SDK's request errors keep only the message and these pages need the
 * answer's `code`/`errorCode` (auth_expired, the 2FA codes of password reset) and Retry-After.
 */
export class AccountApiError extends Error {
  readonly statusCode: number;
  /** The message, as the SDK's request errors carry it (errors.ts: "Request error: {body}."). */
  readonly body: string;
  readonly apiCode: string | undefined;
  readonly errorCode: number | undefined;
  readonly retryAfter: string | undefined;
  constructor(statusCode: number, body: string, apiCode?: string, errorCode?: number, retryAfter?: string) {
    super(body || `HTTP ${statusCode}`);
    this.name = "AccountApiError";
    this.statusCode = statusCode;
    this.body = body;
    this.apiCode = apiCode;
    this.errorCode = errorCode;
    this.retryAfter = retryAfter;
  }
}

export interface AccountRequest {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  body?: unknown;
  /** Send the session token (default true; password reset sends none, spec 1 §7). */
  auth?: boolean;
}

export async function accountRequest<T = unknown>(sdk: Sdk, apiUrl: string, request: AccountRequest): Promise<T> {
  const token = request.auth === false ? undefined : await sdk.auth.getToken().catch(() => undefined);
  return sendAccountRequest<T>(apiUrl, request, token);
}

/** The request itself, with the token given (none: the login page, which runs without the SDK). */
export async function sendAccountRequest<T = unknown>(
  apiUrl: string,
  request: AccountRequest,
  token?: string,
): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json, text/plain" };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${apiUrl}${request.path}`, {
    method: request.method,
    headers,
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    credentials: "omit",
  });
  const type = response.headers.get("content-type") ?? "";
  const text = await response.text();
  const json = type.includes("json") && text ? (JSON.parse(text) as unknown) : undefined;
  if (!response.ok) {
    const fields = (typeof json === "object" && json !== null ? json : {}) as Record<string, unknown>;
    const message = typeof fields.message === "string" ? fields.message : json === undefined ? text : "";
    throw new AccountApiError(
      response.status,
      message,
      typeof fields.code === "string" ? fields.code : undefined,
      typeof fields.errorCode === "number" ? fields.errorCode : undefined,
      response.headers.get("retry-after") ?? undefined,
    );
  }
  return (json ?? text) as T;
}

/** The answer of a sensitive action when the login is older than 20 minutes (spec 1 §4, §9). */
export function isAuthExpired(error: unknown): boolean {
  if (error instanceof AccountApiError) return error.apiCode === "auth_expired";
  const message = (error as { body?: unknown; message?: unknown } | null)?.body ?? "";
  return getStatusCode(error) === 403 && typeof message === "string" && /auth(entication)?[ _]expired/i.test(message);
}

export function accountApi(sdk: Sdk, apiUrl: string) {
  const call = <T = unknown>(request: AccountRequest) => accountRequest<T>(sdk, apiUrl, request);
  return {
    refreshToken: (password: string) =>
      call<string>({ method: "POST", path: "/user/v1/refresh-token", body: { password } }),
    requestVerificationEmail: () => call({ method: "POST", path: "/user/v1/verification-email" }),
    updateProfile: (profile: { first_name: string; last_name: string; company: string; account_type: string }) =>
      call({ method: "PATCH", path: "/user/profile", body: profile }),
    changePassword: (body: { currentPassword: string; password: string }) =>
      call<string>({ method: "PATCH", path: "/user/password", body }),
    changeEmail: (body: { email: string; password: string }) =>
      call<{ email: string; is_verified: boolean; must_be_verified: boolean }>({
        method: "PATCH",
        path: "/user/email",
        body,
      }),
    logout: () => call({ method: "POST", path: "/logout" }),
    logoutOthers: () => call({ method: "POST", path: "/logout-others" }),
    requestPasswordReset: (email: string, captchaResponse: string | undefined) =>
      call({
        method: "POST",
        path: `/password-reset-path/${encodeURIComponent(email)}`,
        body: { "g-recaptcha-response": captchaResponse },
        auth: false,
      }),
    resetPassword: (body: { code: string; password: string; twoFactorCode?: string }) =>
      call({ method: "POST", path: "/user/reset-password", body, auth: false }),
    twoFactorStatus: () =>
      call<{ enabled: boolean; recoveryCodesLeft: number }>({ method: "GET", path: "/user/v1/two-factor" }),
    createRecoveryCodes: () => call<string[]>({ method: "POST", path: "/auth/v1/2fa-recover/create" }),
    verifyRecoveryCode: (code: string) =>
      call<string>({ method: "POST", path: "/auth/v1/2fa-recover/verify", body: { code } }),
    /**
     * What `sdk.models.apiKey.create` sends, called directly: the SDK turns every failure into
     * "not logged in", which would hide the auth-expired answer that asks for the password again.
     */
    createApiKey: (body: { name: string; description: string | null; expiryDate: string | null }) =>
      call<string>({
        method: "POST",
        path: "/api-key/user/full",
        body: {
          name: body.name,
          expiryDate: body.expiryDate,
          ...(body.description ? { description: body.description } : {}),
        },
      }),
    importSshKeys: (url: string) =>
      call<{ added: number; skipped: number }>({ method: "POST", path: "/user/v1/ssh-keys/import", body: { url } }),
    captcha: () =>
      call<
        | { kind: "off" }
        | { kind: "pow"; challenge: string; difficulty: number }
        | { kind: "recaptcha"; siteKey?: string }
      >({ method: "GET", path: "/auth/v1/captcha", auth: false }),
  };
}

export type AccountApi = ReturnType<typeof accountApi>;
