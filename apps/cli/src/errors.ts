/**
 * A problem the user can act on (not logged in, fleet not found, a bad project, the server's
 * refusal): printed as one line, without a stack. `exitCode` 1 unless said otherwise.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** Bad usage (unknown command or option, missing argument): exit code 2, the usage follows. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2);
    this.name = "UsageError";
  }
}

type SdkLikeError = Error & { code?: unknown; statusCode?: unknown; body?: unknown; application?: unknown };

/** The server's text in an error body: `{message}` JSON, or a short plain-text body. */
export function serverMessage(body: unknown): string | undefined {
  if (body && typeof body === "object") {
    const message = (body as { message?: unknown; error?: unknown }).message;
    if (typeof message === "string" && message) return message;
    const error = (body as { error?: unknown }).error;
    if (typeof error === "string" && error) return error;
    return undefined;
  }
  if (typeof body === "string" && body.trim()) {
    const text = body.trim();
    try {
      return serverMessage(JSON.parse(text)) ?? text.slice(0, 500);
    } catch {
      return text.slice(0, 500);
    }
  }
  return undefined;
}

const NETWORK_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH"]);

/** The network error code under a failed fetch (`fetch failed` → cause → `ECONNREFUSED`). */
function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * One line for an error thrown by balena-sdk, fetch or our own code, in the CLI's words
 * (fleets, not applications). `apiUrl` names the server in connection errors.
 */
export function describeError(error: unknown, apiUrl?: string): string {
  if (error instanceof CliError) return error.message;
  const e = error as SdkLikeError;
  const network = networkCode(error);
  if (network) return `Cannot reach the API${apiUrl ? ` at ${apiUrl}` : ""} (${network})`;
  switch (e?.code) {
    case "BalenaNotLoggedIn":
    case "BalenaExpiredToken":
      return "Not logged in, or the session expired: run flotilla login";
    case "BalenaInvalidLoginCredentials":
      return "Wrong email or password.";
    case "BalenaTooManyRequests":
      return "Too many requests: wait a minute and try again.";
    case "BalenaApplicationNotFound":
      return `Fleet not found: ${String(e.application ?? "")}`;
    case "BalenaAmbiguousApplication":
      return `${String(e.application ?? "This fleet")} matches several fleets: name it as organization/fleet`;
    case "BalenaReleaseAssetAlreadyExists":
      return e.message;
    case "BalenaRequestError": {
      if (e.statusCode === 401) return "Not logged in, or the session expired: run flotilla login";
      const message = serverMessage(e.body);
      return message ? `${message} (HTTP ${String(e.statusCode)})` : `The API answered HTTP ${String(e.statusCode)}`;
    }
  }
  if (error instanceof Error && error.message === "fetch failed" && error.cause instanceof Error) {
    return `Cannot reach the API${apiUrl ? ` at ${apiUrl}` : ""} (${error.cause.message})`;
  }
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
