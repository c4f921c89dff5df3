import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import type { FastifyBaseLogger } from "fastify";
import { type Management, type ManagementEvents, manage } from "./management.ts";

/**
 * Runs Debian's `openvpn` as the device VPN's server and keeps it running: balenaOS devices
 * connect with their uuid and device key as user name and password (checked by the server
 * through the management interface, never by a script), over TCP, each with an address of the
 * subnet. openvpn connects to the server's management socket and exits when that connection
 * closes, so it never outlives the server, even one killed with SIGKILL. If it ends, it is
 * started again (1 s, then up to 30 s apart).
 */

export type VpnCertificates = { caFile: string; certFile: string; keyFile: string };

export type OpenVpnOptions = {
  port: number;
  /** The address to listen on; 0.0.0.0 or :: listen everywhere. */
  host: string;
  /** `a.b.c.d/nn`: the server takes the first address, devices the rest. */
  subnet: string;
  certificates: VpnCertificates;
  binary?: string;
};

const MAX_RESTART_DELAY_MS = 30_000;

export function netmaskOf(prefix: number): string {
  const bits = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return [24, 16, 8, 0].map((shift) => (bits >>> shift) & 255).join(".");
}

export function openVpnArguments(options: OpenVpnOptions, managementSocket: string): string[] {
  const [network = "", prefix = "16"] = options.subnet.split("/");
  return [
    ...["--mode", "server", "--tls-server", "--proto", "tcp-server", "--port", String(options.port)],
    ...(["0.0.0.0", "::", ""].includes(options.host) ? [] : ["--local", options.host]),
    ...["--dev", "tun", "--topology", "subnet", "--server", network, netmaskOf(Number(prefix))],
    ...["--ca", options.certificates.caFile, "--cert", options.certificates.certFile],
    ...["--key", options.certificates.keyFile, "--dh", "none"],
    // Devices have no client certificate: their uuid and key are checked on every connect.
    ...["--verify-client-cert", "none", "--username-as-common-name"],
    ...["--management", managementSocket, "unix", "--management-client", "--management-client-auth"],
    // A device silent for 60 s is gone: its session ends and the device shows it.
    ...["--keepalive", "10", "60", "--persist-key", "--verb", "3"],
  ];
}

export type OpenVpn = { close(): Promise<void> };

export async function runOpenVpn(
  options: OpenVpnOptions,
  events: ManagementEvents & {
    /** The management connection is up: `management` answers the clients' authentications. */
    ready(management: Management): void;
    /** The process ended: every session with it. */
    stopped(): void;
  },
  logger: FastifyBaseLogger,
): Promise<OpenVpn> {
  // A private directory for the management socket: whoever can open it could let any client in.
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "flotilla-vpn-"));
  const socketPath = path.join(dir, "management.sock");
  let child: ChildProcess | undefined;
  let management: Management | undefined;
  let closing = false;
  let delay = 1000;
  let restartTimer: NodeJS.Timeout | undefined;
  // The first start settles this: listening, or why not (the last lines openvpn wrote).
  let firstStart: { resolve(): void; reject(error: Error): void } | undefined;
  const started = new Promise<void>((resolve, reject) => {
    firstStart = { resolve, reject };
  });
  const said: string[] = [];

  const start = () => {
    if (closing) return;
    const proc = spawn(options.binary ?? "openvpn", openVpnArguments(options, socketPath), {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = proc;
    const log = (line: string) => {
      said.push(line);
      if (said.length > 5) said.shift();
      if (/\b(ERROR|Exiting|Cannot|Options error)\b/.test(line)) logger.warn({ openvpn: line }, "vpn: openvpn says");
      else logger.debug({ openvpn: line }, "vpn: openvpn says");
    };
    if (proc.stdout) readline.createInterface({ input: proc.stdout }).on("line", log);
    if (proc.stderr) readline.createInterface({ input: proc.stderr }).on("line", log);
    // openvpn connects within a moment once it listens; one that does not is stopped.
    connectTimer = setTimeout(() => {
      logger.error("vpn: openvpn did not connect to its management socket; stopping it");
      proc.kill("SIGTERM");
    }, 10_000);
    proc.once("error", (error) => {
      logger.error({ err: error }, "vpn: cannot run openvpn");
      firstStart?.reject(new Error(`cannot run openvpn: ${error.message}`));
    });
    proc.once("exit", (code, signal) => {
      clearTimeout(connectTimer);
      management?.close();
      management = undefined;
      events.stopped();
      if (firstStart) {
        firstStart.reject(new Error(`openvpn ended (${code ?? signal}): ${said.join(" / ")}`));
        return;
      }
      if (closing) return;
      logger.warn({ code, signal }, `vpn: openvpn ended; starting it again in ${delay / 1000} s`);
      restartTimer = setTimeout(start, delay);
      delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
    });
  };

  /** openvpn's connection: the one of the process started last. */
  const server = net.createServer((socket) => {
    const proc = child;
    if (!proc || proc.exitCode !== null || management) {
      socket.destroy();
      return;
    }
    clearTimeout(connectTimer);
    management = manage(socket, events);
    socket.once("close", () => {
      // openvpn exits when its management connection closes; its exit starts it again.
      if (child === proc && proc.exitCode === null && !closing) proc.kill("SIGTERM");
    });
    delay = 1000;
    logger.info({ port: options.port }, "vpn: the device VPN is listening");
    events.ready(management);
    firstStart?.resolve();
    firstStart = undefined;
  });
  let connectTimer: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, resolve);
  });

  start();
  try {
    await started;
  } catch (error) {
    closing = true;
    server.close();
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    async close() {
      closing = true;
      if (restartTimer) clearTimeout(restartTimer);
      management?.close();
      const proc = child;
      if (proc && proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((resolve) => proc.once("exit", resolve));
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
      }
      server.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
