import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import type { Database } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth, requireFreshAuth, requireUser } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { auditActorOf, recordAudit } from "../audit/record.ts";
import { canCreateKeysFor, createApiKey, createApiKeyRow, findApiKey, hashApiKey } from "./service.ts";

/**
 * An expiry in the future, or null for "never" (spec 1 §5: the dashboard requires the choice and
 * turns its 1/7/30/90-day choices into a date). Over the API a key without one never expires,
 * as on balena (older balena-sdk versions and scripts leave it out; balena-sdk 23 sends null).
 */
const expiry = z
  .union([z.null(), z.coerce.date()], { error: "must be a date in the future, or null for never" })
  .refine((date) => date === null || date.getTime() > Date.now(), "must be in the future");

const userKeyBody = z.object({
  name: z.string({ error: "is required" }).trim().min(1, "is required").max(255),
  description: z.string().max(1000).nullish(),
  expiryDate: expiry.optional(),
});

const provisioningKeyBody = z.object({
  actorType: z.literal("application", { error: 'must be "application"' }),
  actorTypeId: z.number({ error: "must be a fleet id" }).int(),
  roles: z.tuple([z.literal("provisioning-api-key")], { error: 'must be ["provisioning-api-key"]' }),
  name: z.string().max(255).nullish(),
  description: z.string().max(1000).nullish(),
  expiryDate: expiry.optional(),
});

const deviceKeyBody = z.object({ apiKey: z.string().min(16, "must be at least 16 characters").max(256).optional() });

/** The SDK parses the key out of a JSON string body. */
const JSON_TYPE = "application/json; charset=utf-8";

/**
 * Personal keys (spec 1 §6.1, decision 3): the user administers an organization (every account
 * administers its personal one), and does not sign in through SAML only.
 */
async function mayCreatePersonalKeys(db: Pick<Database, "query">, userId: number) {
  const { rows } = await db.query<{ saml_only: boolean; administrator: boolean }>(
    `SELECT (u.password_hash IS NULL AND EXISTS (SELECT 1 FROM "saml_account" s WHERE s.belongs_to__user = u.id)) AS saml_only,
            EXISTS (SELECT 1 FROM "organization_membership" m
                      JOIN "organization_membership_role" r ON r.id = m.organization_membership_role
                     WHERE m.user = u.id AND r.name = 'administrator') AS administrator
       FROM "user" u WHERE u.id = $1`,
    [userId],
  );
  const found = rows[0];
  if (found?.saml_only) {
    throw new FlotillaError("forbidden", "Accounts that sign in through SAML cannot create API keys.");
  }
  if (!found?.administrator) {
    throw new FlotillaError("forbidden", "Creating API keys needs the administrator role in an organization.");
  }
}

export async function apiKeyRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db } = ctx;
  // balena-sdk `apiKey.create`: a personal key acting with the user's own rights (decision 3).
  app.post("/api-key/user/full", async (request, reply) => {
    const { caller, id } = requireUser(request);
    const body = parseInput(userKeyBody, request.body);
    requireFreshAuth(request);
    await mayCreatePersonalKeys(db, id);
    reply.type(JSON_TYPE);
    const key = await db.transaction(async (tx) => {
      const created = await createApiKeyRow(tx.orm, {
        actor: caller.actor,
        role: "user",
        name: body.name,
        description: body.description ?? null,
        expiryDate: body.expiryDate ?? null,
      });
      await recordAudit(tx, auditActorOf(request), {
        action: "api_key.created",
        targetType: "api_key",
        targetId: created.id,
        details: { name: body.name, role: "user" },
      });
      return created.key;
    });
    return JSON.stringify(key);
  });

  // balena-sdk `application.generateProvisioningKey`.
  app.post("/api-key/v2/", async (request, reply) => {
    const caller = requireAuth(request);
    const fleetId = (request.body as { actorTypeId?: unknown } | null | undefined)?.actorTypeId;
    if (fleetId === undefined || fleetId === null || fleetId === "") {
      throw new FlotillaError("missing_provisioning_identifier");
    }
    const body = parseInput(provisioningKeyBody, request.body);
    const { rows } = await db.query<{ actor: number; organization: number }>(
      'SELECT actor, organization FROM "application" WHERE id = $1',
      [body.actorTypeId],
    );
    const fleet = rows[0];
    // A fleet the caller cannot manage keys of is answered like one that does not exist.
    if (!fleet || !(await canCreateKeysFor(db, caller.actor, body.actorTypeId))) {
      throw new FlotillaError("unauthorized", "You are not allowed to create provisioning keys for this fleet.");
    }
    reply.type(JSON_TYPE);
    const key = await db.transaction(async (tx) => {
      const created = await createApiKeyRow(tx.orm, {
        actor: fleet.actor,
        role: "provisioning-api-key",
        name: body.name ?? null,
        description: body.description ?? null,
        expiryDate: body.expiryDate ?? null,
      });
      await recordAudit(tx, auditActorOf(request), {
        action: "api_key.created",
        organization: fleet.organization,
        targetType: "api_key",
        targetId: created.id,
        details: { name: body.name ?? null, role: "provisioning-api-key", fleet: body.actorTypeId },
      });
      return created.key;
    });
    return JSON.stringify(key);
  });

  // balena-sdk `device.generateDeviceKey`, and the supervisor's key exchange (with its fleet's provisioning key).
  app.post<{ Params: { id: string } }>("/api-key/device/:id/device-key", async (request, reply) => {
    const caller = requireAuth(request);
    const body = parseInput(deviceKeyBody, request.body);
    const deviceId = Number(request.params.id);
    if (!Number.isSafeInteger(deviceId)) throw new FlotillaError("bad_request", "The device id must be a number");
    const { rows } = await db.query<{ actor: number; application: number; fleet_actor: number }>(
      `SELECT d.actor, d.belongs_to__application AS application, a.actor AS fleet_actor
       FROM "device" d JOIN "application" a ON a.id = d.belongs_to__application WHERE d.id = $1`,
      [deviceId],
    );
    const device = rows[0];
    const isFleetKey = device && caller.apiKey?.role === "provisioning-api-key" && caller.actor === device.fleet_actor;
    if (!device || !(isFleetKey || (await canCreateKeysFor(db, caller.actor, device.application)))) {
      throw new FlotillaError("unauthorized", "You are not allowed to create keys for this device.");
    }
    reply.type(JSON_TYPE);
    if (body.apiKey) {
      // A device repeating its exchange (its first answer was lost) gets the same answer; a key
      // held by anyone else is a conflict, never a database error.
      const held = await findApiKey(db.orm, body.apiKey);
      if (held?.is_of__actor === device.actor && held.role === "device-api-key") return JSON.stringify(body.apiKey);
      if (held) throw new FlotillaError("conflict", "This key is already in use.");
    }
    const key = await createApiKey(db.orm, {
      actor: device.actor,
      role: "device-api-key",
      ...(body.apiKey ? { key: body.apiKey } : {}),
    }).catch((error: unknown) => {
      if ((error as { code?: unknown })?.code === "23505")
        throw new FlotillaError("conflict", "This key is already in use.");
      throw error;
    });
    // A key the device chose may have been tried (and remembered as unknown) before it existed.
    if (body.apiKey) ctx.devices.forgetUnknownKey(hashApiKey(key));
    return JSON.stringify(key);
  });
}
