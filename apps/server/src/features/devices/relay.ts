import crypto from "node:crypto";
import type { CloudlinkAction, CloudlinkAttempt } from "@flotilla/domain";
import type { WebSocket } from "ws";
import { FlotillaError } from "../../errors.ts";
import type { Bus } from "./bus.ts";

/**
 * The cloudlink relay (docs/device-protocol.md "Cloudlink"): requests to a device go over its
 * websocket and wait for the answer with the same id, at most 30 s. With several API instances
 * the instance that holds the socket is found in Redis and answers through pub/sub.
 */

export const RELAY_TIMEOUT_MS = 30_000;
/** Answers waited for on one socket at a time: a device cannot be flooded with requests. */
const MAX_PENDING_PER_DEVICE = 100;

/** The actions relayed to devices: the domain's cloudlink actions. */
export type RelayAction = CloudlinkAction;

export type RelayAnswer = { status: number; body: unknown };

type Pending = { resolve(answer: RelayAnswer): void; reject(error: FlotillaError): void; timer: NodeJS.Timeout };
/**
 * `arrived`: when the socket's upgrade request came in (its lookup finishes later, out of order);
 * `attempt`: the agent's own count of its connects, which orders them better when it has one.
 */
type Connection = { socket: WebSocket; pending: Map<string, Pending>; arrived: bigint; attempt?: CloudlinkAttempt };

type RemoteRequest = { id: string; deviceId: number; action: RelayAction; data: unknown; replyTo: string };
type RemoteAnswer = { id: string; answer?: RelayAnswer; error?: string };

/** Owner records outlive a lost instance by at most this long; the socket's pings refresh it. */
const OWNER_TTL_MS = 90_000;
/**
 * A request for a device whose instance is gone (killed: its owner record stays, nobody hears its
 * channel) waits this long for the device to connect again, to any instance, and goes there.
 */
export const REATTACH_WAIT_MS = 10_000;
/** Deletes the owner record when it names this instance or is gone (1), leaves another's (0). */
const DELETE_IF_OURS = `local owner = redis.call('get', KEYS[1])
if owner == false or owner == ARGV[1] then redis.call('del', KEYS[1]) return 1 end
return 0`;

/** How long the last attempt of a device is kept: far longer than a handshake can be held up. */
const ATTEMPT_TTL_MS = 10 * 60_000;
/** Records the attempt (1) unless the last one recorded is a later one of the same run (0). */
const CLAIM_ATTEMPT = `local last = redis.call('get', KEYS[1])
if last then
  local run, n = string.match(last, '^(%x+)%.(%d+)$')
  if run == ARGV[1] and tonumber(n) > tonumber(ARGV[2]) then return 0 end
end
redis.call('set', KEYS[1], ARGV[1] .. '.' .. ARGV[2], 'PX', ARGV[3])
return 1`;

/** Whether `attempt` is an earlier connect of the same agent than `than`. */
const earlier = (attempt: CloudlinkAttempt | undefined, than: CloudlinkAttempt | undefined) =>
  attempt !== undefined && than !== undefined && attempt.run === than.run && attempt.n < than.n;

const mustBeOnline = () => new FlotillaError("device_must_be_online");

/** A frame the agent sent outside request/answer (`terminal-*`, `tunnel-*`, bulk commands' `exec-*`). */
export type DeviceFrame = { type: string } & Record<string, unknown>;

/**
 * A device reached another way than a cloudlink socket: a balenaOS device on the device VPN
 * (features/vpn), whose Supervisor API answers the actions and whose SSH server carries the
 * frames. The relay treats it as it treats a socket: one per device, found across instances.
 */
export type DeviceLink = {
  request(action: RelayAction, data: unknown): Promise<RelayAnswer>;
  /** A terminal, tunnel or command frame for the device; false when it cannot take it. */
  sendFrame(frame: DeviceFrame): boolean;
  /** The link was replaced or detached: end what runs over it. */
  close(): void;
};

