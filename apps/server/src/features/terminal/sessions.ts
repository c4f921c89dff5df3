import crypto from "node:crypto";
import {
  MAX_TERMINAL_DATA_CHARS,
  MAX_TERMINAL_SESSIONS_PER_DEVICE,
  MAX_TERMINAL_SESSIONS_PER_USER,
  type TerminalCloseReason,
  type TerminalFrame,
  type TerminalServerMessage,
} from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import type { Bus } from "../devices/bus.ts";
import { type DeviceFrame, REATTACH_WAIT_MS, type Relay } from "../devices/relay.ts";
import { insertTerminalAudits, type TerminalAudit } from "./queries.ts";

/**
 * Terminal sessions of this API instance (docs/device-protocol.md "Terminal"). A session joins a
 * browser socket here to a shell on the device, over the device's cloudlink socket: on this
 * instance, or on the one that holds it (frames cross instances through the bus). The instance
 * holding the device's socket remembers which instance each session came from, so the device's
 * frames find their way back. Every session is audited when it ends.
 */

/** The device has this long to start the shell (answer `terminal-open`). */
const OPEN_TIMEOUT_MS = 15_000;

const MESSAGES: Record<TerminalCloseReason, string> = {
  unauthorized: "Unauthorized.",
  forbidden: "You are not allowed to do this.",
  device_not_found: "Device not found",
  device_offline: "The terminal is unavailable while the device is offline",
  local_mode: "Container access is not available in local mode",
  service_not_running: "A service terminal is only available for running containers",
  host_os_not_supported: "Host OS access is only available for certain OS versions",
  too_many_sessions: "Too many terminal sessions are open",
  bad_request: "Invalid request.",
  ssh_disconnected: "The ssh session was disconnected",
  exited: "The shell exited",
  server_shutdown: "The server is shutting down",
};

/** The words for why a terminal cannot open or ended. */
export const terminalMessage = (reason: TerminalCloseReason): string => MESSAGES[reason];

export const terminalError = (reason: TerminalCloseReason, message = MESSAGES[reason]): TerminalServerMessage => ({
  event: "error",
  reason,
  message,
});

/** Where a session's output goes: the browser socket, or an SSH channel. */
export type BrowserSink = {
  send(message: TerminalServerMessage): void;
  close(): void;
};

type Session = {
  id: string;
  deviceId: number;
  uuid: string;
  userId: number;
  target: string;
  via: TerminalAudit["via"];
  startedAt: Date;
  connected: boolean;
  ended: boolean;
  /** The instance holding the device's socket when the session opened. */
  owner: string;
  sink: BrowserSink;
  openTimer: NodeJS.Timeout | undefined;
};

/** Frames of sessions whose browser is on another instance: session → that instance and the device. */
type Forwarded = { origin: string; deviceId: number };

type ToDevice = { deviceId: number; frame: TerminalFrame; origin: string };
type ToBrowser = { frame: TerminalFrame };

export class TerminalLimitError extends Error {}

