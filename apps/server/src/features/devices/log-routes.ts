import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { mayDo, requireAction } from "../data-api/actions.ts";
import type { DeviceLogLine } from "./device-logs.ts";
import { deviceByUuid } from "./queries.ts";

/** History lines when `count` is not given (balena-sdk `logs.history` documents 1000). */
const DEFAULT_HISTORY_COUNT = 1000;
/**
 * A viewer more than this far behind (bytes the socket has not taken) is dropped: its connection
 * is destroyed, so balena-sdk reports an error and the dashboard reconnects with count 0. Dropping
 * the viewer rather than lines means a viewer never sees a silent gap.
 */
const MAX_VIEWER_BACKLOG_BYTES = 1024 * 1024;
/** Lines held for a stream while its history is read. */
const MAX_HELD_LINES = 5000;

type LogsRequest = FastifyRequest<{
  Params: { uuid: string };
  Querystring: { count?: string; start?: string; stream?: string };
}>;

/** A heartbeat balena-sdk's NDJSON parser skips (an empty row), so idle streams survive proxies. */
const HEARTBEAT = "\n";

/** `count`: a whole number or `all`; beyond the lines kept it means all of them. */
function parseCount(raw: string | undefined, fallback: number, keep: number): number {
  if (raw === undefined || raw === "") return Math.min(fallback, keep);
  if (raw === "all") return keep;
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 0)
    throw new FlotillaError("bad_request", '"count" must be a whole number or all');
  return Math.min(count, keep);
}

/** `start`: milliseconds since the epoch or an ISO date; lines received at or after it. */
function parseStart(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const start = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (!Number.isFinite(start)) throw new FlotillaError("bad_request", '"start" must be a timestamp or an ISO date');
  return start;
}

const lineKey = (l: DeviceLogLine) => `${l.createdAt}\u0000${l.timestamp}\u0000${l.serviceId}\u0000${l.message}`;
const ndjson = (lines: readonly DeviceLogLine[]) => lines.map((l) => `${JSON.stringify(l)}\n`).join("");

/**
 * Reading and clearing device logs (issue 10): history, the live NDJSON stream balena-sdk's
 * `logs.subscribe` reads, and clearing with device_log.delete.
 */
export async function deviceLogRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, devices } = ctx;
  const { logs } = devices;
  const heartbeatMs = ctx.config.deviceLogHeartbeatMs;
  /** Open streams, ended when the server closes (an open response would hold the close forever). */
  const streams = new Set<() => void>();
  app.addHook("preClose", async () => {
    for (const end of [...streams]) end();
  });

  /** The device a user may read, else 404 as if it did not exist. */
  async function readableDevice(request: LogsRequest) {
    const caller = requireAuth(request);
    const { uuid } = request.params;
    const target = caller.user ? await deviceByUuid(db, uuid) : undefined;
    if (!target || !(await mayDo(db, caller, "device.read", { device: target.id }))) {
      throw new FlotillaError("device_not_found", undefined, { params: { device: uuid } });
    }
    return { caller, target };
  }

  /**
   * `?count=N|all&start=…`: the last lines, oldest first (default 1000, at most the lines kept).
   * `?stream=1`: NDJSON, first `count` lines of history (default 0), then live lines, and an empty
   * line every heartbeat; it ends when the client goes.
   */
  app.get("/device/v2/:uuid/logs", async (request: LogsRequest, reply) => {
    const { target } = await readableDevice(request);
    const streaming = request.query.stream === "1" || request.query.stream === "true";
    const count = parseCount(request.query.count, streaming ? 0 : DEFAULT_HISTORY_COUNT, logs.keep);
    const start = parseStart(request.query.start);
    if (!streaming) return logs.history(target.id, count, start);

    const socket = reply.raw;
    // Live lines arriving while the history is read wait here, then follow it.
    let held: DeviceLogLine[] | undefined = [];
    let heartbeat: NodeJS.Timeout | undefined;
    let open = true;
    const write = (lines: readonly DeviceLogLine[]) => {
      if (lines.length === 0 || !open) return;
      socket.write(ndjson(lines));
      if (socket.writableLength > MAX_VIEWER_BACKLOG_BYTES) socket.destroy();
    };
    const unwatch = logs.watch(target.id, (lines) => {
      if (!held) return write(lines);
      held.push(...lines);
      if (held.length > MAX_HELD_LINES) held.splice(0, held.length - MAX_HELD_LINES);
    });
    const end = () => {
      open = false;
      unwatch();
      clearInterval(heartbeat);
      streams.delete(end);
      if (!socket.writableEnded) socket.end();
    };
    streams.add(end);
    socket.on("close", end);
    reply.hijack();
    socket.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": "application/x-ndjson; charset=utf-8",
      "cache-control": "no-cache",
      // Proxies (nginx) pass each line on at once instead of buffering the response.
      "x-accel-buffering": "no",
    });
    socket.flushHeaders();
    try {
      const history = await logs.history(target.id, count, start);
      const shown = new Set(history.map(lineKey));
      write(history);
      write((held ?? []).filter((l) => !shown.has(lineKey(l))));
    } catch (error) {
      request.log.error({ err: error }, "device logs: history not read");
      socket.destroy();
      return;
    } finally {
      held = undefined;
    }
    if (!open) return;
    heartbeat = setInterval(() => socket.write(HEARTBEAT), heartbeatMs);
  });

  /** Clears the device's lines (spec 2 §6 resin.device_log.delete); balena-sdk has no call for it. */
  app.delete("/device/v2/:uuid/logs", async (request: LogsRequest, reply) => {
    const { caller, target } = await readableDevice(request);
    await requireAction(db, caller, "device_log.delete", { device: target.id });
    await logs.clear(target.id);
    return reply.code(204).send();
  });
}
