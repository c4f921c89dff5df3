import crypto from "node:crypto";
import { CLOUDLINK_ATTEMPT_HEADER } from "@flotilla/domain";
import WebSocket from "ws";
import { describe } from "./http.ts";
import { Backoff, type Clock, CONNECT_TIMEOUT_MS, type Random, systemClock } from "./timing.ts";

export type ActionRequest = { type: "request"; id: string; action: string; data?: Record<string, unknown> };
export type ActionAnswer = { status: number; body: unknown };
export type ActionHandler = (action: string, data: Record<string, unknown>) => Promise<ActionAnswer> | ActionAnswer;

export const ok = (): ActionAnswer => ({ status: 200, body: { Data: "OK", Error: null } });
export const failure = (status: number, error: string): ActionAnswer => ({
  status,
  body: { Data: null, Error: error },
});
export const locked = (): ActionAnswer => ({
  status: 423,
  body: { Data: null, Error: "Updates are locked" },
});

/** The reason given for a connection `drop()` cut on purpose (a simulated flaky network). */
export const DROPPED = "dropped on purpose";

/** A server that stops pinging for this long is taken as gone (it pings every 20 s). */
const SILENCE_MS = 50_000;

export type CloudlinkOptions = {
  apiUrl: string;
  deviceKey: string;
  handler: ActionHandler;
  clock?: Clock;
  random?: Random;
  onConnected?: () => void;
  onDisconnected?: (reason: string) => void;
  /** Frames outside request/answer: `terminal-*`, `tunnel-*` and bulk commands' `exec-*` (docs/device-protocol.md). */
  onFrame?: (frame: { type: string } & Record<string, unknown>) => void;
};

/**
 * The cloudlink websocket (`GET /cloudlink/v1/connect`, bearer = device key): answers the
 * server's action requests and reconnects after a close with exponential backoff and full jitter
 * (`random(0, min(30 s, 1 s × 2^attempt))`, the attempt reset after 30 s connected).
 */
export class CloudlinkClient {
  private socket: WebSocket | null = null;
  private reconnectTimer: unknown = null;
  private silenceTimer: unknown = null;
  private connectedAt: number | null = null;
  private running = false;
  readonly backoff: Backoff;
  private readonly clock: Clock;
  connects = 0;
  private dropping = false;
  private readonly run = crypto.randomBytes(6).toString("hex");
  private attempts = 0;

  constructor(private readonly options: CloudlinkOptions) {
    this.clock = options.clock ?? systemClock;
    this.backoff = new Backoff({ random: options.random ?? Math.random });
  }

  get connected() {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  start() {
    if (this.running) return;
    this.running = true;
    this.connect();
  }

  /** Closes the socket and stays away until `start()` (a reboot, a shutdown, the end). */
  stop() {
    this.running = false;
    if (this.reconnectTimer !== null) this.clock.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.closeSocket();
  }

  /** Sends a frame (a terminal's output); false while not connected. */
  send(frame: { type: string } & Record<string, unknown>): boolean {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(frame));
    return true;
  }

  /** Drops the connection as a flaky network would; the client reconnects with backoff. */
  drop() {
    if (!this.socket) return;
    this.dropping = true;
    this.socket.terminate();
  }

  private url() {
    const url = new URL("/cloudlink/v1/connect", this.options.apiUrl);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    return url.toString();
  }

  private connect() {
    this.reconnectTimer = null;
    if (!this.running) return;
    const socket = new WebSocket(this.url(), {
      headers: {
        authorization: `Bearer ${this.options.deviceKey}`,
        // Which connect this is: the server refuses one older than the last it saw (a stale handshake).
        [CLOUDLINK_ATTEMPT_HEADER]: `${this.run}.${++this.attempts}`,
      },
      perMessageDeflate: false,
      handshakeTimeout: CONNECT_TIMEOUT_MS,
    });
    this.socket = socket;
    let failure = "closed";
    socket.on("open", () => {
      this.connectedAt = this.clock.now();
      this.connects += 1;
      this.armSilence();
      this.options.onConnected?.();
    });
    socket.on("ping", () => this.armSilence());
    socket.on("message", (data, isBinary) => {
      this.armSilence();
      if (!isBinary) void this.answer(socket, data.toString());
    });
    socket.on("error", (error) => {
      failure = describe(error);
    });
    socket.on("close", (code) => {
      if (this.silenceTimer !== null) this.clock.clearTimeout(this.silenceTimer);
      this.silenceTimer = null;
      const connectedFor = this.connectedAt === null ? 0 : this.clock.now() - this.connectedAt;
      const wasConnected = this.connectedAt !== null;
      this.connectedAt = null;
      if (this.socket === socket) this.socket = null;
      this.backoff.connectionEnded(connectedFor);
      const reason = this.dropping ? DROPPED : failure === "closed" ? `closed (${code})` : failure;
      this.dropping = false;
      // A close the agent asked for (stop) is no problem worth telling.
      if (this.running && (wasConnected || failure !== "closed")) this.options.onDisconnected?.(reason);
      if (this.running && this.reconnectTimer === null) {
        this.reconnectTimer = this.clock.setTimeout(() => this.connect(), this.backoff.next());
      }
    });
  }

  private armSilence() {
    if (this.silenceTimer !== null) this.clock.clearTimeout(this.silenceTimer);
    this.silenceTimer = this.clock.setTimeout(() => {
      this.silenceTimer = null;
      this.socket?.terminate();
    }, SILENCE_MS);
  }

  private closeSocket() {
    const socket = this.socket;
    if (!socket) return;
    if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
    else socket.close(1000, "device going away");
    // A peer that never completes the closing handshake is cut off.
    const timer = setTimeout(() => socket.terminate(), 2000);
    timer.unref();
  }

  private async answer(socket: WebSocket, text: string) {
    let request: ActionRequest;
    try {
      request = JSON.parse(text) as ActionRequest;
    } catch {
      return;
    }
    const type = (request as { type?: unknown } | null)?.type;
    if (
      typeof type === "string" &&
      (type.startsWith("terminal-") || type.startsWith("tunnel-") || type.startsWith("exec-"))
    ) {
      this.options.onFrame?.(request as unknown as { type: string } & Record<string, unknown>);
      return;
    }
    if (request?.type !== "request" || typeof request.id !== "string") return;
    let answer: ActionAnswer;
    try {
      answer = await this.options.handler(String(request.action), request.data ?? {});
    } catch (error) {
      answer = failure(500, describe(error));
    }
    if (socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify({ type: "response", id: request.id, status: answer.status, body: answer.body }));
    }
  }
}
