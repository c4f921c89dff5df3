import type { AddressInfo } from "node:net";
import { StringDecoder } from "node:string_decoder";
import { MAX_TERMINAL_DATA_CHARS, TERMINAL_MAX_COLS, TERMINAL_MAX_ROWS, terminalSize } from "@flotilla/domain";
import type { FastifyBaseLogger } from "fastify";
import ssh2, {
  type Connection,
  type PublicKeyAuthContext,
  type ServerChannel,
  type Session,
  type TcpipRequestInfo,
} from "ssh2";
import type { AppContext } from "../../context.ts";
import type { Caller } from "../../lib/authenticate.ts";
import { mayDo } from "../data-api/actions.ts";
import { configuredBuilder } from "../releases/builder.ts";
import { terminalRefusal, visibleTerminalDevice } from "../terminal/access.ts";
import { TerminalLimitError, terminalMessage } from "../terminal/sessions.ts";
import { tunnelDevice, tunnelTarget } from "../tunnels/access.ts";
import { TunnelLimitError } from "../tunnels/tunnels.ts";

// ssh2 is CommonJS without named exports Node can see: plain `node` (not vitest) needs the default import.
const { Server, utils } = ssh2;

import { globalRolesOf } from "../users/service.ts";
import { type GatewayCommand, parseGatewayCommand, USAGE } from "./commands.ts";
import { parseGitCommand } from "./git-commands.ts";
import { type GitPushes, gitPushes } from "./git-push.ts";
import { loadSshHostKey } from "./host-key.ts";
import { runningContainers, sshUser } from "./queries.ts";

/**
 * The SSH gateway (`balena ssh`, docs/balena-cli.md "SSH gateway"): users log in with their
 * username and an SSH key they stored; the command names the device and the target
 * (commands.ts); the session is a terminal session over cloudlink like the web terminal's, with
 * the same permission checks and the same audit rows (`via: "ssh"`). `git push` to
 * `{user}@{host}:{organization}/{fleet}.git` builds a release (git-push.ts).
 */

/** Bounds (DESIGN §8): connections at once, time and tries to authenticate, input held before the shell runs. */
const MAX_CONNECTIONS = 512;
const AUTH_TIMEOUT_MS = 30_000;
const MAX_AUTH_ATTEMPTS = 10;
const MAX_PENDING_INPUT_CHARS = 256 * 1024;
/** How often the repositories of deleted fleets are looked for. */
const GIT_PRUNE_INTERVAL_MS = 6 * 60 * 60_000;

type Log = Pick<FastifyBaseLogger, "error" | "warn" | "debug">;

export type SshGateway = { port: number; close(): Promise<void> };

