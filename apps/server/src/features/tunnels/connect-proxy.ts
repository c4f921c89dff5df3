import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../context.ts";
import { identify } from "../../lib/authenticate.ts";
import { tunnelDevice, tunnelTarget } from "./access.ts";
import { TunnelLimitError } from "./tunnels.ts";

/**
 * `balena device tunnel` (docs/balena-cli.md "Tunnels"): balena-cli opens TLS to
 * `tunnel.<balenaUrl>:443` and sends `CONNECT {uuid}.balena:{port} HTTP/1.0` with
 * `Proxy-Authorization: Basic {username}:{token}`. The API answers that CONNECT on its own
 * port; TLS is the operator's terminator's, passing the stream through. A 200 comes once the
 * device connected to its port; then the bytes flow both ways.
 */

const REASONS: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  407: "Proxy Authentication Required",
  429: "Too Many Tunnels",
  502: "Bad Gateway",
  503: "Device Offline",
};

function refuse(socket: Duplex, status: number, message?: string) {
  const headers = status === 407 ? 'Proxy-Authenticate: Basic realm="Flotilla"\r\n' : "";
  socket.end(`HTTP/1.0 ${status} ${message ?? REASONS[status] ?? "Error"}\r\n${headers}\r\n`);
}

/** The token of `Proxy-Authorization: Basic base64(user:token)` (the user part is not needed: the token says who). */
function proxyToken(request: IncomingMessage): string | undefined {
  const [scheme, encoded] = (request.headers["proxy-authorization"] ?? "").split(" ");
  if (scheme?.toLowerCase() !== "basic" || !encoded) return undefined;
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const token = decoded.slice(decoded.indexOf(":") + 1);
  return token === "" ? undefined : token;
}

export async function connectProxy(app: FastifyInstance, ctx: AppContext) {
  app.addHook("preClose", () => ctx.tunnels.close());

  async function connect(request: IncomingMessage, socket: Duplex, head: Buffer) {
    const [host = "", port = ""] = (request.url ?? "").split(/:(?=\d+$)/);
    const target = tunnelTarget(host, port);
    if (!target) return refuse(socket, 400, "Bad Request: CONNECT {device uuid}.balena:{port}");
    const token = proxyToken(request);
    const caller = token ? await identify(ctx, token).catch(() => undefined) : undefined;
    if (!caller?.user || caller.session?.twoFactorRequired === true) return refuse(socket, 407);
    const device = await tunnelDevice(ctx.db, caller, target.uuid);
    if (device === "not_found") return refuse(socket, 404, `Device not found: ${target.uuid}`);
    if (device === "forbidden") return refuse(socket, 403);
    let id: string | undefined;
    let open = false;
    const pending: Buffer[] = head.length > 0 ? [head] : [];
    socket.on("data", (chunk: Buffer) => {
      if (open && id) ctx.tunnels.write(id, chunk);
      else if (pending.length < 64) pending.push(chunk);
    });
    socket.on("close", () => {
      if (id) ctx.tunnels.userClosed(id);
    });
    try {
      const opened = await ctx.tunnels.open({
        deviceId: device.id,
        uuid: device.uuid,
        userId: caller.user.id,
        port: target.port,
        via: "connect",
        sink: {
          opened() {
            open = true;
            socket.write("HTTP/1.0 200 Connection Established\r\n\r\n");
            for (const chunk of pending.splice(0)) if (id) ctx.tunnels.write(id, chunk);
          },
          data: (chunk) => socket.write(chunk),
          close(reason, message) {
            if (open) socket.end();
            else refuse(socket, reason === "device_offline" ? 503 : 502, message);
          },
        },
      });
      if (!opened) return refuse(socket, 503);
      id = opened.id;
      if (socket.destroyed) ctx.tunnels.userClosed(id);
    } catch (error) {
      if (error instanceof TunnelLimitError) return refuse(socket, 429);
      throw error;
    }
  }

  app.server.on("connect", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => undefined);
    connect(request, socket, head).catch((error: unknown) => {
      app.log.error({ err: error }, "tunnel: CONNECT failed");
      refuse(socket, 502);
    });
  });
}
