import type { DeviceHealthFacts, ReleasePolicy, RolloutStatus, WaveCandidate, WaveState } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";

/** The rollout feature's SQL (docs/rollouts.md). */

type Db = Pick<Queryable, "query">;

/** Rollouts that are in effect: their devices' targets depend on their waves. */
export const OPEN_STATUSES: readonly RolloutStatus[] = ["running", "paused", "halted"];

export type RolloutRow = {
  id: number;
  fleet: number;
  from_release: number | null;
  to_release: number;
  status: RolloutStatus;
  reason: string | null;
  current_wave: number;
  wave_count: number;
  policy: ReleasePolicy;
  fleet_release: number | null;
};

const ROLLOUT_COLUMNS = `r.id, r.belongs_to__application AS fleet, r.from__release AS from_release,
  r.to__release AS to_release, r.status, r.reason, r.current_wave, r.wave_count, r.policy,
  (SELECT a.should_be_running__release FROM "application" a WHERE a.id = r.belongs_to__application) AS fleet_release`;

export async function rolloutById(db: Db, id: number, lock = false): Promise<RolloutRow | undefined> {
  const { rows } = await db.query<RolloutRow>(
    `SELECT ${ROLLOUT_COLUMNS} FROM "rollout" r WHERE r.id = $1${lock ? " FOR UPDATE" : ""}`,
    [id],
  );
  return rows[0];
}

/** The enabled release policy of a fleet, if any. */
export async function enabledPolicyOf(db: Db, fleet: number): Promise<unknown> {
  const { rows } = await db.query<{ policy: unknown }>(
    `SELECT policy FROM "release_policy" WHERE application = $1 AND is_enabled`,
    [fleet],
  );
  return rows[0]?.policy;
}

/**
 * A newer release reached the fleet: its open rollout is aborted and no earlier rollout decides
 * targets any more. Answers the rollout that was in effect before (the devices it held back
 * still run its previous release).
 */
export async function supersedeRollouts(db: Db, fleet: number, reason: string) {
  const { rows } = await db.query<{ from_release: number | null; to_release: number; status: RolloutStatus }>(
    `SELECT from__release AS from_release, to__release AS to_release, status FROM "rollout"
      WHERE belongs_to__application = $1 AND is_in_effect ORDER BY id DESC LIMIT 1`,
    [fleet],
  );
  await db.query(
    `UPDATE "rollout" SET is_in_effect = false, modified_at = now(),
            status = CASE WHEN status IN ('running', 'paused', 'halted') THEN 'aborted' ELSE status END,
            reason = CASE WHEN status IN ('running', 'paused', 'halted') THEN $2::text ELSE reason END,
            ended_at = COALESCE(ended_at, now())
      WHERE belongs_to__application = $1 AND is_in_effect`,
    [fleet, reason],
  );
  return rows[0];
}

/**
 * A user pinned these fleets' release: every device follows the pin. A rollout in progress to
 * that release is done, one to another release is aborted, and none decides targets any more
 * (not even an aborted one to the pinned release). Answers the rollouts ended.
 */
export async function endRolloutsOfPinnedFleets(db: Db, fleets: number[]): Promise<number[]> {
  if (fleets.length === 0) return [];
  const { rows } = await db.query<{ id: number }>(
    `UPDATE "rollout" r SET is_in_effect = false, modified_at = now(), ended_at = COALESCE(r.ended_at, now()),
            status = CASE WHEN r.status NOT IN ('running', 'paused', 'halted') THEN r.status
                          WHEN a.should_be_running__release = r.to__release THEN 'completed' ELSE 'aborted' END,
            reason = CASE WHEN r.status NOT IN ('running', 'paused', 'halted') THEN r.reason
                          WHEN a.should_be_running__release = r.to__release
                          THEN 'the fleet was pinned to this release: every device gets it'
                          ELSE 'the fleet was pinned to another release' END
       FROM "application" a
      WHERE a.id = r.belongs_to__application AND r.belongs_to__application = ANY($1::int[]) AND r.is_in_effect
     RETURNING r.id`,
    [fleets],
  );
  return rows.map((row) => Number(row.id));
}