export function createRelay(bus: Bus) {
  const ownerKey = (deviceId: number) => `${bus.prefix}cloudlink:${deviceId}`;
  const attemptKey = (deviceId: number) => `${bus.prefix}cloudlink-attempt:${deviceId}`;
  /** Without Redis: the last attempt seen of each device. */
  const lastAttempts = new Map<number, CloudlinkAttempt>();
  const connections = new Map<number, Connection>();
  const links = new Map<number, DeviceLink>();
  /** Requests this instance relayed to another instance, by id. */
  const remote = new Map<string, Pending>();
  /** Who hears a device's own frames, and of its socket closing (the terminal sessions). */
  const frameHandlers: ((deviceId: number, frame: DeviceFrame) => void)[] = [];
  const closeHandlers: ((deviceId: number) => void)[] = [];
  /** Who hears that a device connected, on any instance (queued bulk commands start then). */
  const attachHandlers: ((deviceId: number) => void)[] = [];
  /** Requests waiting for their device to connect again (its instance is gone), by device. */
  const reattachWaiters = new Map<number, Set<() => void>>();
  const reattached = (deviceId: number) => {
    const waiters = reattachWaiters.get(deviceId);
    reattachWaiters.delete(deviceId);
    for (const wake of waiters ?? []) wake();
  };
  bus.on("relay.attached", (payload) => {
    const deviceId = (payload as { deviceId?: unknown }).deviceId;
    if (typeof deviceId !== "number") return;
    reattached(deviceId);
    for (const handler of attachHandlers) handler(deviceId);
  });

  /** True when the device connected (here or elsewhere) within `ms`. */
  function waitForReattach(deviceId: number, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const waiters = reattachWaiters.get(deviceId) ?? new Set<() => void>();
      reattachWaiters.set(deviceId, waiters);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        waiters.delete(wake);
        if (waiters.size === 0 && reattachWaiters.get(deviceId) === waiters) reattachWaiters.delete(deviceId);
        resolve(false);
      }, ms);
      timer.unref();
      waiters.add(wake);
    });
  }

  function waitFor(registry: Map<string, Pending>, id: string): Promise<RelayAnswer> {
    return new Promise<RelayAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        registry.delete(id);
        reject(new FlotillaError("device_relay_timeout"));
      }, RELAY_TIMEOUT_MS);
      timer.unref();
      registry.set(id, {
        resolve: (answer) => {
          clearTimeout(timer);
          registry.delete(id);
          resolve(answer);
        },
        reject: (error) => {
          clearTimeout(timer);
          registry.delete(id);
          reject(error);
        },
        timer,
      });
    });
  }

  function sendLocal(connection: Connection, action: RelayAction, data: unknown): Promise<RelayAnswer> {
    if (connection.pending.size >= MAX_PENDING_PER_DEVICE) {
      return Promise.reject(new FlotillaError("too_many_requests"));
    }
    const id = crypto.randomUUID();
    const answer = waitFor(connection.pending, id);
    connection.socket.send(JSON.stringify({ type: "request", id, action, data }), (error) => {
      if (error) connection.pending.get(id)?.reject(mustBeOnline());
    });
    return answer;
  }

  bus.on("relay.request", (payload) => {
    const request = payload as RemoteRequest;
    const reply = (answer: RemoteAnswer) =>
      void bus.toInstance(request.replyTo, "relay.answer", answer).catch(() => undefined);
    if (!isHere(request.deviceId)) return reply({ id: request.id, error: "device_must_be_online" });
    sendHere(request.deviceId, request.action, request.data).then(
      (answer) => reply({ id: request.id, answer }),
      (error: FlotillaError) => reply({ id: request.id, error: error.code ?? "device_must_be_online" }),
    );
  });
  bus.on("relay.answer", (payload) => {
    const { id, answer, error } = payload as RemoteAnswer;
    const pending = remote.get(id);
    if (!pending) return;
    if (answer) pending.resolve(answer);
    else
      pending.reject(
        new FlotillaError(error === "device_relay_timeout" ? "device_relay_timeout" : "device_must_be_online"),
      );
  });

  const isHere = (deviceId: number) => connections.has(deviceId) || links.has(deviceId);
  /** The action to the device's socket or link on this instance (the caller checked there is one). */
  function sendHere(deviceId: number, action: RelayAction, data: unknown): Promise<RelayAnswer> {
    const connection = connections.get(deviceId);
    if (connection) return sendLocal(connection, action, data);
    const link = links.get(deviceId);
    return link ? link.request(action, data) : Promise.reject(mustBeOnline());
  }

  const recordOwner = (deviceId: number) =>
    bus.redis?.set(ownerKey(deviceId), bus.instanceId, "PX", OWNER_TTL_MS).catch(() => undefined);

  /** This instance when the device's socket is here, else the one Redis names (undefined: none). */
  async function currentOwner(deviceId: number): Promise<string | undefined> {
    if (isHere(deviceId)) return bus.instanceId;
    const owner = await bus.redis?.get(ownerKey(deviceId)).catch(() => null);
    return owner && owner !== bus.instanceId ? owner : undefined;
  }

  /**
   * After `gone` (an instance that no longer hears its channel) was found holding the device: the
   * instance the device connects to within `ms`, undefined if it does not come back in time.
   */
  async function ownerAfterReattach(deviceId: number, gone: string, ms: number): Promise<string | undefined> {
    const back = waitForReattach(deviceId, ms);
    // It may have connected again before the wait began.
    const now = await currentOwner(deviceId);
    if (now && now !== gone) return now;
    return (await back) ? currentOwner(deviceId) : undefined;
  }

  /**
   * Sends an action to the device wherever its socket is; 400 device_must_be_online without one.
   * When the instance holding it is gone, it waits up to `reattachWaitMs` for the device to come back.
   */
  async function request(
    deviceId: number,
    action: RelayAction,
    data: unknown,
    reattachWaitMs = REATTACH_WAIT_MS,
  ): Promise<RelayAnswer> {
    if (isHere(deviceId)) return sendHere(deviceId, action, data);
    const owner = await currentOwner(deviceId);
    if (!owner) throw mustBeOnline();
    const id = crypto.randomUUID();
    const answer = waitFor(remote, id);
    const message: RemoteRequest = { id, deviceId, action, data, replyTo: bus.instanceId };
    // Nobody heard it: the owner died without removing its record (kill -9) and would never
    // answer (the caller waited RELAY_TIMEOUT_MS for a 504). Its devices are reconnecting to
    // the instances left: the request waits for this one, once, and goes where it connected.
    const heard = await bus.toInstance(owner, "relay.request", message).catch(() => 0);
    if (heard > 0) return answer;
    remote.get(id)?.reject(mustBeOnline());
    answer.catch(() => undefined);
    if (reattachWaitMs <= 0 || !(await ownerAfterReattach(deviceId, owner, reattachWaitMs))) throw mustBeOnline();
    return request(deviceId, action, data, 0);
  }

  return {
    /**
     * Records a device's cloudlink connect attempt, on every instance: false when a later attempt
     * of the same agent came first (a handshake it gave up on, held up in a busy server's queue),
     * which must not replace the live socket nor mark the device connected. True without one.
     */
    async claimAttempt(deviceId: number, attempt: CloudlinkAttempt | undefined): Promise<boolean> {
      if (!attempt) return true;
      if (!bus.redis) {
        if (earlier(attempt, lastAttempts.get(deviceId))) return false;
        lastAttempts.set(deviceId, attempt);
        return true;
      }
      const claimed = await bus.redis
        .eval(CLAIM_ATTEMPT, 1, attemptKey(deviceId), attempt.run, attempt.n, ATTEMPT_TTL_MS)
        .catch(() => 1);
      return claimed === 1;
    },

    /**
     * A device's new cloudlink socket; an older one of the same device is closed. A socket of an
     * earlier attempt, or without attempts one whose upgrade arrived before the current one's
     * (its device lookup finished later), is the older one: it is closed instead, and so is one
     * the device already closed.
     */
    attach(deviceId: number, socket: WebSocket, arrived: bigint, attempt?: CloudlinkAttempt) {
      const previous = connections.get(deviceId);
      const sameRun = attempt !== undefined && previous?.attempt?.run === attempt.run;
      const older =
        previous !== undefined && (sameRun ? earlier(attempt, previous.attempt) : previous.arrived > arrived);
      if (socket.readyState !== socket.OPEN || older) {
        socket.close(4000, "replaced by a newer connection");
        return { refresh: () => undefined, detach: async () => false };
      }
      const connection: Connection = { socket, pending: new Map(), arrived, ...(attempt ? { attempt } : {}) };
      connections.set(deviceId, connection);
      if (previous) previous.socket.close(4000, "replaced by a newer connection");
      void recordOwner(deviceId);
      reattached(deviceId);
      for (const handler of attachHandlers) handler(deviceId);
      if (bus.redis) void bus.toAll("relay.attached", { deviceId }).catch(() => undefined);
      socket.on("message", (raw, isBinary) => {
        if (isBinary) return;
        let message: { type?: unknown; id?: unknown; status?: unknown; body?: unknown };
        try {
          message = JSON.parse(raw.toString());
        } catch {
          return;
        }
        if (
          typeof message?.type === "string" &&
          (message.type.startsWith("terminal-") ||
            message.type.startsWith("tunnel-") ||
            message.type.startsWith("exec-"))
        ) {
          for (const handler of frameHandlers) handler(deviceId, message as DeviceFrame);
          return;
        }
        if (message?.type !== "response" || typeof message.id !== "string") return;
        const status =
          typeof message.status === "number" && message.status >= 100 && message.status < 600 ? message.status : 502;
        connection.pending.get(message.id)?.resolve({ status, body: message.body ?? null });
      });
      return {
        /** The socket is alive (a pong): keep the owner record. */
        refresh: () => void recordOwner(deviceId),
        /** The socket closed: true when it was the device's current one (the device is now off cloudlink). */
        async detach(): Promise<boolean> {
          for (const pending of connection.pending.values()) pending.reject(mustBeOnline());
          // Whatever ran over this socket (terminal sessions) ended with it.
          for (const handler of closeHandlers) handler(deviceId);
          if (connections.get(deviceId) !== connection) return false;
          connections.delete(deviceId);
          if (!bus.redis || links.has(deviceId)) return true;
          // Another instance may hold a newer socket of this device by now: its record stays. In
          // one step, or its record written between a read and a delete here would go.
          const removed = await bus.redis.eval(DELETE_IF_OURS, 1, ownerKey(deviceId), bus.instanceId).catch(() => 1);
          return removed === 1;
        },
      };
    },

    /**
     * A device's link (the device VPN's session); a previous one of the same device is closed.
     * `frame` hands what the device sent to the frames' handlers, as a socket's messages are.
     */
    attachLink(deviceId: number, link: DeviceLink) {
      const previous = links.get(deviceId);
      links.set(deviceId, link);
      if (previous && previous !== link) previous.close();
      void recordOwner(deviceId);
      reattached(deviceId);
      for (const handler of attachHandlers) handler(deviceId);
      if (bus.redis) void bus.toAll("relay.attached", { deviceId }).catch(() => undefined);
      return {
        frame: (frame: DeviceFrame) => {
          if (links.get(deviceId) !== link) return;
          for (const handler of frameHandlers) handler(deviceId, frame);
        },
        refresh: () => {
          if (links.get(deviceId) === link) void recordOwner(deviceId);
        },
        /** True when it was the device's current link. */
        async detach(): Promise<boolean> {
          if (links.get(deviceId) !== link) return false;
          links.delete(deviceId);
          link.close();
          for (const handler of closeHandlers) handler(deviceId);
          if (!bus.redis || connections.has(deviceId)) return true;
          const removed = await bus.redis.eval(DELETE_IF_OURS, 1, ownerKey(deviceId), bus.instanceId).catch(() => 1);
          return removed === 1;
        },
      };
    },

    request,

    isConnectedHere: isHere,

    /**
     * The instance holding the device's socket: this one, another (Redis), or none. With
     * `reattachWaitMs` (a terminal or tunnel about to open), an owner that is gone (killed, its
     * record left) is not taken: the device's next socket, wherever it opens within that time, is.
     */
    async ownerOf(deviceId: number, reattachWaitMs = 0): Promise<string | undefined> {
      const owner = await currentOwner(deviceId);
      if (!owner || owner === bus.instanceId || reattachWaitMs <= 0) return owner;
      if ((await bus.toInstance(owner, "relay.ping", {}).catch(() => 0)) > 0) return owner;
      return ownerAfterReattach(deviceId, owner, reattachWaitMs);
    },

    /** Writes a frame to the device's socket on this instance; false without one. */
    sendFrame(deviceId: number, frame: DeviceFrame): boolean {
      const connection = connections.get(deviceId);
      if (!connection) return links.get(deviceId)?.sendFrame(frame) ?? false;
      if (connection.socket.readyState !== connection.socket.OPEN) return false;
      connection.socket.send(JSON.stringify(frame));
      return true;
    },

    onFrame(handler: (deviceId: number, frame: DeviceFrame) => void) {
      frameHandlers.push(handler);
    },

    onSocketClosed(handler: (deviceId: number) => void) {
      closeHandlers.push(handler);
    },

    /** A device's cloudlink socket opened here or on another instance. */
    onAttached(handler: (deviceId: number) => void) {
      attachHandlers.push(handler);
    },

    close() {
      for (const { socket } of connections.values()) socket.close(1001, "server shutting down");
      connections.clear();
      for (const link of links.values()) link.close();
      links.clear();
    },
  };
}

export type Relay = ReturnType<typeof createRelay>;
