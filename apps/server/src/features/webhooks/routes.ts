import net from "node:net";
import { WEBHOOK_EVENTS, WEBHOOK_LIMITS } from "@flotilla/domain";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { fetchAllowList, isPermittedAddress } from "../../lib/outbound-fetch.ts";
import { parseInput } from "../../lib/validation.ts";
import { auditActorOf, recordAudit } from "../audit/record.ts";
import { mayDo } from "../data-api/actions.ts";
import {
  countWebhooks,
  deleteWebhook,
  enqueueTestEvent,
  findWebhook,
  foreignFleets,
  insertWebhook,
  listDeliveries,
  listWebhooks,
  pruneDeliveries,
  updateWebhook,
  type WebhookRow,
} from "./queries.ts";
import { newWebhookSecret } from "./signature.ts";
import { deliverDueWebhooks, type WebhookDeps } from "./worker.ts";

/**
 * Webhook management for an organization's administrators (docs/audit-and-webhooks.md), and the
 * delivery worker every instance runs.
 */

const WORKER_INTERVAL_MS = 2_000;
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** How long delivered and given-up deliveries stay in the delivery log. */
export const DELIVERY_LOG_DAYS = 30;

const url = z
  .string({ error: "is required" })
  .max(WEBHOOK_LIMITS.urlLength, `must be at most ${WEBHOOK_LIMITS.urlLength} characters`)
  .refine((value) => {
    try {
      const parsed = new URL(value);
      return (parsed.protocol === "http:" || parsed.protocol === "https:") && !parsed.username && !parsed.password;
    } catch {
      return false;
    }
  }, "must be an http(s) URL without credentials");
const events = z
  .array(z.enum(WEBHOOK_EVENTS, { error: `must be events among ${WEBHOOK_EVENTS.join(", ")}` }))
  .min(1, "must name at least one event")
  .max(WEBHOOK_EVENTS.length)
  .transform((list) => [...new Set(list)]);
const fleets = z
  .array(z.number({ error: "must be fleet ids" }).int().positive().max(2_147_483_647))
  .max(WEBHOOK_LIMITS.fleets, `must be at most ${WEBHOOK_LIMITS.fleets} fleets`)
  .nullable();
const description = z.string().max(WEBHOOK_LIMITS.descriptionLength);

const createBody = z.strictObject({ url, events, fleets: fleets.optional(), description: description.optional() });
const updateBody = z.strictObject({
  url: url.optional(),
  events: events.optional(),
  fleets: fleets.optional(),
  description: description.optional(),
  is_enabled: z.boolean({ error: "must be true or false" }).optional(),
});

const shown = (row: WebhookRow) => ({
  id: row.id,
  created_at: new Date(row.created_at).toISOString(),
  organization: row.organization,
  url: row.url,
  description: row.description,
  events: row.events,
  fleets: row.fleets,
  is_enabled: row.is_enabled,
  consecutive_failures: row.consecutive_failures,
  disabled_reason: row.disabled_reason,
});

