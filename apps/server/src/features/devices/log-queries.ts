import type { Queryable } from "../../db/index.ts";
import type { DeviceLogLine } from "./device-logs.ts";

/** SQL of device logs: batched inserts, pruning, history reads, clearing. */

type Db = Pick<Queryable, "query">;

export type StoredLogLine = DeviceLogLine & { deviceId: number };

/**
 * One statement for the whole batch: arrays unnested into rows (PGlite and PostgreSQL alike).
 * Lines of devices deleted meanwhile are left out rather than failing the batch; ORDER BY keeps
 * ids in arrival order (the semi-join alone may reorder rows, and history is read by id).
 */
export async function insertLogLines(db: Db, lines: readonly StoredLogLine[]): Promise<void> {
  if (lines.length === 0) return;
  await db.query(
    `INSERT INTO "device_log" (device, created_at, "timestamp", message, is_system, is_std_err, service_id)
     SELECT u.device, u.created_at, u.ts, u.message, u.is_system, u.is_std_err, u.service_id
     FROM unnest($1::integer[], $2::bigint[], $3::bigint[], $4::text[], $5::boolean[], $6::boolean[], $7::integer[])
       WITH ORDINALITY AS u(device, created_at, ts, message, is_system, is_std_err, service_id, n)
     WHERE EXISTS (SELECT 1 FROM "device" d WHERE d.id = u.device)
     ORDER BY u.n`,
    [
      lines.map((l) => l.deviceId),
      lines.map((l) => Math.trunc(l.createdAt)),
      lines.map((l) => Math.trunc(l.timestamp)),
      lines.map((l) => l.message),
      lines.map((l) => l.isSystem),
      lines.map((l) => l.isStdErr),
      lines.map((l) => l.serviceId),
    ],
  );
}

/** Keeps the last `keep` lines of each of these devices (one statement, index range per device). */
export async function pruneLogLines(db: Db, deviceIds: readonly number[], keep: number): Promise<void> {
  if (deviceIds.length === 0) return;
  await db.query(
    `DELETE FROM "device_log" l
     USING (
       SELECT d AS device,
         (SELECT id FROM "device_log" WHERE device = d ORDER BY id DESC OFFSET $2 LIMIT 1) AS cut
       FROM unnest($1::integer[]) AS d
     ) c
     WHERE l.device = c.device AND c.cut IS NOT NULL AND l.id <= c.cut`,
    [deviceIds, keep],
  );
}

/** The last `count` lines of a device received at or after `start` (ms), oldest first. */
export async function readLogLines(db: Db, deviceId: number, count: number, start?: number): Promise<DeviceLogLine[]> {
  if (count <= 0) return [];
  const { rows } = await db.query<DeviceLogLine>(
    `SELECT message, "timestamp"::float8 AS "timestamp", created_at::float8 AS "createdAt", is_system AS "isSystem",
       is_std_err AS "isStdErr", service_id AS "serviceId"
     FROM (
       SELECT * FROM "device_log" WHERE device = $1 AND ($3::bigint IS NULL OR created_at >= $3::bigint)
       ORDER BY id DESC LIMIT $2
     ) last ORDER BY id`,
    [deviceId, count, start === undefined ? null : Math.trunc(start)],
  );
  return rows;
}

export async function deleteLogLines(db: Db, deviceId: number): Promise<void> {
  await db.query(`DELETE FROM "device_log" WHERE device = $1`, [deviceId]);
}
