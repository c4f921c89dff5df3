import { PassThrough } from "node:stream";
import { request } from "undici";
import { describe, type Http, unexpected } from "./http.ts";
import { Backoff, type Clock, systemClock } from "./timing.ts";

export type LogLine = {
  message: string;
  timestamp: number;
  isSystem?: boolean;
  isStdErr?: boolean;
  serviceId?: number;
};

export const LOG_BUFFER_LINES = 1000;
export const MAX_LINE_CHARS = 10_000;

/**
 * Lines waiting to be sent, at most `capacity`: when full the oldest goes and is counted; the
 * next batch taken starts with one system line `Dropped N log lines`.
 */
export class LogBuffer {
  private lines: LogLine[] = [];
  private head = 0;
  dropped = 0;

  constructor(readonly capacity = LOG_BUFFER_LINES) {}

  get size() {
    return this.lines.length - this.head;
  }

  push(line: LogLine) {
    const message = line.message.length > MAX_LINE_CHARS ? line.message.slice(0, MAX_LINE_CHARS) : line.message;
    this.lines.push(message === line.message ? line : { ...line, message });
    if (this.size > this.capacity) {
      this.head += 1;
      this.dropped += 1;
    }
    // Compact now and then so the array does not grow without bound.
    if (this.head > 512 && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
  }

  /** Up to `max` lines, oldest first, led by the dropped-lines notice when lines were dropped. */
  take(max: number, now = Date.now()): LogLine[] {
    const batch: LogLine[] = [];
    if (this.dropped > 0) {
      batch.push({ message: `Dropped ${this.dropped} log lines`, timestamp: now, isSystem: true });
      this.dropped = 0;
    }
    const count = Math.min(Math.max(0, max - batch.length), this.size);
    batch.push(...this.lines.slice(this.head, this.head + count));
    this.head += count;
    if (this.head === this.lines.length) {
      this.lines = [];
      this.head = 0;
    }
    return batch;
  }
}

export type LogStreamOptions = {
  http: Http;
  apiUrl: string;
  uuid: string;
  deviceKey: string;
  clock?: Clock;
  flushMs?: number;
  batchLines?: number;
  /** An open stream with nothing to send for this long is ended (its request completes). */
  idleMs?: number;
  onError?: (message: string) => void;
};

/**
 * `POST /device/v2/{uuid}/log-stream`: one long chunked NDJSON request, written in batches (every
 * `flushMs` or `batchLines` lines), ended after `idleMs` without lines and opened again on the
 * next line; a failed stream is retried with backoff, its unsent lines stay in the buffer.
 */
export class LogStream {
  readonly buffer = new LogBuffer();
  private body: PassThrough | null = null;
  private flushTimer: unknown = null;
  private idleTimer: unknown = null;
  private retryAt = 0;
  private readonly backoff = new Backoff({ baseMs: 1000 });
  private readonly clock: Clock;
  private stopped = false;
  private waitingForDrain = false;
  /** Lines handed to a stream, for the benchmark and tests. */
  sent = 0;

  constructor(private readonly options: LogStreamOptions) {
    this.clock = options.clock ?? systemClock;
  }

  push(line: LogLine) {
    if (this.stopped) return;
    this.buffer.push(line);
    if (this.buffer.size >= (this.options.batchLines ?? 100)) this.flush();
    else this.scheduleFlush(this.options.flushMs ?? 1000);
  }

  private scheduleFlush(ms: number) {
    if (this.flushTimer !== null) return;
    this.flushTimer = this.clock.setTimeout(() => {
      this.flushTimer = null;
      this.flush();
    }, ms);
  }

  flush() {
    if (this.stopped || (this.buffer.size === 0 && this.buffer.dropped === 0)) return;
    if (this.waitingForDrain && this.body) return;
    const wait = this.retryAt - this.clock.now();
    if (wait > 0) return this.scheduleFlush(wait);
    const body = this.body && !this.body.writableEnded ? this.body : this.open();
    const batchLines = this.options.batchLines ?? 100;
    while (this.buffer.size > 0 || this.buffer.dropped > 0) {
      const batch = this.buffer.take(batchLines, this.clock.now());
      this.sent += batch.length;
      const ok = body.write(`${batch.map((line) => JSON.stringify(line)).join("\n")}\n`);
      if (!ok) {
        if (!this.waitingForDrain) {
          this.waitingForDrain = true;
          body.once("drain", () => {
            this.waitingForDrain = false;
            this.flush();
          });
        }
        break;
      }
    }
    this.armIdle();
  }

  private open(): PassThrough {
    const body = new PassThrough();
    // A failed request destroys its body; the failure is handled below, never thrown here.
    body.on("error", () => {});
    this.body = body;
    const { http, apiUrl, uuid, deviceKey } = this.options;
    const startedAt = this.clock.now();
    request(new URL(`/device/v2/${uuid}/log-stream`, apiUrl), {
      method: "POST",
      headers: { authorization: `Bearer ${deviceKey}`, "content-type": "application/x-ndjson" },
      body,
      dispatcher: http.streams,
    })
      .then(async (response) => {
        const text = await response.body.text();
        if (response.statusCode >= 300) {
          throw unexpected("the log stream", { status: response.statusCode, headers: {}, text });
        }
        this.backoff.connectionEnded(this.clock.now() - startedAt);
      })
      .catch((error: unknown) => {
        this.retryAt = this.clock.now() + this.backoff.next();
        this.options.onError?.(describe(error));
      })
      .finally(() => {
        if (this.body === body) {
          this.body = null;
          this.waitingForDrain = false;
        }
        if (!body.destroyed) body.destroy();
        if (!this.stopped && this.buffer.size > 0) this.scheduleFlush(Math.max(0, this.retryAt - this.clock.now()));
      });
    return body;
  }

  private armIdle() {
    if (this.idleTimer !== null) this.clock.clearTimeout(this.idleTimer);
    this.idleTimer = this.clock.setTimeout(() => {
      this.idleTimer = null;
      const body = this.body;
      // The next line opens a new stream; this one completes its request.
      this.body = null;
      body?.end();
    }, this.options.idleMs ?? 10_000);
  }

  /** Sends what is buffered, then ends the stream. */
  async stop() {
    this.flush();
    this.stopped = true;
    if (this.flushTimer !== null) this.clock.clearTimeout(this.flushTimer);
    if (this.idleTimer !== null) this.clock.clearTimeout(this.idleTimer);
    this.flushTimer = null;
    this.idleTimer = null;
    const body = this.body;
    if (body) {
      await new Promise<void>((resolve) => {
        body.once("close", () => resolve());
        body.end();
        const t = setTimeout(resolve, 2000);
        t.unref();
      });
    }
  }
}