export async function webhookRoutes(app: FastifyInstance, ctx: AppContext) {
  const allow = fetchAllowList(ctx.config.fetchAllow);
  const deps: WebhookDeps = {
    db: ctx.db,
    allow,
    mail: ctx.mail,
    publicUrl: ctx.config.publicUrl,
    log: app.log,
    firstRetrySeconds: ctx.config.webhookRetryBaseMs / 1000,
    openSecret: (stored) => ctx.webhookSecrets.open(stored),
  };
  let round: Promise<void> | undefined;
  let prunedAt = 0;
  const job = setInterval(() => {
    if (round) return;
    // The delivery log is kept DELIVERY_LOG_DAYS; pruning is idempotent, so instances need no lock.
    const prune = Date.now() - prunedAt > PRUNE_INTERVAL_MS;
    if (prune) prunedAt = Date.now();
    round = (prune ? pruneDeliveries(ctx.db, DELIVERY_LOG_DAYS).then(() => undefined) : Promise.resolve())
      .then(() => deliverDueWebhooks(deps))
      .then(() => undefined)
      .catch((error) => app.log.warn({ err: error }, "webhooks: delivery round failed"))
      .finally(() => {
        round = undefined;
      });
  }, WORKER_INTERVAL_MS);
  job.unref();
  // A round in flight finishes (and records its attempts) before the database closes.
  app.addHook("onClose", async () => {
    clearInterval(job);
    await round;
  });

  /** The route's organization for one who may manage its webhooks: 404 to non-members, 403 to members. */
  async function managedOrganization(request: FastifyRequest): Promise<number> {
    const user = requireUser(request);
    const raw = (request.params as { org: string }).org;
    if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid id passed in url");
    const id = Number(raw);
    const { rows } = await ctx.db.query(
      `SELECT 1 FROM "organization" o WHERE o.id = $1
          AND (EXISTS (SELECT 1 FROM "organization_membership" m WHERE m.is_member_of__organization = o.id AND m."user" = $2) OR $3)`,
      [id, user.id, user.caller.globalRoles.includes("balena_admin")],
    );
    if (rows.length === 0) throw new FlotillaError("not_found", "Organization not found");
    if (!(await mayDo(ctx.db, user.caller, "organization.manage_webhooks", { organization: id }))) {
      throw new FlotillaError("forbidden", "Only the organization's administrators manage its webhooks.");
    }
    return id;
  }

  const webhookId = (request: FastifyRequest) => {
    const raw = (request.params as { id: string }).id;
    if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid webhook id passed in url");
    return Number(raw);
  };
  const notFound = () => new FlotillaError("not_found", "Webhook not found");

  /** A literal address the guard would refuse is refused now, with a clear text; names are checked at each delivery. */
  function checkUrl(value: string) {
    const host = new URL(value).hostname.replace(/^\[(.*)\]$/, "$1");
    if (net.isIP(host) && !isPermittedAddress(host, host, allow)) {
      throw new FlotillaError(
        "bad_request",
        `url: ${host} is not a public address; webhooks are sent to public hosts only`,
      );
    }
  }

  async function checkFleets(organization: number, ids: number[] | null | undefined) {
    if (!ids) return;
    const foreign = await foreignFleets(ctx.db, organization, ids);
    if (foreign.length > 0)
      throw new FlotillaError("bad_request", `fleets: not fleets of this organization: ${foreign.join(", ")}`);
  }

  app.get("/webhooks/v1/organizations/:org/webhooks", async (request) => {
    const organization = await managedOrganization(request);
    return { webhooks: (await listWebhooks(ctx.db, organization)).map(shown) };
  });

  app.post("/webhooks/v1/organizations/:org/webhooks", async (request, reply) => {
    const organization = await managedOrganization(request);
    const body = parseInput(createBody, request.body);
    checkUrl(body.url);
    await checkFleets(organization, body.fleets);
    const secret = newWebhookSecret();
    const row = await ctx.db.transaction(async (tx) => {
      if ((await countWebhooks(tx, organization)) >= WEBHOOK_LIMITS.perOrganization) {
        throw new FlotillaError(
          "bad_request",
          `An organization has at most ${WEBHOOK_LIMITS.perOrganization} webhooks.`,
        );
      }
      const created = await insertWebhook(tx, organization, {
        url: body.url,
        description: body.description ?? "",
        events: body.events,
        fleets: body.fleets ?? null,
        secret: ctx.webhookSecrets.seal(secret),
      });
      await recordAudit(tx, auditActorOf(request), {
        action: "webhook.created",
        organization,
        targetType: "webhook",
        targetId: created.id,
        details: { url: created.url, events: created.events },
      });
      return created;
    });
    // The secret is shown this once.
    return reply.code(201).send({ ...shown(row), secret });
  });

  app.patch("/webhooks/v1/organizations/:org/webhooks/:id", async (request) => {
    const organization = await managedOrganization(request);
    const id = webhookId(request);
    const body = parseInput(updateBody, request.body);
    if (body.url) checkUrl(body.url);
    await checkFleets(organization, body.fleets);
    const row = await ctx.db.transaction(async (tx) => {
      const updated = await updateWebhook(tx, organization, id, body);
      if (!updated) throw notFound();
      await recordAudit(tx, auditActorOf(request), {
        action: "webhook.updated",
        organization,
        targetType: "webhook",
        targetId: id,
        details: { fields: Object.keys(body) },
      });
      return updated;
    });
    return shown(row);
  });

  app.delete("/webhooks/v1/organizations/:org/webhooks/:id", async (request, reply) => {
    const organization = await managedOrganization(request);
    const id = webhookId(request);
    await ctx.db.transaction(async (tx) => {
      if (!(await deleteWebhook(tx, organization, id))) throw notFound();
      await recordAudit(tx, auditActorOf(request), {
        action: "webhook.deleted",
        organization,
        targetType: "webhook",
        targetId: id,
      });
    });
    return reply.code(204).send();
  });

  // "Send test event": queued like any event, delivered by the worker within seconds.
  app.post("/webhooks/v1/organizations/:org/webhooks/:id/test", async (request, reply) => {
    const organization = await managedOrganization(request);
    const id = webhookId(request);
    if (!(await findWebhook(ctx.db, organization, id))) throw notFound();
    const delivery = await enqueueTestEvent(ctx.db, id);
    return reply.code(202).send({ delivery });
  });

  app.get("/webhooks/v1/organizations/:org/webhooks/:id/deliveries", async (request) => {
    const organization = await managedOrganization(request);
    const id = webhookId(request);
    if (!(await findWebhook(ctx.db, organization, id))) throw notFound();
    const { limit } = parseInput(
      z.object({ limit: z.coerce.number({ error: "must be a number" }).int().min(1).max(200).default(50) }),
      request.query,
    );
    return { deliveries: await listDeliveries(ctx.db, id, limit) };
  });
}
