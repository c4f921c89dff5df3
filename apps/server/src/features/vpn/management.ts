import type net from "node:net";

/**
 * OpenVPN's management interface (`--management <socket> unix --management-client
 * --management-client-auth`: openvpn connects to the server's socket), the part the device VPN uses: every client's authentication is asked here, and its session's start
 * and end are told here. Each event comes as a `>CLIENT:<kind>,<ids>` line, then its environment
 * as `>CLIENT:ENV,name=value` lines up to `>CLIENT:ENV,END`.
 */

export type ClientEnv = Record<string, string>;

export type ManagementEvents = {
  /** A client asks to connect (`reauth`: its TLS session renews): answer with allow or deny. */
  auth(client: { cid: number; kid: number; env: ClientEnv; reauth: boolean }): void;
  /** The client's session is up; `env.ifconfig_pool_remote_ip` is its address. */
  established(cid: number, env: ClientEnv): void;
  disconnected(cid: number, env: ClientEnv): void;
};

type Pending = { kind: "CONNECT" | "REAUTH" | "ESTABLISHED" | "DISCONNECT"; cid: number; kid: number; env: ClientEnv };

/** One parsed line's effect: an event completed, or nothing yet. */
export function createParser(events: ManagementEvents) {
  let pending: Pending | undefined;
  return (line: string) => {
    const client = /^>CLIENT:(CONNECT|REAUTH|ESTABLISHED|DISCONNECT),(\d+)(?:,(\d+))?/.exec(line);
    if (client) {
      pending = { kind: client[1] as Pending["kind"], cid: Number(client[2]), kid: Number(client[3] ?? 0), env: {} };
      return;
    }
    if (!pending || !line.startsWith(">CLIENT:ENV,")) return;
    const entry = line.slice(">CLIENT:ENV,".length);
    if (entry !== "END") {
      const equals = entry.indexOf("=");
      if (equals > 0) pending.env[entry.slice(0, equals)] = entry.slice(equals + 1);
      return;
    }
    const done = pending;
    pending = undefined;
    if (done.kind === "CONNECT" || done.kind === "REAUTH")
      events.auth({ cid: done.cid, kid: done.kid, env: done.env, reauth: done.kind === "REAUTH" });
    else if (done.kind === "ESTABLISHED") events.established(done.cid, done.env);
    else events.disconnected(done.cid, done.env);
  };
}

/** A quoted argument of a management command (no line breaks, quotes escaped). */
const quoted = (text: string) => `"${text.replace(/[\r\n]/g, " ").replace(/["\\]/g, "\\$&")}"`;

export type Management = {
  allow(cid: number, kid: number): void;
  deny(cid: number, kid: number, reason: string): void;
  /** Ends a client's session (its device was deleted or its key revoked). */
  kill(cid: number): void;
  close(): void;
};

/** The management commands over a connected socket, whose lines go to `events`. */
export function manage(socket: net.Socket, events: ManagementEvents): Management {
  const parse = createParser(events);
  let buffered = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    buffered += chunk;
    let end = buffered.indexOf("\n");
    while (end >= 0) {
      parse(buffered.slice(0, end).replace(/\r$/, ""));
      buffered = buffered.slice(end + 1);
      end = buffered.indexOf("\n");
    }
  });
  socket.on("error", () => undefined);
  const send = (command: string) => {
    if (!socket.destroyed) socket.write(`${command}\n`);
  };
  return {
    allow: (cid, kid) => send(`client-auth-nt ${cid} ${kid}`),
    deny: (cid, kid, reason) => send(`client-deny ${cid} ${kid} ${quoted(reason)} ${quoted(reason)}`),
    kill: (cid) => send(`client-kill ${cid}`),
    close: () => socket.end(),
  };
}
