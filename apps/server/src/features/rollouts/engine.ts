import { deviceHealth, evaluateGate, type WaveState } from "@flotilla/domain";
import type { Database, Queryable } from "../../db/index.ts";
import type { DeviceServices } from "../devices/services.ts";
import { unpinnedDevicesOf } from "../releases/queries.ts";
import { triggerUpdates } from "../variables/update-trigger.ts";
import { enqueueFleetEvent } from "../webhooks/events.ts";
import {
  devicesOfWaves,
  moveRollout,
  moveWave,
  type RolloutRow,
  recordWaveHealth,
  rolloutById,
  runningRollouts,
  waveHealthFacts,
  waveOf,
} from "./queries.ts";

/** How often each instance looks at the running rollouts (soak timers, devices gone quiet). */
export const ROLLOUT_TICK_MS = 5000;
/** Advisory lock namespace of rollout transitions ("roll"); the rollout id is the second key. */
const ROLLOUT_LOCK = 0x726f6c6c;

type Tx = Pick<Queryable, "query">;
type Devices = Pick<DeviceServices, "invalidate" | "relay" | "reports">;

/** What a transition changed: whose target state to drop and which devices to wake. */
export type Effect = { fleet: number; devices: number[] };

/**
 * Wave progression (docs/rollouts.md "How a wave advances"): a running rollout's current wave is
 * judged from what its devices reported; it passes (the next wave starts, or the rollout
 * completes), fails (the rollout halts, and the wave rolls back when the policy says so) or
 * waits. Each evaluation holds the rollout's advisory lock and every transition is a conditional
 * UPDATE, so several instances move a rollout exactly once.
 */
export async function evaluateRollout(tx: Tx, id: number, now: number): Promise<Effect | undefined> {
  const { rows } = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1, $2) AS locked", [
    ROLLOUT_LOCK,
    id,
  ]);
  if (!rows[0]?.locked) return undefined;
  // The row lock orders this evaluation with a control (pause, abort) made at the same time.
  const rollout = await rolloutById(tx, id, true);
  if (rollout?.status !== "running") return undefined;
  // The fleet was pinned elsewhere (or moved on): this rollout no longer decides anything.
  if (Number(rollout.fleet_release) !== Number(rollout.to_release)) {
    await moveRollout(tx, id, ["running"], { status: "aborted", reason: "the fleet's release changed" });
    return { fleet: rollout.fleet, devices: [] };
  }
  const wave = await waveOf(tx, id, rollout.current_wave);
  if (wave?.state !== "active") return undefined;
  const facts = await waveHealthFacts(tx, rollout, rollout.current_wave);
  const verdicts = facts.map((fact) => ({ device: fact.device, ...deviceHealth(fact) }));
  const counts = {
    total: verdicts.length,
    healthy: verdicts.filter((v) => v.verdict === "healthy").length,
    failed: verdicts.filter((v) => v.verdict === "failed").length,
  };
  const policy = rollout.policy.waves[rollout.current_wave];
  if (!policy) return undefined;
  const gate = evaluateGate(policy, counts, {
    now,
    healthSince: wave.gate_met_at ? new Date(wave.gate_met_at).getTime() : null,
    activeSince: wave.started_at ? new Date(wave.started_at).getTime() : null,
    skipSoak: wave.is_soak_skipped,
  });
  await recordWaveHealth(tx, id, rollout.current_wave, {
    devices: verdicts.map((v) => ({ device: v.device, health: v.verdict, reason: v.reason ?? null })),
    ...counts,
    healthShareMet: gate.verdict === "passed" || (gate.verdict === "waiting" && gate.healthShareMet),
  });
  if (gate.verdict === "waiting") return undefined;
  if (gate.verdict === "failed") return halt(tx, rollout, gate.reason);
  return advance(tx, rollout);
}

