import type { Queryable } from "../../db/index.ts";
import type { DeviceServices } from "../devices/services.ts";
import { endRolloutsOfPinnedFleets } from "../rollouts/queries.ts";
import { startRollouts } from "../rollouts/start.ts";
import { triggerUpdates } from "../variables/update-trigger.ts";
import { followLatestRelease, unpinnedDevicesOf } from "./queries.ts";

/**
 * Rollout (docs/releases.md "Rollout"): fleets that track the latest release move to it, and
 * once that is committed the fleets' cached target states go and their unpinned devices are
 * told to fetch the new one now (instead of at their next poll). A fleet with a release policy
 * starts a phased rollout instead (docs/rollouts.md): only its first wave's devices are told.
 *
 * `fleets` are the fleets whose releases changed; `changed` fleets had their target moved by
 * the write itself (a pin), so their devices are woken even when no tracking fleet moved;
 * `pinned` fleets were pinned to a release by a user, which ends their rollout in progress.
 */
export async function rollOut(
  tx: Pick<Queryable, "query">,
  devices: Pick<DeviceServices, "invalidate" | "relay" | "rolloutsStarted">,
  afterCommit: (task: () => void) => void,
  { fleets = [], changed = [], pinned = [] }: { fleets?: number[]; changed?: number[]; pinned?: number[] },
) {
  await endRolloutsOfPinnedFleets(tx, pinned);
  const moves = await followLatestRelease(tx, fleets);
  const phased = await startRollouts(tx, moves);
  const woken = [...new Set([...moves.map((move) => move.fleet), ...changed])];
  if (woken.length === 0) return;
  const targets = [
    ...(await unpinnedDevicesOf(
      tx,
      woken.filter((fleet) => !phased.has(fleet)),
    )),
    ...[...phased.values()].flat(),
  ];
  afterCommit(() => {
    if (phased.size > 0) devices.rolloutsStarted([...phased.keys()]);
    devices.invalidate({ fleets: woken });
    triggerUpdates(devices.relay, targets);
  });
}
