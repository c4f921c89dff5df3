import { assignWaves, parseReleasePolicy } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import { createRollout, devicesOfWaves, enabledPolicyOf, supersedeRollouts, waveCandidates } from "./queries.ts";

type Db = Pick<Queryable, "query">;

/** A tracking fleet moved from one release to another (releases/queries.ts followLatestRelease). */
export type ReleaseMove = { fleet: number; from: number | null; to: number };

/**
 * Starts a rollout for each move of a fleet with an enabled release policy, in the caller's
 * transaction: wave 1's devices get the new release, the others keep the one they run. A newer
 * release supersedes an open rollout, whose waiting devices still run its previous release.
 * A fleet's first release (nothing to keep) reaches every device at once, and a fleet without
 * unpinned devices gets no rollout. Answers, by fleet,
 * the devices whose target changed.
 */
export async function startRollouts(db: Db, moves: readonly ReleaseMove[]): Promise<Map<number, number[]>> {
  const started = new Map<number, number[]>();
  for (const move of moves) {
    const before = await supersedeRollouts(db, move.fleet, `superseded by release ${move.to}`);
    const stored = await enabledPolicyOf(db, move.fleet);
    if (stored === undefined) continue;
    // Devices a rollout held back (not completed: running, halted, aborted…) still run its previous release.
    const heldBack = before && before.status !== "completed" && Number(before.to_release) === move.from;
    const from = heldBack ? before.from_release : move.from;
    if (from === null || from === move.to) continue;
    const parsed = parseReleasePolicy(stored);
    // Policies are checked on write; one that no longer parses moves the fleet as before.
    if (!("policy" in parsed)) continue;
    const candidates = await waveCandidates(db, move.fleet);
    // No unpinned device: nothing to roll out in waves.
    if (candidates.length === 0) continue;
    const waves = assignWaves(parsed.policy, move.fleet, candidates);
    const id = await createRollout(db, { fleet: move.fleet, from, to: move.to, policy: parsed.policy, waves });
    started.set(move.fleet, await devicesOfWaves(db, id, [0]));
  }
  return started;
}
