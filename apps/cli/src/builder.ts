import { CliError, serverMessage } from "./errors.ts";

/**
 * The builder endpoint (docs/releases.md "The builder"): `POST {api}/v3/build?app={fleet id}`
 * with the project tar, answered by one JSON object per line until the build ends.
 */

export type BuildEvent =
  | { type: "release"; id: number; commit: string }
  | { type: "log"; message: string; service?: string }
  | { type: "status"; status: string; id?: number; commit?: string; raw_version?: string; message?: string };

/** Final statuses a build may end with; only `success` is a successful push. */
export const BUILD_FINAL_STATUSES = ["success", "failed", "error", "cancelled"] as const;

/** A single NDJSON line longer than this is refused (the builder bounds its log lines far below). */
export const NDJSON_MAX_LINE = 1024 * 1024;

/**
 * The JSON values of an NDJSON byte stream, one per line, as they arrive: a line split across
 * chunks (or a character split across them) is joined first; blank lines are skipped; the last
 * line needs no newline. An unreadable line is an error naming it.
 */
export async function* readNdjson(
  source: AsyncIterable<Uint8Array>,
  maxLine = NDJSON_MAX_LINE,
): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let pending = "";
  const parse = (line: string) => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      throw new CliError(`The builder sent a line that is not JSON: ${line.slice(0, 200)}`);
    }
  };
  for await (const chunk of source) {
    pending += decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf("\n");
    while (newline !== -1) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line) yield parse(line);
      newline = pending.indexOf("\n");
    }
    if (pending.length > maxLine) throw new CliError(`The builder sent a line longer than ${maxLine} bytes`);
  }
  pending += decoder.decode();
  const last = pending.trim();
  if (last) yield parse(last);
}

/** A build event, or undefined for a line of a kind this CLI does not know (later servers may add some). */
export function toBuildEvent(value: unknown): BuildEvent | undefined {
  if (!value || typeof value !== "object") return undefined;
  const v = value as Record<string, unknown>;
  if (v.type === "release" && typeof v.id === "number" && typeof v.commit === "string") {
    return { type: "release", id: v.id, commit: v.commit };
  }
  if (v.type === "log" && typeof v.message === "string") {
    return { type: "log", message: v.message, ...(typeof v.service === "string" ? { service: v.service } : {}) };
  }
  if (v.type === "status" && typeof v.status === "string") {
    return {
      type: "status",
      status: v.status,
      ...(typeof v.id === "number" ? { id: v.id } : {}),
      ...(typeof v.commit === "string" ? { commit: v.commit } : {}),
      ...(typeof v.raw_version === "string" ? { raw_version: v.raw_version } : {}),
      ...(typeof v.message === "string" ? { message: v.message } : {}),
    };
  }
  return undefined;
}

export interface BuildResult {
  status: string;
  releaseId?: number;
  commit?: string;
  version?: string;
}

/** "Release 1.0.0 (abc1234) created: success" */
export function summary(result: BuildResult): string {
  const version = result.version ?? "";
  const commit = result.commit ? `(${result.commit.slice(0, 7)})` : "";
  const name = [version, commit].filter(Boolean).join(" ");
  return `Release ${name || `#${result.releaseId ?? "?"}`} created: ${result.status}`;
}

export interface BuildRequest {
  apiUrl: string;
  token: string;
  fleetId: number;
  archive: Buffer;
  draft?: boolean;
  note?: string;
  signal?: AbortSignal;
  /** Each build log line as it arrives. */
  onLog(message: string): void;
  /** The release the build makes, once the builder has created it. */
  onRelease?(release: { id: number; commit: string }): void;
}

/** The URL of a build of the fleet, with its flags. */
export function buildUrl(apiUrl: string, fleetId: number, options: { draft?: boolean; note?: string } = {}): string {
  const url = new URL(`${apiUrl.replace(/\/+$/, "")}/v3/build`);
  url.searchParams.set("app", String(fleetId));
  if (options.draft) url.searchParams.set("draft", "true");
  if (options.note !== undefined) url.searchParams.set("message", options.note);
  return url.toString();
}

/**
 * Sends the project and follows the build to its end. An HTTP refusal is a CliError carrying the
 * server's message; aborting `signal` closes the request, which cancels the build on the server.
 */
export async function build(request: BuildRequest): Promise<BuildResult> {
  let response: Response;
  try {
    response = await fetch(buildUrl(request.apiUrl, request.fleetId, request), {
      method: "POST",
      headers: {
        authorization: `Bearer ${request.token}`,
        "content-type": "application/x-tar",
        accept: "application/x-ndjson",
      },
      body: request.archive,
      ...(request.signal ? { signal: request.signal } : {}),
    });
  } catch (error) {
    if (request.signal?.aborted) throw error;
    throw new CliError(`Cannot reach the API at ${request.apiUrl} (${networkText(error)})`);
  }
  if (!response.ok) {
    const text = await response.text().catch(() => "");
    if (response.status === 401) throw new CliError("Not logged in, or the session expired: run flotilla login");
    const message = serverMessage(text);
    if (response.status === 404 && !message) {
      throw new CliError(`This API has no builder (${request.apiUrl}/v3/build answered 404)`);
    }
    throw new CliError(
      message ? `${message} (HTTP ${response.status})` : `The builder answered HTTP ${response.status}`,
    );
  }
  if (!response.body) throw new CliError("The builder answered without a body");
  const result: BuildResult = { status: "" };
  for await (const value of readNdjson(response.body)) {
    const event = toBuildEvent(value);
    if (!event) continue;
    if (event.type === "release") {
      result.releaseId = event.id;
      result.commit = event.commit;
      request.onRelease?.(event);
    } else if (event.type === "log") {
      request.onLog(event.message);
    } else {
      result.status = event.status;
      if (event.id !== undefined) result.releaseId = event.id;
      if (event.commit !== undefined) result.commit = event.commit;
      if (event.raw_version !== undefined) result.version = event.raw_version;
      if (event.message) request.onLog(event.message);
    }
  }
  if (!result.status) throw new CliError("The build ended without a result: the connection to the builder was lost");
  return result;
}

function networkText(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause && typeof cause.code === "string") return cause.code;
  return (error as Error).message;
}
