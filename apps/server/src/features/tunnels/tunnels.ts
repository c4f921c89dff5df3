import crypto from "node:crypto";
import { MAX_TUNNEL_CHUNK_BYTES, MAX_TUNNELS_PER_DEVICE, type TunnelFrame } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import type { Bus } from "../devices/bus.ts";
import { type DeviceFrame, REATTACH_WAIT_MS, type Relay } from "../devices/relay.ts";
import { insertTunnelAudit, type TunnelAudit } from "./queries.ts";

/**
 * Device tunnels of this API instance (docs/device-protocol.md "Tunnels"): a user's TCP
 * connection (an SSH gateway channel, or an HTTP CONNECT) joined to a connection the agent opens
 * to a port on the device, over its cloudlink socket, here or on the instance holding it (the
 * bus carries the frames, as for terminal sessions). Every tunnel is audited when it ends.
 */

/** The device has this long to connect to its port (answer `tunnel-open`). */
const OPEN_TIMEOUT_MS = 15_000;
/** Tunnels one user holds open on this instance. */
const MAX_TUNNELS_PER_USER = 32;

/** Where the device's side goes: the user's connection. */
export type TunnelSink = {
  /** The device connected to its port: bytes may flow. */
  opened(): void;
  data(chunk: Buffer): void;
  /** The tunnel ended from the device's side or the server's (never called when the user closed it). */
  close(reason: string, message?: string): void;
};

type Tunnel = {
  id: string;
  deviceId: number;
  uuid: string;
  userId: number;
  port: number;
  via: TunnelAudit["via"];
  owner: string;
  startedAt: Date;
  connected: boolean;
  ended: boolean;
  sink: TunnelSink;
  openTimer: NodeJS.Timeout | undefined;
  bytesToDevice: number;
  bytesFromDevice: number;
};

type ToDevice = { deviceId: number; frame: TunnelFrame; origin: string };
type ToUser = { frame: TunnelFrame };

export class TunnelLimitError extends Error {}

