import type { Queryable } from "../../db/index.ts";

/** SQL of the audit log's readers and its retention. */

type Db = Pick<Queryable, "query">;

export type AuditFilter = {
  /** Undefined: every organization's entries and those of none (platform staff only). */
  organization?: number | undefined;
  actor?: number | undefined;
  /** An exact action, or a prefix ending in "." (`variable.`). */
  action?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** Entries older than this id (the previous page's `next`). */
  before?: number | undefined;
  limit: number;
};

export type AuditEntryRow = {
  id: number;
  created_at: string;
  actor_user: number | null;
  actor_username: string | null;
  actor_api_key: number | null;
  /** The key's name while the key exists (a revoked key's entries keep only its id). */
  actor_api_key_name: string | null;
  organization: number | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  target_user: number | null;
  client_address: string | null;
  details: unknown;
};

/** Newest first, by id (append-only, so ids follow time). */
export async function listAuditEntries(db: Db, filter: AuditFilter): Promise<AuditEntryRow[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    values.push(value);
    where.push(sql(`$${values.length}`));
  };
  if (filter.organization !== undefined) add((p) => `e.organization = ${p}`, filter.organization);
  if (filter.actor !== undefined) add((p) => `e.actor_user = ${p}`, filter.actor);
  if (filter.action !== undefined) {
    if (filter.action.endsWith(".")) add((p) => `starts_with(e.action, ${p})`, filter.action);
    else add((p) => `e.action = ${p}`, filter.action);
  }
  if (filter.targetType !== undefined) add((p) => `e.target_type = ${p}`, filter.targetType);
  if (filter.targetId !== undefined) add((p) => `e.target_id = ${p}`, filter.targetId);
  if (filter.from !== undefined) add((p) => `e.created_at >= ${p}`, filter.from.toISOString());
  if (filter.to !== undefined) add((p) => `e.created_at < ${p}`, filter.to.toISOString());
  if (filter.before !== undefined) add((p) => `e.id < ${p}`, filter.before);
  values.push(filter.limit);
  const { rows } = await db.query<AuditEntryRow>(
    `SELECT e.id, e.created_at, e.actor_user, u.username AS actor_username, e.actor_api_key, k.name AS actor_api_key_name,
            e.organization, e.action, e.target_type, e.target_id, e.target_user, e.client_address, e.details
       FROM "audit_event" e LEFT JOIN "user" u ON u.id = e.actor_user LEFT JOIN "api_key" k ON k.id = e.actor_api_key
      ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY e.id DESC LIMIT $${values.length}`,
    values,
  );
  return rows.map((row) => ({ ...row, created_at: new Date(row.created_at).toISOString() }));
}

/** Deletes entries older than `days` days, a bounded batch at a time; how many went. */
export async function pruneAuditEntries(db: Db, days: number, batch = 10_000): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM "audit_event" WHERE id IN (
         SELECT id FROM "audit_event" WHERE created_at < now() - make_interval(days => $1) ORDER BY id LIMIT $2)
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [days, batch],
  );
  return rows[0]?.n ?? 0;
}