export async function startSshGateway(
  ctx: AppContext,
  log: Log,
  listen: { port: number; host: string },
): Promise<SshGateway> {
  const connections = new Set<Connection>();
  const pushes = gitPushes(ctx, log, configuredBuilder(ctx.config));
  const prune = () =>
    pushes.prune().catch((error: unknown) => log.error({ err: error }, "ssh gateway: pruning git repositories failed"));
  void prune();
  const pruning = setInterval(prune, GIT_PRUNE_INTERVAL_MS);
  pruning.unref();
  const server = new Server({ hostKeys: [loadSshHostKey(ctx.config.dataDir)], ident: "Flotilla" }, (client) => {
    if (connections.size >= MAX_CONNECTIONS) {
      client.end();
      return;
    }
    connections.add(client);
    client.on("close", () => connections.delete(client));
    client.on("error", (error) => log.debug({ err: error }, "ssh gateway: connection error"));
    const authTimer = setTimeout(() => client.end(), AUTH_TIMEOUT_MS);
    authTimer.unref();
    let caller: Caller | undefined;
    let attempts = 0;
    client.on("authentication", (auth) => {
      if (auth.method !== "publickey") return auth.reject(["publickey"]);
      if (++attempts > MAX_AUTH_ATTEMPTS) {
        auth.reject();
        client.end();
        return;
      }
      userOfKey(ctx, auth).then(
        (user) => {
          if (!user) return auth.reject(["publickey"]);
          // Without a signature the client only asks whether this key would do.
          if (auth.signature) caller = user;
          auth.accept();
        },
        (error: unknown) => {
          log.error({ err: error }, "ssh gateway: authentication failed");
          auth.reject(["publickey"]);
        },
      );
    });
    client.on("ready", () => {
      clearTimeout(authTimer);
      const user = caller;
      if (!user) return client.end();
      client.on("session", (accept) => handleSession(ctx, log, pushes, user, accept()));
      // `ssh -L port:{uuid}.balena:{port}` and `ssh -W {uuid}:{port}`: a tunnel to a device's port.
      client.on("tcpip", (accept, reject, info) => {
        forwardToDevice(ctx, user, info, accept, reject).catch((error: unknown) => {
          log.error({ err: error }, "ssh gateway: opening a tunnel failed");
          reject();
        });
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (error: Error) => log.error({ err: error }, "ssh gateway: server error"));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      clearInterval(pruning);
      for (const client of connections) client.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A direct-tcpip channel to a device's port: accepted once the device connected to it, refused
 * (without words: SSH has none for this) when the device is unknown, not allowed, offline or
 * not listening there.
 */
async function forwardToDevice(
  ctx: AppContext,
  caller: Caller,
  info: TcpipRequestInfo,
  accept: () => ServerChannel,
  reject: () => void,
) {
  const target = tunnelTarget(info.destIP, info.destPort);
  const device = target ? await tunnelDevice(ctx.db, caller, target.uuid) : "not_found";
  if (!target || typeof device === "string" || !caller.user) return reject();
  let channel: ServerChannel | undefined;
  let id: string | undefined;
  let opened: { id: string } | undefined;
  try {
    opened = await ctx.tunnels.open({
      deviceId: device.id,
      uuid: device.uuid,
      userId: caller.user.id,
      port: target.port,
      via: "ssh",
      sink: {
        opened() {
          const accepted = accept();
          channel = accepted;
          accepted.on("data", (chunk: Buffer) => {
            if (id) ctx.tunnels.write(id, chunk);
          });
          accepted.on("close", () => {
            if (id) ctx.tunnels.userClosed(id);
          });
        },
        data: (chunk) => channel?.write(chunk),
        close() {
          if (channel) channel.end();
          else reject();
        },
      },
    });
  } catch (error) {
    if (error instanceof TunnelLimitError) return reject();
    throw error;
  }
  if (!opened) return reject();
  id = opened.id;
}

/** The user whose stored key this is, once the signature (when sent) checks out. */
async function userOfKey(ctx: AppContext, auth: PublicKeyAuthContext): Promise<Caller | undefined> {
  const user = await sshUser(ctx.db, auth.username);
  if (!user) return undefined;
  const key = user.public_keys
    .map((text) => utils.parseKey(text))
    .find((parsed): parsed is Exclude<typeof parsed, Error> => {
      return !(parsed instanceof Error) && parsed.getPublicSSH().equals(auth.key.data);
    });
  if (!key) return undefined;
  if (auth.signature && !(auth.blob && key.verify(auth.blob, auth.signature, auth.hashAlgo))) return undefined;
  return {
    actor: user.actor,
    user: { id: user.id, username: user.username, email: user.email },
    globalRoles: await globalRolesOf(ctx.db.orm, user.id),
    session: undefined,
    apiKey: undefined,
  };
}

function handleSession(ctx: AppContext, log: Log, pushes: GitPushes, caller: Caller, session: Session) {
  let size = { cols: 80, rows: 24 };
  let resize: ((cols: number, rows: number) => void) | undefined;
  const sized = (info: { cols: number; rows: number }) => ({
    cols: terminalSize(info.cols, TERMINAL_MAX_COLS, 80),
    rows: terminalSize(info.rows, TERMINAL_MAX_ROWS, 24),
  });
  session.on("pty", (accept, _reject, info) => {
    size = sized(info);
    accept?.();
  });
  session.on("window-change", (accept, _reject, info) => {
    const next = sized(info);
    resize?.(next.cols, next.rows);
    accept?.();
  });
  session.on("env", (accept) => accept?.());
  session.on("shell", (accept) => refuse(accept(), `No device named. ${USAGE}`));
  session.on("exec", (accept, _reject, info) => {
    const channel = accept();
    const git = parseGitCommand(info.command);
    if (git) {
      pushes.run(caller, channel, git).catch((error: unknown) => {
        log.error({ err: error }, "ssh gateway: a git push failed");
        if (!channel.destroyed) refuse(channel, "The push failed on the server. Nothing was changed.");
      });
      return;
    }
    run(ctx, caller, channel, parseGatewayCommand(info.command), size, (handler) => {
      resize = handler;
    }).catch((error: unknown) => {
      log.error({ err: error }, "ssh gateway: opening a session failed");
      refuse(channel, terminalMessage("ssh_disconnected"));
    });
  });
  session.on("subsystem", (_accept, reject) => reject());
}

/** Tells the client why (on stderr) and ends the channel with a failure status. */
function refuse(channel: ServerChannel, message: string) {
  channel.stderr.write(`${message}\r\n`);
  channel.exit(1);
  channel.end();
}

async function run(
  ctx: AppContext,
  caller: Caller,
  channel: ServerChannel,
  command: GatewayCommand,
  size: { cols: number; rows: number },
  onResize: (handler: (cols: number, rows: number) => void) => void,
) {
  if (command.kind === "invalid") return refuse(channel, command.message);
  const device = await visibleTerminalDevice(ctx.db, caller, command.uuid);
  if (!device) return refuse(channel, `Device not found: ${command.uuid}`);
  if (command.kind === "list-containers") {
    // It tells only the service names: what a service terminal may see.
    if (!(await mayDo(ctx.db, caller, "device.ssh", { device: device.id }))) {
      return refuse(channel, terminalMessage("forbidden"));
    }
    for (const c of await runningContainers(ctx.db, device.id)) {
      channel.write(`${c.service_name} ${c.service_name}_${c.image}_${c.release}_${c.commit}\n`);
    }
    channel.exit(0);
    channel.end();
    return;
  }
  const refused = await terminalRefusal(ctx.db, caller, device, command.target);
  if (refused) return refuse(channel, terminalMessage(refused));

  // Input arrives before the device's shell runs (a piped script): it waits here, bounded.
  const pending: string[] = [];
  let pendingChars = 0;
  let sessionId: string | undefined;
  let connected = false;
  let channelClosed = false;
  let finished = false;
  let exitCode = 0;
  const finish = () => {
    if (finished) return;
    finished = true;
    if (channelClosed) return;
    channel.exit(exitCode);
    channel.end();
  };
  const type = (text: string) => {
    if (text === "") return;
    for (let at = 0; at < text.length; at += MAX_TERMINAL_DATA_CHARS) {
      const part = text.slice(at, at + MAX_TERMINAL_DATA_CHARS);
      if (connected && sessionId) ctx.terminals.input(sessionId, part);
      else if (pendingChars + part.length <= MAX_PENDING_INPUT_CHARS) {
        pending.push(part);
        pendingChars += part.length;
      }
    }
  };
  // A command after the target is typed into the shell, which then exits: the device runs shells, not commands.
  if (command.command) type(`${command.command}\nexit\n`);
  const decoder = new StringDecoder("utf8");
  channel.on("data", (chunk: Buffer) => type(decoder.write(chunk)));
  // End of input is Ctrl-D to the shell, as a terminal would send it.
  channel.on("end", () => type(`${decoder.end()}\u0004`));
  channel.on("close", () => {
    channelClosed = true;
    if (sessionId) ctx.terminals.browserClosed(sessionId);
  });

  let opened: { id: string } | undefined;
  try {
    opened = await ctx.terminals.open({
      deviceId: device.id,
      uuid: device.uuid,
      userId: caller.user?.id ?? 0,
      target: command.target,
      cols: size.cols,
      rows: size.rows,
      via: "ssh",
      sink: {
        send(message) {
          if (message.event === "ssh connect") {
            connected = true;
            for (const part of pending.splice(0)) if (sessionId) ctx.terminals.input(sessionId, part);
          } else if (message.event === "data") {
            if (!channelClosed) channel.write(message.data);
          } else if (message.reason !== "exited") {
            exitCode = 1;
            if (!channelClosed) channel.stderr.write(`${message.message}\r\n`);
          }
        },
        close: finish,
      },
    });
  } catch (error) {
    if (error instanceof TerminalLimitError) return refuse(channel, terminalMessage("too_many_sessions"));
    throw error;
  }
  if (!opened) return refuse(channel, terminalMessage("device_offline"));
  sessionId = opened.id;
  const id = opened.id;
  onResize((cols, rows) => ctx.terminals.resize(id, cols, rows));
  // The client may have gone while the session opened.
  if (channelClosed) ctx.terminals.browserClosed(id);
}
