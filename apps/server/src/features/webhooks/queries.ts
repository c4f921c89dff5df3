import type { Queryable } from "../../db/index.ts";

/** SQL of webhooks: subscriptions, the delivery queue, its log. */

type Db = Pick<Queryable, "query">;

export type WebhookRow = {
  id: number;
  created_at: string;
  organization: number;
  url: string;
  description: string;
  events: string[];
  fleets: number[] | null;
  is_enabled: boolean;
  consecutive_failures: number;
  disabled_reason: string | null;
};

const COLUMNS = `id, created_at, organization, url, description, events, fleets, is_enabled, consecutive_failures, disabled_reason`;

/** The test event, whatever the webhook subscribes to (even when disabled: the administrator asked). */
export async function enqueueTestEvent(db: Db, webhook: number): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO "webhook_delivery" (webhook, event, payload)
     SELECT w.id, 'webhook.test', jsonb_build_object('id', gen_random_uuid(), 'type', 'webhook.test', 'created_at', now(),
                                                    'organization', w.organization, 'fleet', NULL, 'data', jsonb_build_object('webhook', w.id))
       FROM "webhook" w WHERE w.id = $1
     RETURNING id`,
    [webhook],
  );
  return Number(rows[0]?.id);
}

export async function listWebhooks(db: Db, organization: number): Promise<WebhookRow[]> {
  const { rows } = await db.query<WebhookRow>(`SELECT ${COLUMNS} FROM "webhook" WHERE organization = $1 ORDER BY id`, [
    organization,
  ]);
  return rows;
}

export async function findWebhook(db: Db, organization: number, id: number): Promise<WebhookRow | undefined> {
  const { rows } = await db.query<WebhookRow>(`SELECT ${COLUMNS} FROM "webhook" WHERE organization = $1 AND id = $2`, [
    organization,
    id,
  ]);
  return rows[0];
}

export async function countWebhooks(db: Db, organization: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "webhook" WHERE organization = $1`, [
    organization,
  ]);
  return rows[0]?.n ?? 0;
}

/** Fleets of `ids` that are not the organization's. */
export async function foreignFleets(db: Db, organization: number, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: number }>(
    `SELECT v.id FROM unnest($2::int[]) AS v(id)
      WHERE NOT EXISTS (SELECT 1 FROM "application" a WHERE a.id = v.id AND a.organization = $1)`,
    [organization, ids],
  );
  return rows.map((row) => row.id);
}

export type WebhookInput = {
  url: string;
  description: string;
  events: string[];
  fleets: number[] | null;
};

export async function insertWebhook(
  db: Db,
  organization: number,
  input: WebhookInput & { secret: string },
): Promise<WebhookRow> {
  const { rows } = await db.query<WebhookRow>(
    `INSERT INTO "webhook" (organization, url, description, secret, events, fleets)
     VALUES ($1, $2, $3, $4, $5::text[], $6::int[]) RETURNING ${COLUMNS}`,
    [organization, input.url, input.description, input.secret, input.events, input.fleets],
  );
  const row = rows[0];
  if (!row) throw new Error("webhook: the insert returned no row");
  return row;
}

