import type { FastifyRequest } from "fastify";
import type { Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { batchedLookup } from "./batched.ts";
import { type DeviceIdentity, devicesByActor } from "./queries.ts";
import type { Invalidation } from "./target-state.ts";

/**
 * Which device is calling (its device key's actor), cached: the device path must not read the
 * database per call (DESIGN §8). An entry goes when a data API write touches its device (a move
 * changes the fleet; the same invalidation as the target state's, on every instance) and after
 * TTL_MS at the latest, for writes that bypass the data API.
 */
const TTL_MS = 10 * 60_000;
const MAX_ENTRIES = 50_000;

export function createDeviceIdentities(db: Pick<Queryable, "query">) {
  const cache = new Map<number, { device: DeviceIdentity; until: number }>();
  /** device id → actor, to drop entries by device. */
  const actors = new Map<number, number>();
  const deviceByActor = batchedLookup((keys: readonly number[]) => devicesByActor(db, keys));
  return {
    /** The calling device, or 401 for any other caller. */
    async of(request: FastifyRequest): Promise<DeviceIdentity> {
      const device = await this.maybe(request);
      if (!device) throw new FlotillaError("unauthorized", "This needs a device key.");
      return device;
    },
    /** The calling device, undefined when a user (or anyone else) calls. */
    async maybe(request: FastifyRequest): Promise<DeviceIdentity | undefined> {
      const caller = requireAuth(request);
      if (caller.apiKey?.role !== "device-api-key") return undefined;
      const now = Date.now();
      const hit = cache.get(caller.actor);
      if (hit && hit.until > now) return hit.device;
      const device = await deviceByActor(caller.actor);
      if (!device) return undefined;
      if (cache.size >= MAX_ENTRIES) {
        cache.clear();
        actors.clear();
      }
      cache.set(caller.actor, { device, until: now + TTL_MS });
      actors.set(device.id, caller.actor);
      return device;
    },
    forget(actor: number) {
      cache.delete(actor);
    },
    /** Drops the devices a write touched (all of them for `all`); fleets' changes leave identities alone. */
    invalidate({ devices = [], all = false }: Invalidation) {
      if (all) {
        cache.clear();
        actors.clear();
        return;
      }
      for (const id of devices) {
        const actor = actors.get(id);
        if (actor === undefined) continue;
        cache.delete(actor);
        actors.delete(id);
      }
    },
  };
}

export type DeviceIdentities = ReturnType<typeof createDeviceIdentities>;