async function halt(tx: Tx, rollout: RolloutRow, reason: string): Promise<Effect | undefined> {
  const index = rollout.current_wave;
  const rollBack = rollout.policy.rollback_on_halt;
  const state: WaveState = rollBack ? "rolled_back" : "failed";
  if (!(await moveWave(tx, rollout.id, index, ["active"], state, reason))) return undefined;
  const why = `wave ${index + 1} failed: ${reason}${rollBack ? "; its devices went back to the previous release" : ""}`;
  await moveRollout(tx, rollout.id, ["running"], { status: "halted", reason: why });
  await enqueueFleetEvent(tx, rollout.fleet, "rollout.halted", {
    rollout: rollout.id,
    wave: index + 1,
    reason: why,
    rolled_back: rollBack,
  });
  return { fleet: rollout.fleet, devices: rollBack ? await devicesOfWaves(tx, rollout.id, [index]) : [] };
}

async function advance(tx: Tx, rollout: RolloutRow): Promise<Effect | undefined> {
  const index = rollout.current_wave;
  if (!(await moveWave(tx, rollout.id, index, ["active"], "passed"))) return undefined;
  const next = index + 1;
  if (next >= rollout.wave_count) {
    await moveRollout(tx, rollout.id, ["running"], { status: "completed" });
    // Devices without a wave (they joined mid-rollout) now follow the fleet's release too.
    return { fleet: rollout.fleet, devices: await unpinnedDevicesOf(tx, [rollout.fleet]) };
  }
  await moveWave(tx, rollout.id, next, ["pending"], "active");
  await moveRollout(tx, rollout.id, ["running"], { status: "running", currentWave: next });
  return { fleet: rollout.fleet, devices: await devicesOfWaves(tx, rollout.id, [next]) };
}

/** After a committed transition: the fleet's cached target states go, the moved devices fetch theirs now. */
export function applyEffect(devices: Devices, effect: Effect | undefined) {
  if (!effect) return;
  devices.invalidate({ fleets: [effect.fleet] });
  triggerUpdates(devices.relay, effect.devices);
}

/**
 * The per-instance driver: evaluates the rollouts of fleets whose devices' reports were just
 * written (no polling of devices), and every ROLLOUT_TICK_MS all running rollouts (soak timers).
 */
export function createRolloutEngine(options: {
  db: Database;
  devices: Devices;
  now?: () => number;
  onError?: (error: unknown) => void;
}) {
  const { db, devices, now = Date.now, onError = () => undefined } = options;
  let timer: NodeJS.Timeout | undefined;

  /** Evaluates one rollout until it waits (a passed wave may let the next, e.g. an empty one, pass too). */
  async function evaluate(id: number) {
    for (let step = 0; step < 20; step += 1) {
      const effect = await db.transaction((tx) => evaluateRollout(tx, id, now()));
      applyEffect(devices, effect);
      if (!effect) return;
    }
  }

  /** One evaluation at a time on this instance: a tick after a flush sees the flush's verdicts. */
  let queue: Promise<void> = Promise.resolve();
  function evaluateAll(fleets?: number[]): Promise<void> {
    if (fleets?.length === 0) return queue;
    const run = async () => {
      const running = await runningRollouts(db, fleets);
      // The tick learns which fleets roll out (started elsewhere, resumed, ended) for the state reports.
      if (!fleets) devices.reports.setRollingOut(running.map((rollout) => rollout.fleet));
      for (const { id } of running) await evaluate(id);
    };
    queue = queue.then(run, run);
    return queue;
  }

  return {
    /** Evaluates one rollout now (after a control), in turn with the others. */
    evaluate(id: number): Promise<void> {
      queue = queue.then(
        () => evaluate(id),
        () => evaluate(id),
      );
      return queue;
    },
    /** The fleets whose devices' reports reached the database; only those rolling out are looked at. */
    onReportsWritten(fleets: number[]) {
      const rolling = fleets.filter((fleet) => devices.reports.isRollingOut(fleet));
      if (rolling.length > 0) evaluateAll(rolling).catch(onError);
    },
    /** Evaluates every running rollout (the periodic tick; tests call it directly). */
    tick: () => evaluateAll(),
    start(intervalMs = ROLLOUT_TICK_MS) {
      timer = setInterval(() => evaluateAll().catch(onError), intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}

export type RolloutEngine = ReturnType<typeof createRolloutEngine>;