export function createTerminalSessions(options: {
  relay: Relay;
  bus: Bus;
  db: Pick<Queryable, "query">;
  onError: (error: unknown) => void;
}) {
  const { relay, bus, db, onError } = options;
  const sessions = new Map<string, Session>();
  const forwarded = new Map<string, Forwarded>();
  const audits = new Set<Promise<void>>();

  const audit = (row: TerminalAudit) => {
    const write = insertTerminalAudits(db, [row])
      .catch(onError)
      .finally(() => audits.delete(write));
    audits.add(write);
  };

  /** Sends a frame to the device: over its socket here, or to the instance that holds it. */
  function toDevice(session: Pick<Session, "deviceId" | "owner">, frame: TerminalFrame) {
    if (session.owner === bus.instanceId) {
      if (!relay.sendFrame(session.deviceId, frame)) return false;
      return true;
    }
    void bus
      .toInstance(session.owner, "terminal.to-device", {
        deviceId: session.deviceId,
        frame,
        origin: bus.instanceId,
      } satisfies ToDevice)
      .catch(onError);
    return true;
  }

  function end(session: Session, reason: TerminalCloseReason | "closed", message?: string, fromDevice = false) {
    if (session.ended) return;
    session.ended = true;
    if (session.openTimer) clearTimeout(session.openTimer);
    sessions.delete(session.id);
    if (!fromDevice) toDevice(session, { type: "terminal-close", session: session.id });
    if (reason !== "closed") {
      session.sink.send(terminalError(reason, message));
      session.sink.close();
    }
    audit({
      user: session.userId,
      device: session.uuid,
      deviceId: session.deviceId,
      target: session.target,
      via: session.via,
      startedAt: session.startedAt,
      endedAt: new Date(),
      connected: session.connected,
      endReason: reason,
    });
  }

  /** A frame the device sent for a session whose browser is here. */
  function fromDevice(frame: TerminalFrame) {
    const session = sessions.get(frame.session);
    if (!session) return;
    switch (frame.type) {
      case "terminal-open":
        if (session.openTimer) clearTimeout(session.openTimer);
        session.openTimer = undefined;
        session.connected = true;
        session.sink.send({ event: "ssh connect" });
        return;
      case "terminal-data":
        if (typeof frame.data === "string") session.sink.send({ event: "data", data: frame.data });
        return;
      case "terminal-close": {
        // The agent names why: the shell was left, or the service has no running container.
        const known = ["exited", "service_not_running", "too_many_sessions"] as const;
        const reason = known.find((r) => r === frame.reason) ?? "ssh_disconnected";
        end(session, reason, typeof frame.message === "string" ? frame.message.slice(0, 500) : undefined, true);
        return;
      }
      default:
        return;
    }
  }

  relay.onFrame((deviceId: number, raw: DeviceFrame) => {
    if (typeof raw.session !== "string") return;
    const frame = raw as unknown as TerminalFrame;
    const away = forwarded.get(frame.session);
    if (away && away.deviceId === deviceId) {
      if (frame.type === "terminal-close") forwarded.delete(frame.session);
      void bus.toInstance(away.origin, "terminal.to-browser", { frame } satisfies ToBrowser).catch(onError);
      return;
    }
    if (sessions.get(frame.session)?.deviceId === deviceId) fromDevice(frame);
  });

  // The device's socket here closed: its shells are gone.
  relay.onSocketClosed((deviceId) => {
    for (const session of [...sessions.values()]) {
      if (session.deviceId === deviceId && session.owner === bus.instanceId)
        end(session, "ssh_disconnected", undefined, true);
    }
    for (const [id, away] of [...forwarded]) {
      if (away.deviceId !== deviceId) continue;
      forwarded.delete(id);
      const frame: TerminalFrame = { type: "terminal-close", session: id, reason: "ssh_disconnected" };
      void bus.toInstance(away.origin, "terminal.to-browser", { frame } satisfies ToBrowser).catch(onError);
    }
  });

  bus.on("terminal.to-device", (payload) => {
    const { deviceId, frame, origin } = payload as ToDevice;
    if (!frame || typeof frame.session !== "string") return;
    if (frame.type === "terminal-open") forwarded.set(frame.session, { origin, deviceId });
    if (frame.type === "terminal-close") forwarded.delete(frame.session);
    if (!relay.sendFrame(deviceId, frame) && frame.type !== "terminal-close") {
      forwarded.delete(frame.session);
      const back: TerminalFrame = { type: "terminal-close", session: frame.session, reason: "ssh_disconnected" };
      void bus.toInstance(origin, "terminal.to-browser", { frame: back } satisfies ToBrowser).catch(onError);
    }
  });
  bus.on("terminal.to-browser", (payload) => {
    const { frame } = payload as ToBrowser;
    if (frame && typeof frame.session === "string") fromDevice(frame);
  });

  const count = (match: (session: Session) => boolean) => [...sessions.values()].filter(match).length;

  return {
    /**
     * Opens a session to a device the caller was checked for. Throws `TerminalLimitError` beyond
     * the bounds; answers undefined when the device has no cloudlink socket anywhere.
     */
    async open(request: {
      deviceId: number;
      uuid: string;
      userId: number;
      target: string;
      cols: number;
      rows: number;
      sink: BrowserSink;
      /** Where the user is: the dashboard's web terminal (default) or the SSH gateway. */
      via?: TerminalAudit["via"];
    }): Promise<{ id: string } | undefined> {
      if (
        count((s) => s.deviceId === request.deviceId) >= MAX_TERMINAL_SESSIONS_PER_DEVICE ||
        count((s) => s.userId === request.userId) >= MAX_TERMINAL_SESSIONS_PER_USER
      ) {
        throw new TerminalLimitError();
      }
      const owner = await relay.ownerOf(request.deviceId, REATTACH_WAIT_MS);
      if (!owner) return undefined;
      const session: Session = {
        id: crypto.randomUUID(),
        deviceId: request.deviceId,
        uuid: request.uuid,
        userId: request.userId,
        target: request.target,
        via: request.via ?? "web",
        startedAt: new Date(),
        connected: false,
        ended: false,
        owner,
        sink: request.sink,
        openTimer: undefined,
      };
      sessions.set(session.id, session);
      session.openTimer = setTimeout(() => end(session, "ssh_disconnected"), OPEN_TIMEOUT_MS);
      session.openTimer.unref();
      const sent = toDevice(session, {
        type: "terminal-open",
        session: session.id,
        target: request.target,
        cols: request.cols,
        rows: request.rows,
      });
      if (!sent) {
        // The socket went between the lookup and the send.
        sessions.delete(session.id);
        clearTimeout(session.openTimer);
        return undefined;
      }
      return { id: session.id };
    },

    input(id: string, data: string) {
      const session = sessions.get(id);
      if (!session?.connected || data.length > MAX_TERMINAL_DATA_CHARS) return;
      toDevice(session, { type: "terminal-data", session: id, data });
    },

    resize(id: string, cols: number, rows: number) {
      const session = sessions.get(id);
      if (session) toDevice(session, { type: "terminal-resize", session: id, cols, rows });
    },

    /** The browser went: the shell is closed and the session audited. */
    browserClosed(id: string) {
      const session = sessions.get(id);
      if (session) end(session, "closed");
    },

    get size() {
      return sessions.size;
    },

    /** Ends every session here (server shutdown) and waits for their audit rows. */
    async close() {
      for (const session of [...sessions.values()]) end(session, "server_shutdown");
      await Promise.all([...audits]);
    },
  };
}

export type TerminalSessions = ReturnType<typeof createTerminalSessions>;
