import type { WebhookEvent } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";

/**
 * Queuing events for webhooks, in the transaction (or the very statement) of the change: rows of
 * a source (organization, fleet, data) become one delivery per subscribed webhook. When no
 * webhook wants the event, nothing is written.
 */

type Db = Pick<Queryable, "query">;

/**
 * SQL that inserts the deliveries for the rows of `source` (a CTE or subquery with columns
 * organization, fleet, data), the event type being the parameter `typeParam`: to end a statement
 * that made the change, so a hot path (the heartbeat's sweep) gains no statement.
 */
export function deliveriesFrom(source: string, typeParam: string): string {
  return `INSERT INTO "webhook_delivery" (webhook, event, payload)
     SELECT w.id, ${typeParam}::text,
            jsonb_build_object('id', gen_random_uuid(), 'type', ${typeParam}::text, 'created_at', now(),
                               'organization', s.organization, 'fleet', s.fleet, 'data', s.data)
       FROM ${source} s
       JOIN "webhook" w ON w.organization = s.organization AND w.is_enabled AND ${typeParam}::text = ANY(w.events)
                       AND (w.fleets IS NULL OR s.fleet = ANY(w.fleets))`;
}

/** An event of a fleet (a rollout halted). */
export async function enqueueFleetEvent(db: Db, fleet: number, type: WebhookEvent, data: Record<string, unknown>) {
  await db.query(
    `WITH source AS (SELECT a.organization, a.id AS fleet, $3::jsonb AS data FROM "application" a WHERE a.id = $1)
     ${deliveriesFrom("source", "$2")}`,
    [fleet, type, JSON.stringify(data)],
  );
}

/** release.succeeded / release.failed for releases that just ended so. */
export async function enqueueReleaseEvents(db: Db, releases: number[], type: WebhookEvent) {
  if (releases.length === 0) return;
  await db.query(
    `WITH source AS (
       SELECT a.organization, a.id AS fleet,
              jsonb_build_object('release', r.id, 'commit', r.commit, 'status', r.status,
                                 'is_final', r.is_final) AS data
         FROM "release" r JOIN "application" a ON a.id = r.belongs_to__application
        WHERE r.id = ANY($1::bigint[]))
     ${deliveriesFrom("source", "$2")}`,
    [releases, type],
  );
}

/** The webhook event of a release status, if it is one. */
export function releaseEventOf(status: unknown): WebhookEvent | undefined {
  if (status === "success") return "release.succeeded";
  if (status === "failed" || status === "error") return "release.failed";
  return undefined;
}
