import type { CommandDeviceState } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";

/** SQL of bulk commands (docs/bulk-commands.md): runs, their devices, and the devices they target. */

type Db = Pick<Queryable, "query">;

export type CandidateDevice = {
  id: number;
  uuid: string;
  name: string;
  fleet: number;
  organization: number;
  os_version: string | null;
};

const CANDIDATE = `SELECT d.id, d.uuid, COALESCE(d.device_name, '') AS name, d.belongs_to__application AS fleet,
                          a.organization, d.os_version
                     FROM "device" d JOIN "application" a ON a.id = d.belongs_to__application`;

/** Devices named by id or uuid (unknown ones are simply absent). */
export async function devicesByKey(db: Db, ids: number[], uuids: string[]): Promise<CandidateDevice[]> {
  const { rows } = await db.query<CandidateDevice>(
    `${CANDIDATE} WHERE d.id = ANY($1::int[]) OR d.uuid = ANY($2::text[]) ORDER BY d.id`,
    [ids, uuids],
  );
  return rows;
}

/** A fleet's devices, optionally those with a tag (and value). */
export async function devicesOfFleet(
  db: Db,
  fleet: number,
  tag: { key: string; value?: string | undefined } | undefined,
  limit: number,
): Promise<CandidateDevice[]> {
  const { rows } = await db.query<CandidateDevice>(
    `${CANDIDATE}
      WHERE d.belongs_to__application = $1
        AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM "device_tag" t WHERE t.device = d.id AND t.tag_key = $2
               AND ($3::text IS NULL OR t.value = $3)))
      ORDER BY d.id LIMIT $4`,
    [fleet, tag?.key ?? null, tag?.value ?? null, limit],
  );
  return rows;
}

/** Keeps the devices that carry the tag (and value). */
export async function withTag(db: Db, ids: number[], key: string, value: string | undefined): Promise<Set<number>> {
  const { rows } = await db.query<{ device: number }>(
    `SELECT DISTINCT device FROM "device_tag" WHERE device = ANY($1::int[]) AND tag_key = $2
        AND ($3::text IS NULL OR value = $3)`,
    [ids, key, value ?? null],
  );
  return new Set(rows.map((row) => row.device));
}

export async function fleetOrganization(db: Db, fleet: number): Promise<number | undefined> {
  const { rows } = await db.query<{ organization: number }>(`SELECT organization FROM "application" WHERE id = $1`, [
    fleet,
  ]);
  return rows[0]?.organization;
}

export type NewRun = {
  organization: number;
  fleet: number | null;
  createdBy: number;
  apiKey: number | null;
  command: string;
  target: string;
  timeoutS: number;
  concurrency: number;
  queueWindowS: number;
  instance: string;
  devices: { id: number; state: CommandDeviceState; reason: string | null }[];
};

export async function insertRun(db: Db, run: NewRun): Promise<{ id: number; created_at: Date }> {
  const { rows } = await db.query<{ id: number; created_at: Date }>(
    `INSERT INTO "command_run"
       (organization, fleet, created_by, api_key, command, target, timeout_s, concurrency, queue_window_s, instance)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id, created_at`,
    [
      run.organization,
      run.fleet,
      run.createdBy,
      run.apiKey,
      run.command,
      run.target,
      run.timeoutS,
      run.concurrency,
      run.queueWindowS,
      run.instance,
    ],
  );
  const created = rows[0];
  if (!created) throw new Error("command_run insert returned nothing");
  await db.query(
    `INSERT INTO "command_run_device" (run, device, state, reason, finished_at)
     SELECT $1, v.id, v.state, v.reason,
            CASE WHEN v.state IN ('offline', 'refused') THEN now() END
       FROM jsonb_to_recordset($2::jsonb) AS v(id int, state text, reason text)`,
    [created.id, JSON.stringify(run.devices)],
  );
  return created;
}

/** A change of one device of a run; absent fields stay as they are. */
export type DevicePatch = {
  run: number;
  device: number;
  state: CommandDeviceState;
  exit_code?: number | null;
  started_at?: string | null;
  finished_at?: string | null;
  output?: string;
  truncated?: boolean;
  reason?: string | null;
};

/** Writes many device changes in one statement (a run of 1,000 devices is not 2,000 round trips). */
export async function updateRunDevices(db: Db, patches: DevicePatch[]): Promise<void> {
  if (patches.length === 0) return;
  await db.query(
    `UPDATE "command_run_device" c SET
        state = v.state,
        exit_code = CASE WHEN v.has_exit THEN v.exit_code ELSE c.exit_code END,
        started_at = COALESCE(v.started_at, c.started_at),
        finished_at = COALESCE(v.finished_at, c.finished_at),
        output = COALESCE(v.output, c.output),
        truncated = COALESCE(v.truncated, c.truncated),
        reason = COALESCE(v.reason, c.reason)
       FROM jsonb_to_recordset($1::jsonb) AS v(run int, device int, state text, has_exit boolean, exit_code int,
            started_at timestamptz, finished_at timestamptz, output text, truncated boolean, reason text)
      WHERE c.run = v.run AND c.device = v.device`,
    [JSON.stringify(patches.map((p) => ({ ...p, has_exit: "exit_code" in p })))],
  );
}

export async function finishRun(db: Db, run: number, status: "finished" | "cancelled"): Promise<void> {
  await db.query(`UPDATE "command_run" SET status = $2, finished_at = now() WHERE id = $1 AND status = 'running'`, [
    run,
    status,
  ]);
}

export type RunRow = {
  id: number;
  organization: number;
  fleet: number | null;
  created_by: number | null;
  api_key: number | null;
  command: string;
  target: string;
  timeout_s: number;
  concurrency: number;
  queue_window_s: number;
  created_at: Date;
  finished_at: Date | null;
  status: "running" | "finished" | "cancelled";
  instance: string | null;
  /** The creator's username, for the dashboard's "started by" (null for a deleted user). */
  created_by_username?: string | null;
};

