import type { Sdk } from "../../../lib/sdk.ts";
import {
  createNdjsonSplitter,
  INITIAL_LOG_COUNT,
  type LogLine,
  logRetryDelay,
  RECONNECT_LOG_COUNT,
  toLogLine,
} from "./model.ts";

/** An HTTP failure of the log endpoints, shaped like the SDK's request errors (statusCode, body). */
export class LogRequestError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string,
  ) {
    super(body || `HTTP ${statusCode}`);
    this.name = "BalenaRequestError";
  }
}

const logsUrl = (apiUrl: string, uuid: string) => `${apiUrl}/device/v2/${encodeURIComponent(uuid)}/logs`;

export interface LogStreamOptions {
  apiUrl: string;
  uuid: string;
  token: string;
  count: number;
  signal: AbortSignal;
  /** The response arrived: the subscription is open. */
  onOpen: () => void;
  onLine: (line: LogLine) => void;
  fetchImpl?: typeof fetch;
}

/**
 * `GET /device/v2/{uuid}/logs?stream=1&count=N` read as NDJSON (what balena-sdk's
 * `logs.subscribe` does; its browser build needs Node's `events`, which the dashboard's bundle
 * does not carry, so the same request is made here). Resolves when the server ends the stream.
 */
export async function readLogStream(options: LogStreamOptions): Promise<void> {
  const fetchImpl = options.fetchImpl ?? globalThis.fetch.bind(globalThis);
  const url = `${logsUrl(options.apiUrl, options.uuid)}?stream=1&count=${options.count}`;
  const response = await fetchImpl(url, {
    headers: { Authorization: `Bearer ${options.token}`, Accept: "application/x-ndjson" },
    signal: options.signal,
    cache: "no-store",
  });
  if (!response.ok) throw new LogRequestError(response.status, (await response.text().catch(() => "")).slice(0, 500));
  options.onOpen();
  const splitter = createNdjsonSplitter((value) => {
    const line = toLogLine(value);
    if (line) options.onLine(line);
  });
  if (!response.body) {
    splitter.push(await response.text());
    splitter.end();
    return;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      splitter.push(value);
    }
    splitter.end();
  } finally {
    reader.releaseLock();
  }
}

/** `logs.history(uuid)` (spec 2 §7): the device's recent lines, oldest first. */
export async function fetchLogHistory(sdk: Sdk, apiUrl: string, uuid: string, count = INITIAL_LOG_COUNT) {
  const { body } = await sdk.request.send({
    method: "GET",
    url: `/device/v2/${encodeURIComponent(uuid)}/logs`,
    qs: { count },
    baseUrl: apiUrl,
  });
  return (Array.isArray(body) ? body : []).map(toLogLine).filter((line): line is LogLine => line !== undefined);
}

/** Clears the device's stored logs (`DELETE /device/v2/{uuid}/logs`; needs device_log.delete). */
export async function clearDeviceLogs(sdk: Sdk, apiUrl: string, uuid: string) {
  await sdk.request.send({ method: "DELETE", url: `/device/v2/${encodeURIComponent(uuid)}/logs`, baseUrl: apiUrl });
}

export type LogConnectionState =
  | { state: "connecting" }
  | { state: "live" }
  | { state: "retrying"; error: unknown; delayMs: number };

export interface LogSubscriptionHandlers {
  /** Opens one stream with this count; resolves when it ends, rejects on an error. */
  open: (count: number, signal: AbortSignal, onOpen: () => void) => Promise<void>;
  onState: (state: LogConnectionState) => void;
  /** The first connection failed before any line: the panel may show the history meanwhile. */
  onFirstFailure?: () => void;
  setTimer?: (run: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
}

/**
 * Keeps a log stream open (spec 2 §4, §7, §8): asks for the last 100 lines until a stream has
 * opened, 0 on every reconnect after that (the lines are already shown); an error or an ended
 * stream reconnects after 1 s, 10 s for network-like errors and 503. Returns the stop function.
 */
export function keepLogStream(handlers: LogSubscriptionHandlers): () => void {
  const setTimer = handlers.setTimer ?? ((run, ms) => setTimeout(run, ms));
  const clearTimer = handlers.clearTimer ?? ((timer) => clearTimeout(timer as ReturnType<typeof setTimeout>));
  let stopped = false;
  let opened = false;
  let failedBefore = false;
  let timer: unknown;
  let controller: AbortController | undefined;
  let quietReconnect = false;
  const retry = (error: unknown, delayMs: number) => {
    if (stopped) return;
    // A stream the server ended without an error is reopened without flagging it to the user.
    quietReconnect = error === undefined && opened;
    if (!quietReconnect) handlers.onState({ state: "retrying", error, delayMs });
    timer = setTimer(connect, delayMs);
  };
  function connect() {
    if (stopped) return;
    controller = new AbortController();
    const signal = controller.signal;
    if (!quietReconnect) handlers.onState({ state: "connecting" });
    handlers
      .open(opened ? RECONNECT_LOG_COUNT : INITIAL_LOG_COUNT, signal, () => {
        opened = true;
        if (!stopped) handlers.onState({ state: "live" });
      })
      .then(
        () => {
          if (!signal.aborted) retry(undefined, logRetryDelay(undefined));
        },
        (error: unknown) => {
          if (signal.aborted || stopped) return;
          if (!opened && !failedBefore) {
            failedBefore = true;
            handlers.onFirstFailure?.();
          }
          retry(error, logRetryDelay(error));
        },
      );
  }
  connect();
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimer(timer);
    controller?.abort();
  };
}
