import type { FastifyBaseLogger } from "fastify";
import type { Database } from "../../db/index.ts";
import { type FetchAllowList, OutboundFetchError, outboundFetch } from "../../lib/outbound-fetch.ts";
import type { Mailer } from "../mail/mailer.ts";
import { webhookDisabledMail } from "../mail/templates.ts";
import {
  type AttemptOutcome,
  administratorEmails,
  type ClaimedDelivery,
  claimDueDeliveries,
  recordFailure,
  recordSuccess,
} from "./queries.ts";
import { signWebhook } from "./signature.ts";

/**
 * Delivering webhooks from the queue (docs/audit-and-webhooks.md): every instance runs this; the
 * claim (queries.ts) keeps them apart. Each POST goes through the guarded fetcher (DESIGN §12).
 * Failed attempts are retried with exponential backoff (30 s doubling, at most 2 h apart) for a
 * day; 15 failures in a row disable the webhook and its organization's administrators get a mail.
 */

export const WEBHOOK_POLICY = {
  batch: 20,
  /** Longer than an attempt can take: the deadline below. */
  leaseSeconds: 60,
  timeoutMs: 10_000,
  firstRetrySeconds: 30,
  maxRetrySeconds: 2 * 60 * 60,
  giveUpAfterSeconds: 24 * 60 * 60,
  disableAfter: 15,
} as const;

export type WebhookDeps = {
  db: Database;
  allow: FetchAllowList;
  mail: Mailer;
  publicUrl: string;
  log: Pick<FastifyBaseLogger, "warn" | "info">;
  /** The signing secret from its sealed, stored form. */
  openSecret: (stored: string) => string;
  /** The first retry's delay (FLOTILLA_WEBHOOK_RETRY_BASE_MS); WEBHOOK_POLICY's when unset. */
  firstRetrySeconds?: number;
};

export const retryDelaySeconds = (attempt: number, firstRetrySeconds: number = WEBHOOK_POLICY.firstRetrySeconds) =>
  Math.min(firstRetrySeconds * 2 ** Math.max(0, attempt - 1), WEBHOOK_POLICY.maxRetrySeconds);

/** Claims and delivers what is due now; how many deliveries were attempted. */
export async function deliverDueWebhooks(deps: WebhookDeps): Promise<number> {
  const claimed = await claimDueDeliveries(deps.db, WEBHOOK_POLICY.batch, WEBHOOK_POLICY.leaseSeconds);
  await Promise.all(claimed.map((delivery) => deliverOne(deps, delivery)));
  return claimed.length;
}

async function deliverOne(deps: WebhookDeps, delivery: ClaimedDelivery): Promise<void> {
  const outcome = await post(deps, delivery, deps.openSecret(delivery.secret));
  const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
  if (ok) {
    await deps.db.transaction((tx) => recordSuccess(tx, delivery, outcome));
    return;
  }
  const disabled = await deps.db.transaction((tx) =>
    recordFailure(tx, delivery, outcome, {
      retryInSeconds: retryDelaySeconds(delivery.attempts, deps.firstRetrySeconds),
      giveUpAfterSeconds: WEBHOOK_POLICY.giveUpAfterSeconds,
      disableAfter: WEBHOOK_POLICY.disableAfter,
      reason: `${WEBHOOK_POLICY.disableAfter} delivery attempts in a row failed`,
    }),
  );
  if (disabled) await noticeDisabled(deps, delivery);
}

async function post(
  { allow, log }: Pick<WebhookDeps, "allow" | "log">,
  delivery: ClaimedDelivery,
  secret: string,
): Promise<AttemptOutcome> {
  const body = JSON.stringify(delivery.payload);
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  try {
    const response = await outboundFetch(delivery.url, {
      allow,
      timeoutMs: WEBHOOK_POLICY.timeoutMs,
      maxBytes: 64 * 1024,
      // A redirect is an answer like any other non-2xx: deliveries are not forwarded.
      maxRedirects: 0,
      post: {
        body,
        headers: {
          "content-type": "application/json",
          "flotilla-event": delivery.event,
          "flotilla-delivery": String(delivery.id),
          "flotilla-signature": signWebhook(secret, body, new Date()),
        },
      },
    });
    response.body.resume();
    return {
      statusCode: response.status,
      error: response.status >= 300 ? `HTTP ${response.status}` : null,
      durationMs: durationMs(),
    };
  } catch (error) {
    // One text for every failure without an HTTP answer: the resolver's and the socket's own
    // words would tell an organization's administrators which internal names exist and what
    // they resolve to. The detail goes to the server log.
    const detail = error instanceof OutboundFetchError ? error.detail : (error as Error).message;
    log.warn({ webhook: delivery.webhook, delivery: delivery.id, detail }, "webhook delivery failed");
    return { statusCode: null, error: WEBHOOK_UNREACHABLE, durationMs: durationMs() };
  }
}

/** What a delivery log shows for an attempt that got no HTTP answer. */
export const WEBHOOK_UNREACHABLE =
  "No answer: the URL's host could not be reached, or is not a public address Flotilla may send to";

async function noticeDisabled(deps: WebhookDeps, delivery: ClaimedDelivery) {
  deps.log.warn({ webhook: delivery.webhook }, "webhook disabled after repeated delivery failures");
  const { rows } = await deps.db.query<{ name: string }>(`SELECT name FROM "organization" WHERE id = $1`, [
    delivery.organization,
  ]);
  const name = rows[0]?.name ?? "your organization";
  const mail = webhookDisabledMail(
    deps.publicUrl,
    { id: delivery.organization, name },
    { url: delivery.url },
    WEBHOOK_POLICY.disableAfter,
  );
  for (const email of await administratorEmails(deps.db, delivery.organization)) await deps.mail.send(email, mail);
}
