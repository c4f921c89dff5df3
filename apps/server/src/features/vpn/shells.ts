import net from "node:net";
import type { FastifyBaseLogger } from "fastify";
import ssh2, { type ClientChannel } from "ssh2";
import type { AppContext } from "../../context.ts";
import type { DeviceFrame } from "../devices/relay.ts";
import { SERVER_SSH_USER } from "./jit-keys.ts";

// ssh2 is CommonJS without named exports Node can see: plain `node` needs the default import.
const { Client } = ssh2;

/**
 * Terminals, commands and tunnels on a balenaOS device over the VPN, spoken as the cloudlink
 * frames the agent speaks (terminal-*, exec-*, tunnel-*), so the terminal sessions, the SSH
 * gateway, bulk commands and tunnels work unchanged. Shells and commands run through the
 * device's SSH server on port 22222 (one connection each, logged in with a one-time key,
 * jit-keys.ts); a service's shell is `balena-engine exec` into its container, as `balena ssh`
 * does; a tunnel is a TCP connection to the device's VPN address.
 */

export const DEVICE_SSH_PORT = 22222;
const CONNECT_TIMEOUT_MS = 15_000;

/** A service name as the Supervisor labels containers: safe inside a shell command. */
const SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The host command that runs `inner` (a quoted sh command, or a shell) in the service's container. */
export function inService(service: string, inner: string | undefined): string {
  const find = `id=$(balena-engine ps -q --filter ${quote(`label=io.balena.service-name=${service}`)} | head -n 1)`;
  const missing = `[ -n "$id" ] || { echo ${quote(`Service ${service} is not running`)} >&2; exit 126; }`;
  const run = inner
    ? `exec balena-engine exec "$id" sh -c ${quote(inner)}`
    : `exec balena-engine exec -it "$id" sh -c 'command -v bash >/dev/null && exec bash || exec sh'`;
  return `${find}; ${missing}; ${run}`;
}

type Running =
  | { kind: "terminal"; client: InstanceType<typeof Client>; channel?: ClientChannel }
  | { kind: "exec"; client: InstanceType<typeof Client>; channel?: ClientChannel; timer?: NodeJS.Timeout }
  | { kind: "tunnel"; socket: net.Socket };

