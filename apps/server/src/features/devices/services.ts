import crypto from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.ts";
import type { Database } from "../../db/index.ts";
import { findApiKeysByHash } from "../api-keys/service.ts";
import { batchedLookup, batchedWrite } from "./batched.ts";
import { type Bus, createLocalBus, createRedisBus } from "./bus.ts";
import { createDeviceIdentities } from "./device-auth.ts";
import { createDeviceLogs } from "./device-logs.ts";
import { createHeartbeat } from "./heartbeat.ts";
import { vpnConnected, vpnDisconnected } from "./queries.ts";
import { createRelay } from "./relay.ts";
import { createSharedTargetStates } from "./shared-target-states.ts";
import { createStateReports } from "./state-report.ts";
import { createTargetStates, type Invalidation } from "./target-state.ts";

/**
 * The device path's in-memory services, one set per API instance: target-state cache,
 * heartbeat, batched state reports, log rings, the cloudlink relay, and the bus that links
 * instances (Redis when REDIS_URL is set).
 */
export async function createDeviceServices(
  config: Pick<Config, "redisUrl" | "databaseUrl" | "dataDir" | "deviceLogLines">,
  db: Database,
  logger: FastifyBaseLogger,
  options: { clock?: { now(): number }; sweepMs?: number; flushMs?: number } = {},
) {
  // Instances share Redis keys exactly when they share the database (device ids are the database's).
  const database = config.databaseUrl ?? config.dataDir;
  const prefix = `flotilla:${crypto.createHash("sha256").update(database).digest("hex").slice(0, 12)}:`;
  const bus: Bus = config.redisUrl ? await createRedisBus(config.redisUrl, prefix) : createLocalBus();
  const onError = (error: unknown) => logger.error({ err: error }, "device services: background write failed");
  const targetStates = createTargetStates(
    db,
    bus.redis ? createSharedTargetStates({ redis: bus.redis, prefix: bus.prefix, onError }) : undefined,
  );
  const identities = createDeviceIdentities(db);
  const heartbeat = createHeartbeat({
    db,
    redis: bus.redis,
    prefix: bus.prefix,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.sweepMs !== undefined ? { sweepMs: options.sweepMs } : {}),
    onError,
  });
  const reports = createStateReports({
    db,
    ...(options.flushMs !== undefined ? { flushMs: options.flushMs } : {}),
    onError,
  });
  const relay = createRelay(bus);
  const logs = createDeviceLogs({
    db,
    bus,
    keep: config.deviceLogLines,
    ...(options.flushMs !== undefined ? { flushMs: options.flushMs } : {}),
    onError,
  });
  /** Checked device keys by hash (lib/authenticate.ts): the hot path reads no key row while cached. */
  const deviceKeys = new Map<string, DeviceKeyEntry>();
  /**
   * Tokens found to be no key, by hash, until when (ms): a flood of one unknown token costs no
   * key look-up. Short-lived and bounded (oldest first out); a key registered meanwhile is
   * forgotten here by the registration (forgetUnknownKey), and any change of API keys forgets all.
   */
  const unknownKeys = new Map<string, number>();
  /**
   * Device keys verified in the last 10 minutes, by hash, for the rate limiter only (app.ts): a
   * real key has its own bucket. Unlike `deviceKeys` this is not cleared when keys change, so a
   * revocation elsewhere does not send every device of a NAT'd site to its address's bucket; a
   * revoked key keeps a bucket until its entry lapses, and is refused by authentication anyway.
   */
  const verifiedKeys = new Map<string, number>();
  const connects = batchedWrite<{ id: number; at: string }, string | null>((items) => vpnConnected(db, items), 50);
  const disconnects = batchedWrite(
    (closes: readonly { id: number; since: string | undefined }[]) => vpnDisconnected(db, closes),
    50,
  );
  bus.on("device-keys.drop", () => {
    deviceKeys.clear();
    unknownKeys.clear();
  });
  bus.on("unknown-keys.forget", (payload) => unknownKeys.delete(String((payload as { hash?: unknown }).hash)));
  bus.on("rollouts.started", (payload) => reports.addRollingOut((payload as { fleets: number[] }).fleets));
  bus.on("reports.user-wrote", (payload) => {
    const { devices, columns } = payload as { devices: number[]; columns: string[] };
    for (const device of devices) reports.userWrote(device, columns);
  });
  bus.on("target-state.invalidate", (payload) => {
    const { seq, ...change } = payload as Invalidation & { seq?: unknown };
    targetStates.received(change, seq);
    identities.invalidate(change);
  });
  return {
    bus,
    targetStates,
    /** Which device calls, by its key's actor (device-auth.ts). */
    identities,
    heartbeat,
    reports,
    relay,
    logs,
    deviceKeys,
    unknownKeys,
    verifiedKeys,
    /** The live API key with this hash (lib/authenticate.ts), looked up with the others of this turn. */
    apiKeyByHash: batchedLookup((hashes: readonly string[]) => findApiKeysByHash(db.orm, hashes)),
    /**
     * `is_connected_to_vpn` follows the cloudlink socket (queries.ts): the connects, and the
     * closes, of 50 ms go in one statement each, as a restart reconnects every device at once.
     * A connect answers its `last_vpn_event`, which the socket's close names, or null when a
     * socket of the device that arrived later is connected: that close writes nothing.
     */
    vpnConnected: (id: number, arrived: Date) => connects({ id, at: arrived.toISOString() }),
    vpnDisconnected: (close: { id: number; since: string | null | undefined }) =>
      close.since === null ? Promise.resolve(undefined) : disconnects({ id: close.id, since: close.since }),
    /** A key now exists with this hash (a device registered with its own key): on every instance. */
    forgetUnknownKey(hash: string) {
      unknownKeys.delete(hash);
      bus.toAll("unknown-keys.forget", { hash }).catch(onError);
    },
    /** After a committed change of API keys or a device deletion: forget the checked keys, on every instance. */
    dropDeviceKeys() {
      deviceKeys.clear();
      unknownKeys.clear();
      bus.toAll("device-keys.drop", {}).catch(onError);
    },
    /** After a committed write: drop the cached target states it affects, on every instance. */
    invalidate(change: Invalidation) {
      identities.invalidate(change);
      // The message carries the change's number in Redis, for the entries shared there.
      targetStates
        .invalidate(change)
        .then((seq) => bus.toAll("target-state.invalidate", { ...change, ...(seq === undefined ? {} : { seq }) }))
        .catch(onError);
    },
    /** After a committed /v7 write of reported fields: the devices' next reports overwrite them, on every instance. */
    userWroteReportedFields(devices: number[], columns: string[]) {
      for (const device of devices) reports.userWrote(device, columns);
      bus.toAll("reports.user-wrote", { devices, columns }).catch(onError);
    },
    /** After a committed rollout start: the fleets' wave-moving reports are written sooner, on every instance. */
    rolloutsStarted(fleets: number[]) {
      reports.addRollingOut(fleets);
      bus.toAll("rollouts.started", { fleets }).catch(onError);
    },
    /** Writes what is still in memory; call before the database closes. */
    async close() {
      relay.close();
      await Promise.all([reports.close(), heartbeat.close(), logs.close()]);
      await bus.close();
    },
  };
}

export type DeviceServices = Awaited<ReturnType<typeof createDeviceServices>>;

/** A checked device key: who calls, until when it may be trusted without reading it again. */
export type DeviceKeyEntry = { caller: import("../../lib/authenticate.ts").Caller; until: number };