/** The fleet's devices a rollout may move (pinned devices are never touched), with their tags. */
export async function waveCandidates(db: Db, fleet: number): Promise<WaveCandidate[]> {
  const { rows } = await db.query<WaveCandidate>(
    `SELECT d.id, d.uuid, COALESCE((SELECT jsonb_object_agg(t.tag_key, t.value) FROM "device_tag" t
                                     WHERE t.device = d.id), '{}'::jsonb) AS tags
       FROM "device" d WHERE d.belongs_to__application = $1 AND d.is_pinned_on__release IS NULL`,
    [fleet],
  );
  return rows.map((row) => ({ ...row, id: Number(row.id) }));
}

/** A running rollout with its waves (the first active) and each device's wave, in three statements. */
export async function createRollout(
  db: Db,
  values: { fleet: number; from: number; to: number; policy: ReleasePolicy; waves: Map<number, number> },
): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO "rollout" (belongs_to__application, from__release, to__release, wave_count, policy)
     VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING id`,
    [values.fleet, values.from, values.to, values.policy.waves.length, JSON.stringify(values.policy)],
  );
  const id = Number(rows[0]?.id);
  const counts = values.policy.waves.map((_, index) => [...values.waves.values()].filter((w) => w === index).length);
  await db.query(
    `INSERT INTO "rollout_wave" (rollout, wave_index, name, device_count, pending_count, state, started_at)
     SELECT $1, w.i, w.name, w.n, w.n, CASE WHEN w.i = 0 THEN 'active' ELSE 'pending' END,
            CASE WHEN w.i = 0 THEN now() END
       FROM jsonb_to_recordset($2::jsonb) AS w(i int, name text, n int)`,
    [id, JSON.stringify(values.policy.waves.map((wave, i) => ({ i, name: wave.name ?? null, n: counts[i] })))],
  );
  await db.query(
    `INSERT INTO "rollout_device" (rollout, device, wave_index)
     SELECT $1, v.device, v.wave FROM jsonb_to_recordset($2::jsonb) AS v(device int, wave int)`,
    [id, JSON.stringify([...values.waves].map(([device, wave]) => ({ device, wave })))],
  );
  return id;
}

/** The devices of some waves of a rollout (to tell them of their new target). */
export async function devicesOfWaves(db: Db, rollout: number, waves: number[]): Promise<number[]> {
  const { rows } = await db.query<{ device: number }>(
    `SELECT device FROM "rollout_device" WHERE rollout = $1 AND wave_index = ANY($2::int[]) ORDER BY device LIMIT 10000`,
    [rollout, waves],
  );
  return rows.map((row) => Number(row.device));
}

export type WaveRow = {
  wave_index: number;
  state: WaveState;
  started_at: Date | null;
  gate_met_at: Date | null;
  is_soak_skipped: boolean;
};

export async function waveOf(db: Db, rollout: number, index: number): Promise<WaveRow | undefined> {
  const { rows } = await db.query<WaveRow>(
    `SELECT wave_index, state, started_at, gate_met_at, is_soak_skipped FROM "rollout_wave" WHERE rollout = $1 AND wave_index = $2`,
    [rollout, index],
  );
  return rows[0];
}

/**
 * What the wave's devices reported, as health facts: still in the fleet and not pinned since,
 * with their service statuses for the new release.
 */
export async function waveHealthFacts(
  db: Db,
  rollout: Pick<RolloutRow, "id" | "fleet" | "to_release">,
  wave: number,
): Promise<(DeviceHealthFacts & { device: number })[]> {
  const { rows: expected } = await db.query<{ service_name: string }>(
    `SELECT s.service_name FROM "release_image" ri JOIN "image" i ON i.id = ri.image
       JOIN "service" s ON s.id = i.is_a_build_of__service WHERE ri.is_part_of__release = $1`,
    [rollout.to_release],
  );
  const { rows } = await db.query<{
    device: number;
    running: number | null;
    update_status: string | null;
    online: boolean;
    services: Record<string, string>;
  }>(
    `SELECT d.id AS device, d.is_running__release AS running,
            -- An update that failed before the wave (re)started is not this wave's failure.
            CASE WHEN d.last_update_status_event IS NULL OR d.last_update_status_event >= (
                   SELECT w.started_at FROM "rollout_wave" w WHERE w.rollout = rd.rollout AND w.wave_index = rd.wave_index)
                 THEN d.update_status END AS update_status,
            (d.api_heartbeat_state IN ('online', 'timeout') OR d.is_connected_to_vpn) AS online,
            COALESCE((SELECT jsonb_object_agg(s.service_name, ii.status) FROM "image_install" ii
                        JOIN "image" i ON i.id = ii.installs__image JOIN "service" s ON s.id = i.is_a_build_of__service
                       WHERE ii.device = d.id AND ii.is_provided_by__release = $3), '{}'::jsonb) AS services
       FROM "rollout_device" rd JOIN "device" d ON d.id = rd.device
      WHERE rd.rollout = $1 AND rd.wave_index = $2 AND d.belongs_to__application = $4 AND d.is_pinned_on__release IS NULL`,
    [rollout.id, wave, rollout.to_release, rollout.fleet],
  );
  const expectedServices = expected.map((row) => row.service_name);
  return rows.map((row) => ({
    device: Number(row.device),
    online: row.online,
    running_release: row.running === null ? null : Number(row.running),
    target_release: rollout.to_release,
    update_status: row.update_status,
    services: row.services,
    expected_services: expectedServices,
  }));
}

/** The verdicts of the wave's devices and its counts; the gate's health time set or cleared. */
export async function recordWaveHealth(
  db: Db,
  rollout: number,
  wave: number,
  values: {
    devices: { device: number; health: string; reason: string | null }[];
    healthy: number;
    failed: number;
    total: number;
    healthShareMet: boolean;
  },
) {
  await db.query(
    `UPDATE "rollout_device" rd SET health = v.health, reason = v.reason
       FROM jsonb_to_recordset($2::jsonb) AS v(device int, health text, reason text)
      WHERE rd.rollout = $1 AND rd.device = v.device AND (rd.health, rd.reason) IS DISTINCT FROM (v.health, v.reason)`,
    [rollout, JSON.stringify(values.devices)],
  );
  await db.query(
    `UPDATE "rollout_wave" SET device_count = $3::int, healthy_count = $4::int, failed_count = $5::int,
            pending_count = $3::int - $4::int - $5::int,
            gate_met_at = CASE WHEN $6::boolean THEN COALESCE(gate_met_at, now()) END
      WHERE rollout = $1 AND wave_index = $2`,
    [rollout, wave, values.total, values.healthy, values.failed, values.healthShareMet],
  );
}

/**
 * Moves a wave from one state to another, only if it is still in `from` (exactly once across
 * instances); answers whether it moved.
 */
export async function moveWave(
  db: Db,
  rollout: number,
  wave: number,
  from: readonly WaveState[],
  to: WaveState,
  reason: string | null = null,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE "rollout_wave" SET state = $4::text, reason = $5::text,
            started_at = CASE WHEN $4::text = 'active' THEN now() ELSE started_at END,
            ended_at = CASE WHEN $4::text = 'active' THEN NULL ELSE now() END,
            gate_met_at = CASE WHEN $4::text = 'active' THEN NULL ELSE gate_met_at END,
            is_soak_skipped = CASE WHEN $4::text = 'active' THEN false ELSE is_soak_skipped END
      WHERE rollout = $1 AND wave_index = $2 AND state = ANY($3::text[])`,
    [rollout, wave, from, to, reason],
  );
  return (rowCount ?? 0) > 0;
}