const RUN_COLUMNS = `id, organization, fleet, created_by, api_key, command, target, timeout_s, concurrency, queue_window_s,
                     created_at, finished_at, status, instance`;

export async function runById(db: Db, id: number): Promise<RunRow | undefined> {
  const { rows } = await db.query<RunRow>(
    `SELECT ${RUN_COLUMNS}, (SELECT u.username FROM "user" u WHERE u.id = created_by) AS created_by_username
       FROM "command_run" WHERE id = $1`,
    [id],
  );
  return rows[0];
}

export type RunDeviceRow = {
  device: number;
  uuid: string;
  name: string;
  state: CommandDeviceState;
  exit_code: number | null;
  started_at: Date | null;
  finished_at: Date | null;
  output: string;
  truncated: boolean;
  reason: string | null;
};

export async function runDevices(db: Db, run: number): Promise<RunDeviceRow[]> {
  const { rows } = await db.query<RunDeviceRow>(
    `SELECT c.device, d.uuid, COALESCE(d.device_name, '') AS name, c.state, c.exit_code, c.started_at, c.finished_at,
            c.output, c.truncated, c.reason
       FROM "command_run_device" c JOIN "device" d ON d.id = c.device
      WHERE c.run = $1 ORDER BY c.device`,
    [run],
  );
  return rows;
}

/** Runs the caller created, or all of an organization's (its administrators), newest first. */
export async function listRuns(
  db: Db,
  filter: { createdBy?: number | undefined; organization?: number | undefined; fleet?: number | undefined },
  limit: number,
  before: number | undefined,
): Promise<(RunRow & { device_count: number; states: Record<string, number> })[]> {
  const { rows } = await db.query<RunRow & { device_count: number; states: Record<string, number> | null }>(
    `SELECT ${RUN_COLUMNS.replaceAll(/(\w+)/g, "r.$1")},
            (SELECT u.username FROM "user" u WHERE u.id = r.created_by) AS created_by_username,
            (SELECT count(*)::int FROM "command_run_device" c WHERE c.run = r.id) AS device_count,
            (SELECT jsonb_object_agg(s.state, s.n) FROM
               (SELECT state, count(*)::int AS n FROM "command_run_device" c WHERE c.run = r.id GROUP BY state) s) AS states
       FROM "command_run" r
      WHERE ($1::int IS NULL OR r.created_by = $1)
        AND ($2::int IS NULL OR r.organization = $2)
        AND ($3::int IS NULL OR r.fleet = $3)
        AND ($4::int IS NULL OR r.id < $4)
      ORDER BY r.id DESC LIMIT $5`,
    [filter.createdBy ?? null, filter.organization ?? null, filter.fleet ?? null, before ?? null, limit],
  );
  return rows.map((row) => ({ ...row, states: row.states ?? {} }));
}

/**
 * Runs left running by instances that are gone (a restart): their open devices failed with
 * "server restarted" and the runs finished. `alive` says whether an instance still runs.
 */
export async function abandonedRuns(db: Db): Promise<{ id: number; instance: string | null }[]> {
  const { rows } = await db.query<{ id: number; instance: string | null }>(
    `SELECT id, instance FROM "command_run" WHERE status = 'running'`,
  );
  return rows;
}

export async function failAbandonedRun(db: Db, run: number, reason: string): Promise<void> {
  await db.query(
    `UPDATE "command_run_device" SET
        state = CASE WHEN state = 'running' THEN 'failed' ELSE 'cancelled' END,
        reason = $2, finished_at = now()
      WHERE run = $1 AND state IN ('queued', 'waiting_online', 'running')`,
    [run, reason],
  );
  await finishRun(db, run, "finished");
}

/** The run's creator as they are now: their actor and global roles, whether the key used still works, and where the devices are. */
export async function creatorNow(
  db: Db,
  run: Pick<RunRow, "created_by" | "api_key">,
  deviceIds: number[],
): Promise<{ actor: number | null; globalRoles: string[]; keyValid: boolean; fleets: Map<number, number> }> {
  const { rows } = await db.query<{ actor: number | null; global_roles: string[]; key_valid: boolean }>(
    `SELECT (SELECT u.actor FROM "user" u WHERE u.id = $1) AS actor,
            COALESCE((SELECT array_agg(r.name) FROM "user__has__role" ur JOIN "role" r ON r.id = ur.role
                       WHERE ur.user = $1), '{}') AS global_roles,
            ($2::int IS NULL OR EXISTS (SELECT 1 FROM "api_key" k WHERE k.id = $2
                                          AND (k.expiry_date IS NULL OR k.expiry_date > now()))) AS key_valid`,
    [run.created_by, run.api_key],
  );
  const devices = await db.query<{ id: number; fleet: number }>(
    `SELECT id, belongs_to__application AS fleet FROM "device" WHERE id = ANY($1::int[])`,
    [deviceIds],
  );
  const row = rows[0];
  return {
    actor: row?.actor ?? null,
    globalRoles: row?.global_roles ?? [],
    keyValid: row?.key_valid ?? false,
    fleets: new Map(devices.rows.map((device) => [device.id, device.fleet])),
  };
}

/** The fleets a run's devices are in now. */
export async function fleetsOfRun(db: Db, run: number): Promise<number[]> {
  const { rows } = await db.query<{ fleet: number }>(
    `SELECT DISTINCT d.belongs_to__application AS fleet
       FROM "command_run_device" c JOIN "device" d ON d.id = c.device WHERE c.run = $1`,
    [run],
  );
  return rows.map((row) => row.fleet);
}
