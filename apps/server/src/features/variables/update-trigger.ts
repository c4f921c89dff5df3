import type { Relay } from "../devices/relay.ts";

/** Devices told at once per variable write; a fleet larger than this picks the change up by polling. */
export const UPDATE_TRIGGER_LIMIT = 1_000;
/** After the commit's target-state invalidation has reached every instance. */
const TRIGGER_DELAY_MS = 250;
const CONCURRENCY = 20;

/**
 * The instant update trigger (balena's `BALENA_SUPERVISOR_INSTANT_UPDATE_TRIGGER`): once a
 * variable write committed, its online devices get an `update` action over cloudlink and poll
 * their target state now instead of at their next poll. Offline devices and failures are ignored:
 * the poll picks the change up anyway.
 */
export function triggerUpdates(relay: Pick<Relay, "request">, devices: number[]) {
  const queue = devices.slice(0, UPDATE_TRIGGER_LIMIT);
  const timer = setTimeout(() => {
    const next = async (): Promise<void> => {
      const device = queue.shift();
      if (device === undefined) return;
      await relay.request(device, "update", {}).catch(() => undefined);
      return next();
    };
    for (let i = 0; i < CONCURRENCY; i++) void next();
  }, TRIGGER_DELAY_MS);
  timer.unref();
}
