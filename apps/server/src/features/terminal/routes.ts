import {
  hostOsAccessSupported,
  MAX_TERMINAL_DATA_CHARS,
  TERMINAL_AUTH_TIMEOUT_MS,
  TERMINAL_HOST_TARGET,
  TERMINAL_MAX_COLS,
  TERMINAL_MAX_ROWS,
  type TerminalCloseReason,
  type TerminalServerMessage,
  terminalSize,
} from "@flotilla/domain";
import type { FastifyInstance } from "fastify";
import type { WebSocket } from "ws";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { type Caller, identify, requireUser } from "../../lib/authenticate.ts";
import { mayDo } from "../data-api/actions.ts";
import { runningServices, type TerminalDevice, terminalDevice } from "./queries.ts";
import { createTerminalSessions, TerminalLimitError, terminalError } from "./sessions.ts";

const UUID = /^[0-9a-f]{7,62}$/;
/** A service name as the composition allows it; anything else is no service of the device. */
const SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Why this caller may not open this target on this device, or undefined when it may. */
async function refusal(
  ctx: AppContext,
  caller: Caller,
  device: TerminalDevice,
  target: string,
): Promise<TerminalCloseReason | undefined> {
  if (target === TERMINAL_HOST_TARGET) {
    if (!(await mayDo(ctx.db, caller, "device.ssh-host", { device: device.id }))) return "forbidden";
    if (!hostOsAccessSupported(device.os_version)) return "host_os_not_supported";
    return undefined;
  }
  if (!(await mayDo(ctx.db, caller, "device.ssh", { device: device.id }))) return "forbidden";
  if (device.is_in_local_mode) return "local_mode";
  if (!SERVICE_NAME.test(target) || !(await runningServices(ctx.db, device.id)).includes(target)) {
    return "service_not_running";
  }
  return undefined;
}

/**
 * The web terminal (spec 2 §7, docs/device-protocol.md "Terminal"): `GET /terminal/v1/connect`
 * is a websocket whose first message authenticates (`{event: "authentication", token, uuid,
 * target, cols, rows}`: the token travels in the message, never in the URL); then `data` and
 * `resize` go to the device's shell and its output comes back as `data`. `GET
 * /access/v1/hostos/{uuid}` says whether the caller may open a host OS terminal there.
 */
export async function terminalRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, devices } = ctx;
  const sessions = createTerminalSessions({
    relay: devices.relay,
    bus: devices.bus,
    db,
    onError: (error) => app.log.error({ err: error }, "terminal: audit or relay failed"),
  });
  // Open sessions are ended (the browser told why) and audited before the server closes the
  // sockets, the device services and the database.
  app.addHook("preClose", () => sessions.close());

  app.get<{ Params: { uuid: string } }>("/access/v1/hostos/:uuid", async (request) => {
    const user = requireUser(request);
    const { uuid } = request.params;
    const device = UUID.test(uuid) ? await terminalDevice(db, uuid) : undefined;
    if (!device || !(await mayDo(db, user.caller, "device.read", { device: device.id }))) {
      throw new FlotillaError("device_not_found", undefined, { params: { device: uuid } });
    }
    if (!(await mayDo(db, user.caller, "device.ssh-host", { device: device.id }))) throw new FlotillaError("forbidden");
    if (!hostOsAccessSupported(device.os_version)) throw new FlotillaError("host_os_access_not_supported");
    return { uuid, access: true };
  });

  app.get("/terminal/v1/connect", { websocket: true, config: { public: true } }, (socket: WebSocket, request) => {
    const send = (message: TerminalServerMessage) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
    };
    const fail = (reason: TerminalCloseReason, message?: string) => {
      send(terminalError(reason, message));
      socket.close(1000, reason);
    };
    let session: string | undefined;
    let authenticating = false;
    const authTimer = setTimeout(
      () => fail("unauthorized", "No authentication message arrived"),
      TERMINAL_AUTH_TIMEOUT_MS,
    );
    authTimer.unref();

    async function authenticate(message: Record<string, unknown>) {
      const { token, uuid, target } = message;
      if (typeof token !== "string" || token === "") return fail("unauthorized");
      if (typeof uuid !== "string" || typeof target !== "string" || target === "") {
        return fail("bad_request", "The authentication message needs uuid and target");
      }
      const caller = await identify(ctx, token).catch(() => undefined);
      if (!caller?.user || caller.session?.twoFactorRequired === true) return fail("unauthorized");
      const device = UUID.test(uuid) ? await terminalDevice(db, uuid) : undefined;
      if (!device || !(await mayDo(db, caller, "device.read", { device: device.id }))) {
        return fail("device_not_found", `Device not found: ${uuid}`);
      }
      const refused = await refusal(ctx, caller, device, target);
      if (refused) return fail(refused);
      if (socket.readyState !== socket.OPEN) return;
      try {
        const opened = await sessions.open({
          deviceId: device.id,
          uuid: device.uuid,
          userId: caller.user.id,
          target,
          cols: terminalSize(message.cols, TERMINAL_MAX_COLS, 80),
          rows: terminalSize(message.rows, TERMINAL_MAX_ROWS, 24),
          sink: { send, close: () => socket.close(1000) },
        });
        if (!opened) return fail("device_offline");
        session = opened.id;
        // The browser may have gone while the session opened.
        if (socket.readyState !== socket.OPEN) sessions.browserClosed(session);
      } catch (error) {
        if (error instanceof TerminalLimitError) return fail("too_many_sessions");
        throw error;
      }
    }

    socket.on("message", (raw, isBinary) => {
      if (isBinary) return;
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(raw.toString()) as Record<string, unknown>;
      } catch {
        return fail("bad_request", "Messages are JSON");
      }
      if (message === null || typeof message !== "object") return fail("bad_request", "Messages are JSON objects");
      if (session === undefined) {
        if (authenticating) return;
        if (message.event !== "authentication") return fail("unauthorized");
        authenticating = true;
        clearTimeout(authTimer);
        authenticate(message).catch((error: unknown) => {
          request.log.error({ err: error }, "terminal: opening a session failed");
          fail("ssh_disconnected");
        });
        return;
      }
      if (message.event === "data" && typeof message.data === "string") {
        if (message.data.length > MAX_TERMINAL_DATA_CHARS) return fail("bad_request", "A data message is too long");
        sessions.input(session, message.data);
      } else if (message.event === "resize") {
        const cols = terminalSize(message.cols, TERMINAL_MAX_COLS, 0);
        const rows = terminalSize(message.rows, TERMINAL_MAX_ROWS, 0);
        if (cols > 0 && rows > 0) sessions.resize(session, cols, rows);
      }
    });
    socket.on("close", () => {
      clearTimeout(authTimer);
      if (session !== undefined) sessions.browserClosed(session);
    });
  });
}
