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

/**
 * The offline buffer (docs/device-protocol.md "Logs"): while the log stream cannot send, lines
 * wait here with their original timestamps, at most LOG_BUFFER_LINES lines and LOG_BUFFER_BYTES
 * characters of messages; beyond either bound the oldest line goes and is counted.
 */
export const LOG_BUFFER_LINES = 10_000;
export const LOG_BUFFER_BYTES = 2 * 1024 * 1024;
export const MAX_LINE_CHARS = 10_000;
/**
 * Lines written to one stream before it is ended and its answer awaited: a line counts as sent
 * only once the server answered its stream, so a failed stream puts at most this many back.
 */
export const STREAM_MAX_LINES = 1000;

/** The system line sent after the buffered lines when some had to be dropped. */
export const droppedNotice = (count: number) =>
  `${count} log line${count === 1 ? " was" : "s were"} dropped while offline`;

/**
 * Lines waiting to be sent, oldest first, bounded by lines and message characters: when full the
 * oldest goes and is counted. Once lines were dropped, the next take marks the newest line then
 * waiting; right after it goes out comes one system line `N log lines were dropped while offline`.
 */
export class LogBuffer {
  /** Notices handed out, with the count each carries: one put back turns into that count again. */
  private readonly notices = new WeakMap<LogLine, number>();
  private lines: LogLine[] = [];
  private head = 0;
  private chars = 0;
  /** The line after which the dropped-lines notice goes out; null with `noticeNow` when it went. */
  private noticeAfter: LogLine | null = null;
  private noticeNow = false;
  dropped = 0;

  constructor(
    readonly capacity = LOG_BUFFER_LINES,
    readonly maxChars = LOG_BUFFER_BYTES,
  ) {}

  get size() {
    return this.lines.length - this.head;
  }

  /** Characters of the messages waiting. */
  get characters() {
    return this.chars;
  }

  push(line: LogLine) {
    const message = line.message.length > MAX_LINE_CHARS ? line.message.slice(0, MAX_LINE_CHARS) : line.message;
    this.lines.push(message === line.message ? line : { ...line, message });
    this.chars += message.length;
    this.trim();
  }

  /** Lines of a failed stream go back in front, in order; the bounds still hold (oldest first out). */
  requeue(lines: readonly LogLine[]) {
    const back: LogLine[] = [];
    for (const line of lines) {
      const count = this.notices.get(line);
      if (count === undefined) back.push(line);
      else this.dropped += count;
    }
    if (back.length === 0) return;
    this.lines = [...back, ...this.lines.slice(this.head)];
    this.head = 0;
    for (const line of back) this.chars += line.message.length;
    this.trim();
  }

  private trim() {
    while (this.size > 1 && (this.size > this.capacity || this.chars > this.maxChars)) {
      const gone = this.lines[this.head] as LogLine;
      this.head += 1;
      this.chars -= gone.message.length;
      this.dropped += 1;
      // Everything up to the marked line is gone: the notice leads the next batch instead.
      if (gone === this.noticeAfter) {
        this.noticeAfter = null;
        this.noticeNow = true;
      }
    }
    // Compact now and then so the array does not grow without bound.
    if (this.head > 512 && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
  }

  /** Whether a take would hand out anything. */
  get waiting() {
    return this.size > 0 || this.dropped > 0;
  }

  /**
   * Up to `max` lines, oldest first; the dropped-lines notice (timestamp `now`) follows the lines
   * that were waiting when drops were first seen, so buffered lines keep their order and times.
   */
  take(max: number, now = Date.now()): LogLine[] {
    if (this.dropped > 0 && this.noticeAfter === null && !this.noticeNow) {
      if (this.size === 0) this.noticeNow = true;
      else this.noticeAfter = this.lines[this.lines.length - 1] as LogLine;
    }
    const batch: LogLine[] = [];
    const notice = () => {
      const line = { message: droppedNotice(this.dropped), timestamp: now, isSystem: true };
      this.notices.set(line, this.dropped);
      batch.push(line);
      this.dropped = 0;
      this.noticeNow = false;
      this.noticeAfter = null;
    };
    if (this.noticeNow) notice();
    while (batch.length < max && this.size > 0) {
      const line = this.lines[this.head] as LogLine;
      this.head += 1;
      this.chars -= line.message.length;
      batch.push(line);
      if (line === this.noticeAfter) {
        if (batch.length < max) notice();
        else {
          this.noticeAfter = null;
          this.noticeNow = true;
        }
      }
    }
    if (this.head === this.lines.length) {
      this.lines = [];
      this.head = 0;
    }
    return batch;
  }
}

/** Sends one stream's body; resolves with the server's answer, rejects when the request fails. */
export type LogTransport = (body: PassThrough) => Promise<{ status: number; text: string }>;

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
  /** Offline buffer bounds (tests and the simulator, which holds many devices, may lower them). */
  bufferLines?: number;
  bufferBytes?: number;
  /** Replaces the HTTP request (tests). */
  transport?: LogTransport;
  onError?: (message: string) => void;
};

