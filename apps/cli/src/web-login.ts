import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { CliError } from "./errors.ts";

/**
 * The CLI half of the browser login (the dashboard's `/login/cli/{callback}` page, spec 1 §2.3):
 * a one-off HTTP server on 127.0.0.1 and a free port waits at an unguessable path for the
 * session token, which the page posts as the form field `token`. Only a POST body is read: a
 * token in a URL lands in browser history and logs, so a `?token=` is refused (405) and never
 * taken (security review 3). Each token is checked with `verify` before it is taken; a refused
 * one leaves the server waiting.
 */

export const WEB_LOGIN_TIMEOUT_MS = 5 * 60_000;
const MAX_BODY_BYTES = 16 * 1024;

export interface WebLogin {
  /** Where the dashboard sends the token: `http://127.0.0.1:{port}/auth/{nonce}`. */
  callbackUrl: string;
  /** The verified token (and whatever `verify` said about it), once it arrives. */
  token: Promise<{ token: string; who: string }>;
  close(): void;
}

/** The dashboard page that asks the user to hand a token to `callbackUrl`. */
export function dashboardLoginUrl(dashboardUrl: string, callbackUrl: string): string {
  return `${dashboardUrl.replace(/\/+$/, "")}/login/cli/${encodeURIComponent(callbackUrl)}`;
}

const page = (title: string, text: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body style="font-family:system-ui,sans-serif;margin:4rem auto;max-width:32rem">` +
  `<h1 style="font-size:1.25rem">${title}</h1><p>${text}</p></body></html>`;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

async function readBody(request: http.IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Starts the callback server. `verify` answers who the token belongs to, or throws with the reason
 * it is refused.
 */
export async function startWebLogin(options: {
  verify(token: string): Promise<string>;
  timeoutMs?: number;
}): Promise<WebLogin> {
  const nonce = crypto.randomBytes(16).toString("hex");
  const path = `/auth/${nonce}`;
  let settle: { resolve(value: { token: string; who: string }): void; reject(error: Error): void } | undefined;
  const token = new Promise<{ token: string; who: string }>((resolve, reject) => {
    settle = { resolve, reject };
  });
  let done = false;

  const server = http.createServer(async (request, response) => {
    const reply = (status: number, title: string, text: string) => {
      response.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      response.end(page(title, text));
    };
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== path) return reply(404, "Not found", "This address is only for the Flotilla CLI login.");
    if (request.method !== "POST") {
      response.setHeader("allow", "POST");
      return reply(405, "Not allowed", "The dashboard hands the token over in a POST; this CLI takes it no other way.");
    }
    const body = await readBody(request);
    if (body === undefined) return reply(413, "Too large", "The request is too large.");
    const received = new URLSearchParams(body).get("token");
    if (!received) return reply(400, "No token", "The request carried no token.");
    const candidate = received;
    if (done) return reply(409, "Already logged in", "The CLI has already received a token.");
    try {
      const who = await options.verify(candidate);
      done = true;
      response.once("finish", () => settle?.resolve({ token: candidate, who }));
      reply(200, "Logged in", `The Flotilla CLI is logged in as ${escapeHtml(who)}. You can close this window.`);
    } catch (error) {
      reply(401, "Not accepted", `The token was not accepted: ${escapeHtml((error as Error).message)}`);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  const timer = setTimeout(() => {
    const minutes = Math.round((options.timeoutMs ?? WEB_LOGIN_TIMEOUT_MS) / 60_000);
    settle?.reject(new CliError(`No login arrived from the browser within ${minutes} minutes`));
  }, options.timeoutMs ?? WEB_LOGIN_TIMEOUT_MS);
  const close = () => {
    clearTimeout(timer);
    server.close();
    server.closeIdleConnections();
    server.unref();
  };
  token.then(close, close);
  return { callbackUrl: `http://127.0.0.1:${port}${path}`, token, close };
}