export function createDeviceTunnels(options: {
  relay: Relay;
  bus: Bus;
  db: Pick<Queryable, "query">;
  onError: (error: unknown) => void;
}) {
  const { relay, bus, db, onError } = options;
  const tunnels = new Map<string, Tunnel>();
  /** Tunnels whose user is on another instance: tunnel → that instance and the device. */
  const forwarded = new Map<string, { origin: string; deviceId: number }>();
  const audits = new Set<Promise<void>>();

  function toDevice(tunnel: Pick<Tunnel, "deviceId" | "owner">, frame: TunnelFrame): boolean {
    if (tunnel.owner === bus.instanceId) return relay.sendFrame(tunnel.deviceId, frame);
    const message: ToDevice = { deviceId: tunnel.deviceId, frame, origin: bus.instanceId };
    void bus.toInstance(tunnel.owner, "tunnel.to-device", message).catch(onError);
    return true;
  }

  function end(tunnel: Tunnel, reason: string, message?: string, fromDevice = false) {
    if (tunnel.ended) return;
    tunnel.ended = true;
    if (tunnel.openTimer) clearTimeout(tunnel.openTimer);
    tunnels.delete(tunnel.id);
    if (!fromDevice) toDevice(tunnel, { type: "tunnel-close", tunnel: tunnel.id });
    if (reason !== "closed") tunnel.sink.close(reason, message);
    const write = insertTunnelAudit(db, {
      user: tunnel.userId,
      device: tunnel.uuid,
      deviceId: tunnel.deviceId,
      port: tunnel.port,
      via: tunnel.via,
      startedAt: tunnel.startedAt,
      endedAt: new Date(),
      connected: tunnel.connected,
      endReason: reason,
      bytesToDevice: tunnel.bytesToDevice,
      bytesFromDevice: tunnel.bytesFromDevice,
    })
      .catch(onError)
      .finally(() => audits.delete(write));
    audits.add(write);
  }

  /** A frame the device sent for a tunnel whose user is here. */
  function fromDevice(frame: TunnelFrame) {
    const tunnel = tunnels.get(frame.tunnel);
    if (!tunnel) return;
    if (frame.type === "tunnel-open") {
      if (tunnel.openTimer) clearTimeout(tunnel.openTimer);
      tunnel.openTimer = undefined;
      tunnel.connected = true;
      tunnel.sink.opened();
    } else if (frame.type === "tunnel-data" && typeof frame.data === "string") {
      const chunk = Buffer.from(frame.data, "base64");
      tunnel.bytesFromDevice += chunk.length;
      tunnel.sink.data(chunk);
    } else if (frame.type === "tunnel-close") {
      const reason = frame.reason === "closed" ? "device_closed" : (frame.reason ?? "failed");
      end(tunnel, reason, typeof frame.message === "string" ? frame.message.slice(0, 500) : undefined, true);
    }
  }

  relay.onFrame((deviceId: number, raw: DeviceFrame) => {
    if (typeof raw.tunnel !== "string" || !raw.type.startsWith("tunnel-")) return;
    const frame = raw as unknown as TunnelFrame;
    const away = forwarded.get(frame.tunnel);
    if (away && away.deviceId === deviceId) {
      if (frame.type === "tunnel-close") forwarded.delete(frame.tunnel);
      void bus.toInstance(away.origin, "tunnel.to-user", { frame } satisfies ToUser).catch(onError);
      return;
    }
    if (tunnels.get(frame.tunnel)?.deviceId === deviceId) fromDevice(frame);
  });

  relay.onSocketClosed((deviceId) => {
    for (const tunnel of [...tunnels.values()]) {
      if (tunnel.deviceId === deviceId && tunnel.owner === bus.instanceId)
        end(tunnel, "device_offline", undefined, true);
    }
    for (const [id, away] of [...forwarded]) {
      if (away.deviceId !== deviceId) continue;
      forwarded.delete(id);
      const frame: TunnelFrame = { type: "tunnel-close", tunnel: id, reason: "device_offline" };
      void bus.toInstance(away.origin, "tunnel.to-user", { frame } satisfies ToUser).catch(onError);
    }
  });

  bus.on("tunnel.to-device", (payload) => {
    const { deviceId, frame, origin } = payload as ToDevice;
    if (!frame || typeof frame.tunnel !== "string") return;
    if (frame.type === "tunnel-open") forwarded.set(frame.tunnel, { origin, deviceId });
    if (frame.type === "tunnel-close") forwarded.delete(frame.tunnel);
    if (!relay.sendFrame(deviceId, frame) && frame.type !== "tunnel-close") {
      forwarded.delete(frame.tunnel);
      const back: TunnelFrame = { type: "tunnel-close", tunnel: frame.tunnel, reason: "device_offline" };
      void bus.toInstance(origin, "tunnel.to-user", { frame: back } satisfies ToUser).catch(onError);
    }
  });
  bus.on("tunnel.to-user", (payload) => {
    const { frame } = payload as ToUser;
    if (frame && typeof frame.tunnel === "string") fromDevice(frame);
  });

  const count = (match: (tunnel: Tunnel) => boolean) => [...tunnels.values()].filter(match).length;

  return {
    /**
     * Asks the device to connect to `port` for a user who was checked for it. Throws
     * `TunnelLimitError` beyond the bounds; undefined when the device has no cloudlink socket.
     */
    async open(request: {
      deviceId: number;
      uuid: string;
      userId: number;
      port: number;
      via: TunnelAudit["via"];
      sink: TunnelSink;
    }): Promise<{ id: string } | undefined> {
      if (
        count((t) => t.deviceId === request.deviceId) >= MAX_TUNNELS_PER_DEVICE ||
        count((t) => t.userId === request.userId) >= MAX_TUNNELS_PER_USER
      ) {
        throw new TunnelLimitError();
      }
      const owner = await relay.ownerOf(request.deviceId, REATTACH_WAIT_MS);
      if (!owner) return undefined;
      const tunnel: Tunnel = {
        ...request,
        id: crypto.randomUUID(),
        owner,
        startedAt: new Date(),
        connected: false,
        ended: false,
        openTimer: undefined,
        bytesToDevice: 0,
        bytesFromDevice: 0,
      };
      tunnels.set(tunnel.id, tunnel);
      tunnel.openTimer = setTimeout(
        () => end(tunnel, "timeout", "The device did not connect in time"),
        OPEN_TIMEOUT_MS,
      );
      tunnel.openTimer.unref();
      if (!toDevice(tunnel, { type: "tunnel-open", tunnel: tunnel.id, port: request.port })) {
        tunnels.delete(tunnel.id);
        clearTimeout(tunnel.openTimer);
        return undefined;
      }
      return { id: tunnel.id };
    },

    /** Bytes from the user to the device (only once the device connected). */
    write(id: string, chunk: Buffer) {
      const tunnel = tunnels.get(id);
      if (!tunnel?.connected) return;
      tunnel.bytesToDevice += chunk.length;
      for (let at = 0; at < chunk.length; at += MAX_TUNNEL_CHUNK_BYTES) {
        const data = chunk.subarray(at, at + MAX_TUNNEL_CHUNK_BYTES).toString("base64");
        toDevice(tunnel, { type: "tunnel-data", tunnel: id, data });
      }
    },

    /** The user's connection went: the device's connection is closed and the tunnel audited. */
    userClosed(id: string) {
      const tunnel = tunnels.get(id);
      if (tunnel) end(tunnel, "closed");
    },

    /** Ends every tunnel here (server shutdown) and waits for their audit rows. */
    async close() {
      for (const tunnel of [...tunnels.values()]) end(tunnel, "server_shutdown");
      await Promise.all([...audits]);
    },
  };
}

export type DeviceTunnels = ReturnType<typeof createDeviceTunnels>;
