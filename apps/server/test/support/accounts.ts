import type { TestApp } from "../harness.ts";

/** JSON (or text) request helpers against a test app. */
export function client(t: TestApp) {
  const call = async (method: string, path: string, options: { token?: string; body?: unknown } = {}) => {
    const response = await fetch(`${t.url}${path}`, {
      method,
      headers: {
        ...(options.body === undefined ? {} : { "content-type": "application/json" }),
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const raw = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text: raw, json: json as Record<string, unknown> };
  };
  return {
    call,
    get: (path: string, token?: string) => call("GET", path, { token }),
    post: (path: string, body?: unknown, token?: string) => call("POST", path, { body, token }),
    patch: (path: string, body?: unknown, token?: string) => call("PATCH", path, { body, token }),
    del: (path: string, token?: string) => call("DELETE", path, { token }),
  };
}

/** The claims of a session token. */
export const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as Record<string, unknown>;

/** Runs `fn` as if the clock were `offsetMs` away (e.g. a session signed in 21 minutes ago). */
export async function withClockOffset<T>(offsetMs: number, fn: () => Promise<T>): Promise<T> {
  const realNow = Date.now;
  Date.now = () => realNow() + offsetMs;
  try {
    return await fn();
  } finally {
    Date.now = realNow;
  }
}

export const MINUTE = 60 * 1000;