export function createDeviceShells(options: {
  ctx: Pick<AppContext, "jitKeys">;
  deviceId: number;
  address: string;
  emit: (frame: DeviceFrame) => void;
  logger: Pick<FastifyBaseLogger, "debug">;
}) {
  const { ctx, deviceId, address, emit, logger } = options;
  const running = new Map<string, Running>();

  /** Logs the client in to the device's SSH server; `onReady` once it may open channels. */
  async function connect(
    client: InstanceType<typeof Client>,
    onReady: (client: InstanceType<typeof Client>) => void,
    onFail: (message: string) => void,
  ) {
    let key: Awaited<ReturnType<typeof ctx.jitKeys.issue>>;
    try {
      key = await ctx.jitKeys.issue(deviceId);
    } catch (error) {
      return onFail(`No key could be made for the device's SSH server: ${(error as Error).message}`);
    }
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      key.forget();
      client.end();
      onFail(message);
    };
    client.once("ready", () => {
      settled = true;
      key.forget();
      onReady(client);
    });
    client.once("error", (error) => {
      logger.debug({ err: error, deviceId }, "vpn: device SSH failed");
      fail(`The device's SSH server could not be reached over the VPN: ${error.message}`);
    });
    client.once("close", () => fail("The device's SSH server closed the connection"));
    client.connect({
      host: address,
      port: DEVICE_SSH_PORT,
      username: SERVER_SSH_USER,
      privateKey: key.privateKey,
      readyTimeout: CONNECT_TIMEOUT_MS,
      keepaliveInterval: 15_000,
    });
  }

  function openTerminal(frame: DeviceFrame) {
    const session = String(frame.session);
    const target = typeof frame.target === "string" ? frame.target : "host";
    const close = (reason: string, message?: string) => {
      if (!running.delete(session)) return;
      emit({ type: "terminal-close", session, reason, ...(message ? { message } : {}) });
    };
    if (target !== "host" && !SERVICE_NAME.test(target)) {
      emit({ type: "terminal-close", session, reason: "service_not_running", message: `No service named ${target}` });
      return;
    }
    const window = { term: "xterm-256color", cols: Number(frame.cols) || 80, rows: Number(frame.rows) || 24 };
    const entry: Running = { kind: "terminal", client: new Client() };
    running.set(session, entry);
    void connect(
      entry.client,
      (client) => {
        if (running.get(session) !== entry) return client.end();
        const opened = (error: Error | undefined, channel: ClientChannel) => {
          if (error) return close("ssh_disconnected", error.message);
          entry.channel = channel;
          emit({ type: "terminal-open", session });
          channel.on("data", (data: Buffer) => emit({ type: "terminal-data", session, data: data.toString("utf8") }));
          channel.stderr.on("data", (data: Buffer) =>
            emit({ type: "terminal-data", session, data: data.toString("utf8") }),
          );
          channel.on("exit", (code: number | null) =>
            close(target !== "host" && code === 126 ? "service_not_running" : "exited"),
          );
          channel.on("close", () => {
            close("exited");
            client.end();
          });
        };
        if (target === "host") client.shell(window, opened);
        else client.exec(inService(target, undefined), { pty: window }, opened);
      },
      (message) => close("ssh_disconnected", message),
    );
  }

  function startExec(frame: DeviceFrame) {
    const session = String(frame.session);
    const target = typeof frame.target === "string" ? frame.target : "host";
    const command = String(frame.command ?? "");
    const exit = (fields: Record<string, unknown>) => {
      const entry = running.get(session);
      if (!entry) return;
      running.delete(session);
      if (entry.kind === "exec" && entry.timer) clearTimeout(entry.timer);
      emit({ type: "exec-exit", session, ...fields });
    };
    if (target !== "host" && !SERVICE_NAME.test(target)) {
      emit({ type: "exec-exit", session, code: null, reason: "refused", message: `No service named ${target}` });
      return;
    }
    const entry: Running & { kind: "exec" } = { kind: "exec", client: new Client() };
    running.set(session, entry);
    void connect(
      entry.client,
      (client) => {
        if (running.get(session) !== entry) return client.end();
        client.exec(target === "host" ? command : inService(target, command), (error, channel) => {
          if (error) return exit({ code: null, reason: "error", message: error.message });
          entry.channel = channel;
          const seconds = Number(frame.timeout_s) || 0;
          if (seconds > 0) {
            entry.timer = setTimeout(() => {
              channel.signal("KILL");
              client.end();
              exit({ code: null, signal: "SIGKILL", reason: "timeout" });
            }, seconds * 1000);
          }
          channel.on("data", (data: Buffer) =>
            emit({ type: "exec-output", session, data: data.toString("utf8"), stream: "stdout" }),
          );
          channel.stderr.on("data", (data: Buffer) =>
            emit({ type: "exec-output", session, data: data.toString("utf8"), stream: "stderr" }),
          );
          channel.on("exit", (code: number | null, signal?: string) =>
            exit(code === null ? { code: null, ...(signal ? { signal: `SIG${signal}` } : {}) } : { code }),
          );
          channel.on("close", () => {
            exit({ code: null, reason: "error", message: "The device closed the command's channel" });
            client.end();
          });
        });
      },
      (message) => exit({ code: null, reason: "error", message }),
    );
  }

  function openTunnel(frame: DeviceFrame) {
    const tunnel = String(frame.tunnel);
    const socket = net.connect({ host: address, port: Number(frame.port) });
    running.set(tunnel, { kind: "tunnel", socket });
    const close = (reason: string) => {
      if (!running.delete(tunnel)) return;
      emit({ type: "tunnel-close", tunnel, reason });
    };
    socket.once("connect", () => emit({ type: "tunnel-open", tunnel }));
    socket.on("data", (data: Buffer) => emit({ type: "tunnel-data", tunnel, data: data.toString("base64") }));
    socket.once("error", (error: NodeJS.ErrnoException) => close(error.code === "ECONNREFUSED" ? "refused" : "closed"));
    socket.once("close", () => close("closed"));
  }

  function stop(id: string) {
    const entry = running.get(id);
    if (!entry) return;
    running.delete(id);
    if (entry.kind === "tunnel") entry.socket.destroy();
    else {
      if (entry.kind === "exec" && entry.timer) clearTimeout(entry.timer);
      entry.client.end();
    }
  }

  return {
    /** A frame for the device; false for one this link cannot carry. */
    send(frame: DeviceFrame): boolean {
      const id = String(frame.session ?? frame.tunnel ?? "");
      const entry = running.get(id);
      switch (frame.type) {
        case "terminal-open":
          openTerminal(frame);
          return true;
        case "terminal-data":
          if (entry?.kind === "terminal" && typeof frame.data === "string") entry.channel?.write(frame.data);
          return true;
        case "terminal-resize":
          if (entry?.kind === "terminal") entry.channel?.setWindow(Number(frame.rows), Number(frame.cols), 0, 0);
          return true;
        case "terminal-close":
        case "exec-cancel":
        case "tunnel-close":
          stop(id);
          return true;
        case "exec-start":
          startExec(frame);
          return true;
        case "tunnel-open":
          openTunnel(frame);
          return true;
        case "tunnel-data":
          if (entry?.kind === "tunnel" && typeof frame.data === "string")
            entry.socket.write(Buffer.from(frame.data, "base64"));
          return true;
        default:
          return false;
      }
    },
    close() {
      for (const id of [...running.keys()]) stop(id);
    },
  };
}
