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

/** Where a search looks: one device, or every device of one fleet. */
export type LogScope = { device: number } | { fleet: number };

export type LogSearch = {
  scope: LogScope;
  /** Case-insensitive substring of the message. */
  text?: string;
  /** A service of the fleet, by name (system lines have none). */
  service?: string;
  /** Device time (ms): from ≤ timestamp < to. */
  from?: number;
  to?: number;
  /** Keyset cursor: lines strictly older than this (timestamp, id). */
  before?: { timestamp: number; id: number };
  limit: number;
};

export type FoundLogLine = {
  id: number;
  /** The device's uuid. */
  device: string;
  message: string;
  timestamp: number;
  createdAt: number;
  isSystem: boolean;
  isStdErr: boolean;
  serviceId: number | null;
  serviceName: string | null;
};

/** `text` as a LIKE pattern matching it anywhere, its wildcards taken literally. */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * A device's or a fleet's lines, newest first by device time, keyset-paged on (timestamp, id).
 * Conditions are only written when given, so each query is planned for what it asks: a device
 * walks `device_log_device_time_idx`; a fleet walks `device_log_time_idx` keeping its devices'
 * lines, or, for text that matches few lines, reads the pg_trgm index's matches (docs/logs.md).
 */
export async function searchLogLines(db: Db, search: LogSearch): Promise<FoundLogLine[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where: string[] = [];
  let fleet: string;
  if ("device" in search.scope) {
    const device = param(search.scope.device);
    where.push(`l.device = ${device}`);
    fleet = `(SELECT belongs_to__application FROM "device" WHERE id = ${device})`;
  } else {
    fleet = param(search.scope.fleet);
    // With text, `device + 0` keeps the fleet's devices out of the index conditions: ANDing a
    // bitmap of every line of the fleet's devices with the text's costs more than it saves (10M
    // lines: p95 219 → see docs/benchmarks.md); the plan is then the time walk or the text index.
    const device = search.text ? "l.device + 0" : "l.device";
    where.push(`${device} = ANY(ARRAY(SELECT id FROM "device" WHERE belongs_to__application = ${fleet}))`);
  }
  if (search.text) where.push(`l.message ILIKE ${param(containsPattern(search.text))}`);
  if (search.service !== undefined) {
    where.push(
      `l.service_id = ANY(ARRAY(SELECT id FROM "service" WHERE application = ${fleet} AND service_name = ${param(search.service)}))`,
    );
  }
  if (search.from !== undefined) where.push(`l."timestamp" >= ${param(Math.trunc(search.from))}::bigint`);
  if (search.to !== undefined) where.push(`l."timestamp" < ${param(Math.trunc(search.to))}::bigint`);
  if (search.before) {
    where.push(
      `(l."timestamp", l.id) < (${param(Math.trunc(search.before.timestamp))}::bigint, ${param(search.before.id)}::bigint)`,
    );
  }
  const { rows } = await db.query<FoundLogLine>(
    `SELECT l.id::float8 AS id, d.uuid AS device, l.message, l."timestamp"::float8 AS "timestamp",
       l.created_at::float8 AS "createdAt", l.is_system AS "isSystem", l.is_std_err AS "isStdErr",
       l.service_id AS "serviceId", s.service_name AS "serviceName"
     FROM (
       SELECT * FROM "device_log" l WHERE ${where.join(" AND ")}
       ORDER BY l."timestamp" DESC, l.id DESC LIMIT ${param(search.limit)}
     ) l
     JOIN "device" d ON d.id = l.device
     LEFT JOIN "service" s ON s.id = l.service_id
     ORDER BY l."timestamp" DESC, l.id DESC`,
    params,
  );
  return rows;
}

export type LogRetention = { maxAgeDays: number | null; maxLinesPerDevice: number | null };

export async function readLogRetention(db: Db, organization: number): Promise<LogRetention> {
  const { rows } = await db.query<LogRetention>(
    `SELECT max_age_days AS "maxAgeDays", max_lines_per_device AS "maxLinesPerDevice"
     FROM "device_log_retention" WHERE organization = $1`,
    [organization],
  );
  return rows[0] ?? { maxAgeDays: null, maxLinesPerDevice: null };
}

export async function writeLogRetention(db: Db, organization: number, retention: LogRetention): Promise<void> {
  await db.query(
    `INSERT INTO "device_log_retention" (organization, max_age_days, max_lines_per_device, modified_at)
     VALUES ($1, $2, $3, now())
     ON CONFLICT (organization) DO UPDATE
       SET max_age_days = EXCLUDED.max_age_days, max_lines_per_device = EXCLUDED.max_lines_per_device, modified_at = now()`,
    [organization, retention.maxAgeDays, retention.maxLinesPerDevice],
  );
}

/** Organizations with a retention of their own. */
export async function listLogRetentions(db: Db): Promise<Array<LogRetention & { organization: number }>> {
  const { rows } = await db.query<LogRetention & { organization: number }>(
    `SELECT organization, max_age_days AS "maxAgeDays", max_lines_per_device AS "maxLinesPerDevice"
     FROM "device_log_retention" WHERE max_age_days IS NOT NULL OR max_lines_per_device IS NOT NULL`,
  );
  return rows;
}

/** Deletes up to `batch` of the lines (any device) stamped before `cutoff` (ms), oldest first. */
export async function pruneLogLinesBefore(db: Db, cutoff: number, batch: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM "device_log" WHERE id IN (
       SELECT id FROM "device_log" WHERE "timestamp" < $1::bigint ORDER BY "timestamp" LIMIT $2
     )`,
    [Math.trunc(cutoff), batch],
  );
  return rowCount;
}

/** Deletes up to `batch` lines of the organization's devices stamped before `cutoff` (ms). */
export async function pruneOrganizationLogLinesBefore(
  db: Db,
  organization: number,
  cutoff: number,
  batch: number,
): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM "device_log" WHERE id IN (
       SELECT old.id FROM "device" d
       JOIN "application" a ON a.id = d.belongs_to__application
       CROSS JOIN LATERAL (
         SELECT id FROM "device_log" l WHERE l.device = d.id AND l."timestamp" < $2::bigint LIMIT $3
       ) old
       WHERE a.organization = $1
       LIMIT $3
     )`,
    [organization, Math.trunc(cutoff), batch],
  );
  return rowCount;
}

/** Deletes up to `batch` lines of the organization's devices beyond each device's newest `keep`. */
export async function pruneOrganizationLogLinesBeyond(
  db: Db,
  organization: number,
  keep: number,
  batch: number,
): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM "device_log" WHERE id IN (
       SELECT old.id FROM "device" d
       JOIN "application" a ON a.id = d.belongs_to__application
       CROSS JOIN LATERAL (SELECT id FROM "device_log" WHERE device = d.id ORDER BY id DESC OFFSET $2 LIMIT 1) cut
       CROSS JOIN LATERAL (
         SELECT id FROM "device_log" l WHERE l.device = d.id AND l.id <= cut.id LIMIT $3
       ) old
       WHERE a.organization = $1
       LIMIT $3
     )`,
    [organization, keep, batch],
  );
  return rowCount;
}
