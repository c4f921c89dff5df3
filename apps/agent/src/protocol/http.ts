import type { Readable } from "node:stream";
import { Agent, type Dispatcher, request } from "undici";

/**
 * One keep-alive connection pool per process, shared by every device of it: 1,000 simulated
 * devices reuse a bounded number of sockets instead of opening their own. Long log-stream
 * requests get a pool of their own so they never hold the sockets short calls need.
 */
export type Http = {
  calls: Dispatcher;
  streams: Dispatcher;
  close(): Promise<void>;
};

export function createHttp(options: { connections?: number; streamConnections?: number } = {}): Http {
  const calls = new Agent({
    connections: options.connections ?? 32,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const streams = new Agent({
    connections: options.streamConnections ?? 256,
    keepAliveTimeout: 10_000,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  return {
    calls,
    streams,
    async close() {
      await Promise.allSettled([calls.close(), streams.close()]);
    },
  };
}

/** An answer of the API that the agent did not expect, or an API it could not reach (status 0). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null = null,
    readonly body = "",
    /** From `Retry-After` (429, 503): how long the API asks the client to wait. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export type Answer = { status: number; headers: Record<string, string | undefined>; text: string };

export type CallOptions = {
  method: "GET" | "POST" | "PATCH";
  path: string;
  token: string;
  json?: unknown;
  headers?: Record<string, string>;
  body?: Readable;
  dispatcher?: Dispatcher;
};

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** One request to the API; network failures become `ApiError` with status 0 and a readable reason. */
export async function call(http: Http, apiUrl: string, options: CallOptions): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, ...options.headers };
  let body: string | Readable | undefined = options.body;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.json);
  }
  try {
    const response = await request(new URL(options.path, apiUrl), {
      method: options.method,
      headers,
      body,
      dispatcher: options.dispatcher ?? http.calls,
    });
    const text = await response.body.text();
    const flat: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(response.headers)) flat[name] = header(value);
    return { status: response.statusCode, headers: flat, text };
  } catch (error) {
    throw new ApiError(`cannot reach ${apiUrl}: ${describe(error)}`, 0);
  }
}

export function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === "string" && !message.includes(code) ? `${code} ${message}`.trim() : message;
}

/** The error an unexpected answer stands for: the server's text body (or `message`) and its error key. */
export function unexpected(what: string, answer: Answer): ApiError {
  let detail = answer.text.trim().slice(0, 500);
  try {
    const parsed = JSON.parse(detail) as unknown;
    if (parsed && typeof parsed === "object" && "message" in parsed) detail = String(parsed.message);
  } catch {
    // a text body, as /device/* answers
  }
  const code = answer.headers["x-flotilla-error-code"] ?? null;
  const retryAfter = Number(answer.headers["retry-after"]);
  return new ApiError(
    `${what} failed: ${answer.status}${detail ? ` ${detail}` : ""}${code ? ` (${code})` : ""}`,
    answer.status,
    code,
    answer.text,
    Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1000 : null,
  );
}
