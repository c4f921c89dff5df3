import net from "node:net";
import { isTunnelPort, MAX_TUNNEL_CHUNK_BYTES, MAX_TUNNELS_PER_DEVICE } from "@flotilla/domain";

/**
 * The device side of tunnels (docs/device-protocol.md "Tunnels"): the server's `tunnel-open`
 * connects to 127.0.0.1:{port} here, `tunnel-data` is written to that connection, and what it
 * answers goes back as `tunnel-data`; either side's `tunnel-close` ends it. A device without
 * `connect` (the simulator) refuses every tunnel.
 */

type Frame = { type: string } & Record<string, unknown>;

/** Opens the local connection for a tunnel; the real agent connects to 127.0.0.1. */
export type TunnelConnector = (port: number) => net.Socket;

export const connectLocally: TunnelConnector = (port) => net.connect({ host: "127.0.0.1", port });

export class DeviceTunnels {
  private readonly sockets = new Map<string, net.Socket>();

  constructor(
    private readonly send: (frame: Frame) => boolean,
    private readonly connect: TunnelConnector | undefined,
  ) {}

  get size() {
    return this.sockets.size;
  }

  handle(frame: Frame) {
    const tunnel = frame.tunnel;
    if (typeof tunnel !== "string") return;
    switch (frame.type) {
      case "tunnel-open":
        return this.open(tunnel, frame.port);
      case "tunnel-data":
        if (typeof frame.data === "string") this.sockets.get(tunnel)?.write(Buffer.from(frame.data, "base64"));
        return;
      case "tunnel-close": {
        const socket = this.sockets.get(tunnel);
        this.sockets.delete(tunnel);
        socket?.end();
        return;
      }
      default:
        return;
    }
  }

  /** The cloudlink socket went (or the device stops): every tunnel ends with it. */
  closeAll() {
    const sockets = [...this.sockets.values()];
    this.sockets.clear();
    for (const socket of sockets) socket.destroy();
  }

  private refuse(tunnel: string, reason: string, message: string) {
    this.send({ type: "tunnel-close", tunnel, reason, message });
  }

  private open(tunnel: string, port: unknown) {
    if (this.sockets.has(tunnel)) return;
    if (!this.connect) return this.refuse(tunnel, "unsupported", "This device offers no tunnels");
    if (!isTunnelPort(port)) return this.refuse(tunnel, "refused", "Not a port number");
    if (this.sockets.size >= MAX_TUNNELS_PER_DEVICE) {
      return this.refuse(tunnel, "too_many_tunnels", "Too many tunnels are open");
    }
    const socket = this.connect(port);
    this.sockets.set(tunnel, socket);
    let connected = false;
    socket.on("connect", () => {
      connected = true;
      if (this.sockets.get(tunnel) === socket) this.send({ type: "tunnel-open", tunnel });
    });
    socket.on("data", (chunk: Buffer) => {
      if (this.sockets.get(tunnel) !== socket) return;
      for (let at = 0; at < chunk.length; at += MAX_TUNNEL_CHUNK_BYTES) {
        const data = chunk.subarray(at, at + MAX_TUNNEL_CHUNK_BYTES).toString("base64");
        this.send({ type: "tunnel-data", tunnel, data });
      }
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      if (this.sockets.get(tunnel) !== socket) return;
      this.sockets.delete(tunnel);
      if (connected) this.send({ type: "tunnel-close", tunnel, reason: "closed" });
      else this.refuse(tunnel, "refused", `Device is not listening on port ${port}`);
    });
  }
}