/** Changes what is given; enabling again clears the failure count and the reason it was disabled. */
export async function updateWebhook(
  db: Db,
  organization: number,
  id: number,
  input: Partial<WebhookInput> & { is_enabled?: boolean | undefined },
): Promise<WebhookRow | undefined> {
  const { rows } = await db.query<WebhookRow>(
    `UPDATE "webhook" SET
        url = COALESCE($3, url),
        description = COALESCE($4, description),
        events = COALESCE($5::text[], events),
        fleets = CASE WHEN $6::boolean THEN $7::int[] ELSE fleets END,
        is_enabled = COALESCE($8, is_enabled),
        consecutive_failures = CASE WHEN $8 THEN 0 ELSE consecutive_failures END,
        disabled_reason = CASE WHEN $8 THEN NULL ELSE disabled_reason END
      WHERE organization = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [
      organization,
      id,
      input.url ?? null,
      input.description ?? null,
      input.events ?? null,
      input.fleets !== undefined,
      input.fleets ?? null,
      input.is_enabled ?? null,
    ],
  );
  return rows[0];
}

export async function deleteWebhook(db: Db, organization: number, id: number): Promise<boolean> {
  const { rows } = await db.query(`DELETE FROM "webhook" WHERE organization = $1 AND id = $2 RETURNING id`, [
    organization,
    id,
  ]);
  return rows.length > 0;
}

export type DeliveryLogRow = {
  id: number;
  created_at: string;
  event: string;
  status: string;
  attempts: number;
  next_attempt_at: string;
  delivered_at: string | null;
  log: { attempt: number; at: string; status_code: number | null; error: string | null; duration_ms: number }[];
};

/** The newest deliveries of a webhook with their attempts. */
export async function listDeliveries(db: Db, webhook: number, limit: number): Promise<DeliveryLogRow[]> {
  const { rows } = await db.query<DeliveryLogRow>(
    `SELECT d.id::int AS id, d.created_at, d.event, d.status, d.attempts, d.next_attempt_at, d.delivered_at,
            COALESCE((SELECT jsonb_agg(jsonb_build_object('attempt', a.attempt, 'at', a.created_at,
                        'status_code', a.status_code, 'error', a.error, 'duration_ms', a.duration_ms) ORDER BY a.attempt)
                        FROM "webhook_attempt" a WHERE a.delivery = d.id), '[]'::jsonb) AS log
       FROM "webhook_delivery" d WHERE d.webhook = $1 ORDER BY d.id DESC LIMIT $2`,
    [webhook, limit],
  );
  return rows;
}

export type ClaimedDelivery = {
  id: number;
  event: string;
  payload: Record<string, unknown>;
  attempts: number;
  webhook: number;
  organization: number;
  url: string;
  secret: string;
};

/**
 * Claims up to `limit` due deliveries for this instance: FOR UPDATE SKIP LOCKED lets instances
 * claim side by side, and the lease (next_attempt_at moved ahead) hands a delivery to another
 * instance if this one dies before recording the outcome: at least once, never lost.
 */
export async function claimDueDeliveries(db: Db, limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<ClaimedDelivery>(
    `WITH due AS (
       SELECT d.id FROM "webhook_delivery" d
        WHERE d.status = 'pending' AND d.next_attempt_at <= now()
        ORDER BY d.next_attempt_at LIMIT $1
        FOR UPDATE SKIP LOCKED)
     UPDATE "webhook_delivery" d
        SET next_attempt_at = now() + make_interval(secs => $2), attempts = d.attempts + 1
       FROM due, "webhook" w
      WHERE d.id = due.id AND w.id = d.webhook
        AND (w.is_enabled OR d.event = 'webhook.test')
     RETURNING d.id::int AS id, d.event, d.payload, d.attempts, w.id AS webhook, w.organization, w.url, w.secret`,
    [limit, leaseSeconds],
  );
  return rows;
}

export type AttemptOutcome = { statusCode: number | null; error: string | null; durationMs: number };

/** Records a successful attempt: the delivery is done, the webhook's failure count starts over. */
export async function recordSuccess(db: Db, delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
  await insertAttempt(db, delivery, outcome);
  await db.query(`UPDATE "webhook_delivery" SET status = 'delivered', delivered_at = now() WHERE id = $1`, [
    delivery.id,
  ]);
  await db.query(`UPDATE "webhook" SET consecutive_failures = 0 WHERE id = $1 AND consecutive_failures <> 0`, [
    delivery.webhook,
  ]);
}

/**
 * Records a failed attempt: retried after `retryInSeconds` unless the delivery is older than
 * `giveUpAfterSeconds` (then failed for good); the webhook is disabled at `disableAfter`
 * failures in a row. True when this attempt disabled it.
 */
export async function recordFailure(
  db: Db,
  delivery: ClaimedDelivery,
  outcome: AttemptOutcome,
  policy: { retryInSeconds: number; giveUpAfterSeconds: number; disableAfter: number; reason: string },
): Promise<boolean> {
  await insertAttempt(db, delivery, outcome);
  await db.query(
    `UPDATE "webhook_delivery"
        SET next_attempt_at = now() + make_interval(secs => $2),
            status = CASE WHEN created_at < now() - make_interval(secs => $3) THEN 'failed' ELSE 'pending' END
      WHERE id = $1`,
    [delivery.id, policy.retryInSeconds, policy.giveUpAfterSeconds],
  );
  if (delivery.event === "webhook.test") return false;
  const { rows } = await db.query<{ disabled: boolean }>(
    `UPDATE "webhook" SET consecutive_failures = consecutive_failures + 1,
            is_enabled = is_enabled AND consecutive_failures + 1 < $2,
            disabled_reason = CASE WHEN is_enabled AND consecutive_failures + 1 >= $2 THEN $3 ELSE disabled_reason END
      WHERE id = $1
      RETURNING (disabled_reason = $3 AND NOT is_enabled AND consecutive_failures = $2) AS disabled`,
    [delivery.webhook, policy.disableAfter, policy.reason],
  );
  return rows[0]?.disabled === true;
}

async function insertAttempt(db: Db, delivery: ClaimedDelivery, outcome: AttemptOutcome) {
  await db.query(
    `INSERT INTO "webhook_attempt" (delivery, attempt, status_code, error, duration_ms) VALUES ($1, $2, $3, $4, $5)`,
    [delivery.id, delivery.attempts, outcome.statusCode, outcome.error, outcome.durationMs],
  );
}

/** The addresses of the organization's administrators (for the notice that a webhook was disabled). */
export async function administratorEmails(db: Db, organization: number): Promise<string[]> {
  const { rows } = await db.query<{ email: string }>(
    `SELECT u.email FROM "organization_membership" m
       JOIN "organization_membership_role" r ON r.id = m.organization_membership_role AND r.name = 'administrator'
       JOIN "user" u ON u.id = m."user"
      WHERE m.is_member_of__organization = $1 AND u.email IS NOT NULL`,
    [organization],
  );
  return rows.map((row) => row.email);
}

/** Drops finished deliveries (and their attempts) older than `days`; pending ones stay. */
export async function pruneDeliveries(db: Db, days: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM "webhook_delivery" WHERE id IN (
         SELECT id FROM "webhook_delivery"
          WHERE status <> 'pending' AND created_at < now() - make_interval(days => $1) LIMIT 10000)
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [days],
  );
  return rows[0]?.n ?? 0;
}