/** Moves every wave in `from` (abort, promote). */
export async function moveWaves(db: Db, rollout: number, from: readonly WaveState[], to: WaveState, reason: string) {
  await db.query(
    `UPDATE "rollout_wave" SET state = $3, reason = $4, ended_at = now()
      WHERE rollout = $1 AND state = ANY($2::text[])`,
    [rollout, from, to, reason],
  );
}

/** Moves the rollout from one status to another, only if it is still in `from`; answers whether it moved. */
export async function moveRollout(
  db: Db,
  rollout: number,
  from: readonly RolloutStatus[],
  values: { status: RolloutStatus; reason?: string | null; currentWave?: number },
): Promise<boolean> {
  const ended = values.status === "completed" || values.status === "aborted";
  const { rowCount } = await db.query(
    `UPDATE "rollout" SET status = $3::text, reason = $4::text, current_wave = COALESCE($5::int, current_wave),
            modified_at = now(), ended_at = CASE WHEN $6::boolean THEN now() END
      WHERE id = $1 AND status = ANY($2::text[])`,
    [rollout, from, values.status, values.reason ?? null, values.currentWave ?? null, ended],
  );
  return (rowCount ?? 0) > 0;
}

/** A halted wave's skip counts when it starts again (resume). */
export async function skipSoak(db: Db, rollout: number, wave: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE "rollout_wave" SET is_soak_skipped = true
      WHERE rollout = $1 AND wave_index = $2 AND state IN ('active', 'failed', 'rolled_back')`,
    [rollout, wave],
  );
  return (rowCount ?? 0) > 0;
}

/** The organization of a fleet (the audit log's). */
export async function organizationOf(db: Db, fleet: number): Promise<number | null> {
  const { rows } = await db.query<{ organization: number }>(`SELECT organization FROM "application" WHERE id = $1`, [
    fleet,
  ]);
  return rows[0]?.organization ?? null;
}

/** The running rollouts, of some fleets or of all. */
export async function runningRollouts(db: Db, fleets?: number[]): Promise<{ id: number; fleet: number }[]> {
  const { rows } = await db.query<{ id: number; fleet: number }>(
    `SELECT id, belongs_to__application AS fleet FROM "rollout"
      WHERE status = 'running'${fleets ? " AND belongs_to__application = ANY($1::int[])" : ""}`,
    fleets ? [fleets] : [],
  );
  return rows.map((row) => ({ id: Number(row.id), fleet: Number(row.fleet) }));
}

/** The rollout as the action endpoints answer it, with its waves. */
export async function rolloutSummary(db: Db, id: number) {
  const { rows } = await db.query(
    `SELECT r.id, r.belongs_to__application AS fleet, r.from__release, r.to__release, r.status, r.reason,
            r.current_wave, r.wave_count, r.created_at, r.ended_at,
            (SELECT COALESCE(jsonb_agg(jsonb_build_object('wave_index', w.wave_index, 'name', w.name, 'state', w.state,
                      'reason', w.reason, 'started_at', w.started_at, 'gate_met_at', w.gate_met_at, 'ended_at', w.ended_at,
                      'device_count', w.device_count, 'healthy_count', w.healthy_count, 'failed_count', w.failed_count,
                      'pending_count', w.pending_count) ORDER BY w.wave_index), '[]'::jsonb)
               FROM "rollout_wave" w WHERE w.rollout = r.id) AS waves
       FROM "rollout" r WHERE r.id = $1`,
    [id],
  );
  return rows[0];
}

/**
 * The release a device of a fleet with a rollout in effect should run (SQL for the target
 * state): the new one if its wave started and was not rolled back, else the previous one; no
 * rollout in effect (none, completed, superseded, overridden by a pin, or the fleet moved on)
 * → NULL: the fleet's release applies. Devices that joined after the rollout
 * started have no wave: they keep the previous release until it completes.
 */
export const rolloutTargetSql = (device: string, fleet: string) =>
  `(SELECT CASE WHEN EXISTS (SELECT 1 FROM "rollout_device" rd JOIN "rollout_wave" rw
                              ON rw.rollout = rd.rollout AND rw.wave_index = rd.wave_index
                             WHERE rd.rollout = ro.id AND rd.device = ${device}.id
                               AND rw.state IN ('active', 'passed', 'failed'))
                THEN ro.to__release ELSE ro.from__release END
     FROM "rollout" ro
    WHERE ro.belongs_to__application = ${fleet}.id AND ro.is_in_effect AND ro.status <> 'completed'
      AND ro.to__release = ${fleet}.should_be_running__release AND ro.from__release IS NOT NULL
    ORDER BY ro.id DESC LIMIT 1)`;
