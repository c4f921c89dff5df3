import type { FastifyRequest } from "fastify";
import type { Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { type DeviceIdentity, deviceByActor } from "./queries.ts";

/**
 * Which device is calling (its device key's actor), cached briefly: the device path must not
 * read the database per call (DESIGN §8). A moved device's fleet is at most this stale.
 */
const TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;

export function createDeviceIdentities(db: Pick<Queryable, "query">) {
  const cache = new Map<number, { device: DeviceIdentity; until: number }>();
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
      const device = await deviceByActor(db, caller.actor);
      if (!device) return undefined;
      if (cache.size >= MAX_ENTRIES) cache.clear();
      cache.set(caller.actor, { device, until: now + TTL_MS });
      return device;
    },
    forget(actor: number) {
      cache.delete(actor);
    },
  };
}
