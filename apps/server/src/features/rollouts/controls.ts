import type { Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { unpinnedDevicesOf } from "../releases/queries.ts";
import type { Effect } from "./engine.ts";
import {
  devicesOfWaves,
  moveRollout,
  moveWave,
  moveWaves,
  OPEN_STATUSES,
  type RolloutRow,
  rolloutById,
  skipSoak,
} from "./queries.ts";

/** The manual controls of a rollout (docs/rollouts.md "Controls"). */
export const ROLLOUT_CONTROLS = ["pause", "resume", "skip-soak", "abort", "promote"] as const;
export type RolloutControl = (typeof ROLLOUT_CONTROLS)[number];

type Tx = Pick<Queryable, "query">;

const refuse = (rollout: RolloutRow, control: RolloutControl) =>
  new FlotillaError("conflict", `cannot ${control.replace("-", " the ")} a rollout that is ${rollout.status}`);

/**
 * Applies a control in the caller's transaction, the rollout row locked (an evaluation on
 * another instance waits or sees the result). Answers what changed for the devices.
 */
export async function applyControl(tx: Tx, id: number, control: RolloutControl): Promise<Effect> {
  const rollout = await rolloutById(tx, id, true);
  if (!rollout) throw new FlotillaError("not_found", "Rollout not found");
  const none: Effect = { fleet: rollout.fleet, devices: [] };
  switch (control) {
    case "pause":
      if (!(await moveRollout(tx, id, ["running"], { status: "paused", reason: "paused by a user" })))
        throw refuse(rollout, control);
      return none;
    case "resume": {
      if (rollout.status === "paused") {
        await moveRollout(tx, id, ["paused"], { status: "running" });
        return none;
      }
      if (rollout.status !== "halted") throw refuse(rollout, control);
      // The halted wave starts again (its devices get the new release back if they were rolled back).
      await moveWave(tx, id, rollout.current_wave, ["failed", "rolled_back"], "active");
      await moveRollout(tx, id, ["halted"], { status: "running" });
      return { fleet: rollout.fleet, devices: await devicesOfWaves(tx, id, [rollout.current_wave]) };
    }
    case "skip-soak":
      if (!OPEN_STATUSES.includes(rollout.status) || !(await skipSoak(tx, id, rollout.current_wave)))
        throw refuse(rollout, control);
      return none;
    case "abort": {
      if (!OPEN_STATUSES.includes(rollout.status)) throw refuse(rollout, control);
      const started = await devicesOfWaves(
        tx,
        id,
        Array.from({ length: rollout.current_wave + 1 }, (_, i) => i),
      );
      await moveWaves(tx, id, ["active", "passed", "failed"], "rolled_back", "rollout aborted");
      await moveRollout(tx, id, OPEN_STATUSES, {
        status: "aborted",
        reason: "aborted by a user; every device went back to the previous release",
      });
      return { fleet: rollout.fleet, devices: started };
    }
    case "promote":
      if (!OPEN_STATUSES.includes(rollout.status)) throw refuse(rollout, control);
      await moveWaves(tx, id, ["pending", "active", "failed", "rolled_back"], "passed", "promoted to every device");
      await moveRollout(tx, id, OPEN_STATUSES, {
        status: "completed",
        reason: "promoted to every device by a user",
        currentWave: rollout.wave_count - 1,
      });
      return { fleet: rollout.fleet, devices: await unpinnedDevicesOf(tx, [rollout.fleet]) };
  }
}
