import {
  hostOsAccessSupported,
  MAX_TERMINAL_DATA_CHARS,
  TERMINAL_AUTH_TIMEOUT_MS,
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
import { identify, requireUser } from "../../lib/authenticate.ts";
import { mayDo } from "../data-api/actions.ts";
import { terminalRefusal, visibleTerminalDevice } from "./access.ts";
import { TerminalLimitError, terminalError } from "./sessions.ts";

/**
 * The web terminal (spec 2 §7, docs/device-protocol.md "Terminal"): `GET /terminal/v1/connect`
 * is a websocket whose first message authenticates (`{event: "authentication", token, uuid,
 * target, cols, rows}`: the token travels in the message, never in the URL); then `data` and
 * `resize` go to the device's shell and its output comes back as `data`. `GET
 * /access/v1/hostos/{uuid}` says whether the caller may open a host OS terminal there.
 */
export async function terminalRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, terminals: sessions } = ctx;
  // Open sessions are ended (the browser told why) and audited before the server closes the
  // sockets, the device services and the database.
  app.addHook("preClose", () => sessions.close());

  app.get<{ Params: { uuid: string } }>("/access/v1/hostos/:uuid", async (request) => {
    const user = requireUser(request);
    const { uuid } = request.params;
    const device = await visibleTerminalDevice(db, user.caller, uuid);
    if (!device) {
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
      const device = await visibleTerminalDevice(db, caller, uuid);
      if (!device) {
        return fail("device_not_found", `Device not found: ${uuid}`);
      }
      const refused = await terminalRefusal(db, caller, device, target);
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