/**
 * `POST /device/v2/{uuid}/log-stream`: one long chunked NDJSON request, written in batches (every
 * `flushMs` or `batchLines` lines), ended after `idleMs` without lines or STREAM_MAX_LINES lines
 * and opened again on the next line once the server answered. A line counts as sent only when its
 * stream was answered with 2xx: a failed stream puts its lines back in front of the buffer, and
 * while the server cannot be reached (retried with backoff) new lines wait behind them, so on
 * reconnect the server gets everything in order with the original timestamps (at least once).
 */
export class LogStream {
  readonly buffer: LogBuffer;
  private body: PassThrough | null = null;
  /** The stream whose request has not settled (open, or ended and awaiting its answer). */
  private unanswered: PassThrough | null = null;
  /** Lines written to `unanswered`. */
  private inFlight: LogLine[] = [];
  private flushTimer: unknown = null;
  private idleTimer: unknown = null;
  private retryAt = 0;
  private readonly backoff = new Backoff({ baseMs: 1000 });
  private readonly clock: Clock;
  private readonly transport: LogTransport;
  private stopped = false;
  private offline = false;
  private waitingForDrain = false;
  /** Lines handed to a stream (again after a failure), for the benchmark and tests. */
  sent = 0;

  constructor(private readonly options: LogStreamOptions) {
    this.clock = options.clock ?? systemClock;
    this.buffer = new LogBuffer(options.bufferLines, options.bufferBytes);
    const { http, apiUrl, uuid, deviceKey } = options;
    this.transport =
      options.transport ??
      (async (body) => {
        const response = await request(new URL(`/device/v2/${uuid}/log-stream`, apiUrl), {
          method: "POST",
          headers: { authorization: `Bearer ${deviceKey}`, "content-type": "application/x-ndjson" },
          body,
          dispatcher: http.streams,
        });
        return { status: response.statusCode, text: await response.body.text() };
      });
  }

  push(line: LogLine) {
    if (this.stopped) return;
    this.buffer.push(line);
    if (this.buffer.size >= (this.options.batchLines ?? 100)) this.flush();
    else this.scheduleFlush(this.options.flushMs ?? 1000);
  }

  /**
   * Simulates a lost connection (the simulator's `--offline-for`): nothing is sent while offline,
   * lines wait in the buffer; the open stream is ended so what it carried is answered.
   */
  setOffline(offline: boolean) {
    this.offline = offline;
    if (offline) return this.endStream();
    this.retryAt = 0;
    this.flush();
  }

  private scheduleFlush(ms: number) {
    if (this.flushTimer !== null) return;
    this.flushTimer = this.clock.setTimeout(() => {
      this.flushTimer = null;
      this.flush();
    }, ms);
  }

  flush() {
    if (this.stopped || this.offline || !this.buffer.waiting) return;
    if (this.waitingForDrain && this.body) return;
    // An ended stream awaiting its answer: its end flushes again (one stream at a time keeps order).
    if (this.unanswered && this.unanswered !== this.body) return;
    const wait = this.retryAt - this.clock.now();
    if (wait > 0) return this.scheduleFlush(wait);
    const body = this.body && !this.body.writableEnded ? this.body : this.open();
    const batchLines = this.options.batchLines ?? 100;
    while (this.buffer.waiting && this.inFlight.length < STREAM_MAX_LINES) {
      const batch = this.buffer.take(Math.min(batchLines, STREAM_MAX_LINES - this.inFlight.length), this.clock.now());
      this.inFlight.push(...batch);
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
    if (this.inFlight.length >= STREAM_MAX_LINES) this.endStream();
    else this.armIdle();
  }

  /** Ends the open stream: its request completes and the server's answer confirms its lines. */
  private endStream() {
    if (this.idleTimer !== null) this.clock.clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const body = this.body;
    this.body = null;
    this.waitingForDrain = false;
    body?.end();
  }

  private open(): PassThrough {
    const body = new PassThrough();
    // A failed request destroys its body; the failure is handled below, never thrown here.
    body.on("error", () => {});
    this.body = body;
    this.unanswered = body;
    this.inFlight = [];
    const startedAt = this.clock.now();
    this.transport(body)
      .then(({ status, text }) => {
        if (status >= 300) throw unexpected("the log stream", { status, headers: {}, text });
        this.inFlight = [];
        this.backoff.connectionEnded(this.clock.now() - startedAt);
      })
      .catch((error: unknown) => {
        // Not answered: its lines go back in front of those logged since, to be sent again.
        this.buffer.requeue(this.inFlight);
        this.inFlight = [];
        this.retryAt = this.clock.now() + this.backoff.next();
        this.options.onError?.(describe(error));
      })
      .finally(() => {
        if (this.body === body) {
          this.body = null;
          this.waitingForDrain = false;
        }
        if (this.unanswered === body) this.unanswered = null;
        if (!body.destroyed) body.destroy();
        if (!this.stopped && this.buffer.waiting) this.scheduleFlush(Math.max(0, this.retryAt - this.clock.now()));
      });
    return body;
  }

  private armIdle() {
    if (this.idleTimer !== null) this.clock.clearTimeout(this.idleTimer);
    this.idleTimer = this.clock.setTimeout(() => {
      this.idleTimer = null;
      // The next line opens a new stream; this one completes its request.
      this.endStream();
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
