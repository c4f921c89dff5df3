import crypto from "node:crypto";
import { FREE_PLAN_DEVICE_ALLOWANCE, freePlanDeviceBlock, runsArchitecture } from "@flotilla/domain";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import type { Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { DEVICE_ONLY } from "../../lib/device-only.ts";
import { parseInput } from "../../lib/validation.ts";
import { hashApiKey } from "../api-keys/service.ts";
import { refuseDiscontinued } from "../fleets/hooks.ts";
import { organizationDeviceCount } from "../fleets/queries.ts";

const registerBody = z.object({
  user: z.number().int().nullish(),
  application: z.number({ error: "must be a fleet id" }).int(),
  uuid: z.string().regex(/^[0-9a-f]{32}$|^[0-9a-f]{62}$/, "must be 32 or 62 lowercase hex characters"),
  device_type: z.string({ error: "is required" }).min(1, "is required").max(255),
  api_key: z.string().min(16, "must be at least 16 characters").max(256).optional(),
  supervisor_version: z.string().max(255).nullish(),
  os_version: z.string().max(255).nullish(),
  os_variant: z.string().max(255).nullish(),
  mac_address: z.string().max(1000).nullish(),
});

const uuidTaken = () => new FlotillaError("conflict", '"uuid" must be unique.');

/**
 * Device registration (balena API contract, issue 7): `POST /device/register` with the fleet's
 * provisioning key as bearer, body `{user?, application, uuid, device_type, api_key,
 * supervisor_version, os_version, os_variant, mac_address}` → 201 `{id, uuid, api_key}`.
 * 401 unless the key is a provisioning key of that fleet; 400 for an unknown, discontinued or
 * architecture-incompatible device type; 402 beyond the free plan allowance; 409
 * `"uuid" must be unique.` for a known uuid (the device then exchanges its key).
 */
export async function deviceRegisterRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db } = ctx;
  app.post("/device/register", DEVICE_ONLY, async (request, reply) => {
    const caller = requireAuth(request);
    const body = parseInput(registerBody, request.body);
    // The fleet, the device type and the plan in one read: registration runs by the thousand when
    // a batch of devices is flashed (issue 7 "Speed": ≥ 400 devices/s).
    const { rows } = await db.query<{
      actor: number;
      organization: number;
      paid: boolean;
      architecture: string | null;
      type_id: number | null;
      slug: string | null;
      contract: unknown;
      type_architecture: string | null;
    }>(
      `SELECT a.actor, a.organization, fca.slug AS architecture, dt.id AS type_id, dt.slug,
              dt.contract, (SELECT ca.slug FROM "cpu_architecture" ca WHERE ca.id = dt.is_of__cpu_architecture) AS type_architecture,
              -- isPaidOrganization (organizations/queries.ts), inlined
              EXISTS (SELECT 1 FROM "subscription" s JOIN "plan" p ON p.id = s.is_for__plan
                       WHERE s.is_for__organization = a.organization AND s.starts_on__date <= now()
                         AND (s.ends_on__date IS NULL OR s.ends_on__date > now())
                         AND p.billing_code IS DISTINCT FROM 'free') AS paid
         FROM "application" a LEFT JOIN "device_type" fdt ON fdt.id = a.is_for__device_type
         LEFT JOIN "cpu_architecture" fca ON fca.id = fdt.is_of__cpu_architecture
         LEFT JOIN ("device_type_alias" al JOIN "device_type" dt ON dt.id = al.device_type)
           ON al.is_referenced_by__alias = $2
        WHERE a.id = $1`,
      [body.application, body.device_type],
    );
    const fleet = rows[0];
    if (!fleet || caller.apiKey?.role !== "provisioning-api-key" || caller.actor !== fleet.actor) {
      throw new FlotillaError("unauthorized", "You are not allowed to register devices in this fleet.");
    }
    if (fleet.type_id === null) {
      throw new FlotillaError("invalid_device_type", undefined, { params: { type: body.device_type } });
    }
    const deviceType = { id: fleet.type_id, slug: fleet.slug ?? "", contract: fleet.contract };
    refuseDiscontinued(deviceType);
    // A 64-bit ARM device may join a 32-bit ARM fleet, as balena allows it.
    if (fleet.architecture !== null && !runsArchitecture(fleet.type_architecture, fleet.architecture)) {
      throw new FlotillaError("no_compatible_architecture");
    }
    const apiKey = body.api_key ?? crypto.randomBytes(24).toString("hex");
    const values = [
      body.uuid,
      body.uuid.slice(0, 7),
      body.application,
      deviceType.id,
      body.supervisor_version ?? null,
      body.os_version ?? null,
      body.os_variant ?? null,
      body.mac_address ?? null,
    ];
    const id = fleet.paid
      ? // No allowance to count: the actor, the device and its key in one statement, no transaction.
        await insertDevice(db, values, apiKey).catch(async (error: unknown) => {
          if ((error as { code?: unknown })?.code === "23505") {
            const { rows: taken } = await db.query('SELECT 1 FROM "device" WHERE uuid = $1', [body.uuid]);
            if (taken.length > 0) throw uuidTaken();
          }
          throw error;
        })
      : await db
          .transaction(async (tx) => {
            const { rows: existing } = await tx.query('SELECT 1 FROM "device" WHERE uuid = $1', [body.uuid]);
            if (existing.length > 0) throw uuidTaken();
            // The allowance is counted and the device written on one connection, in one transaction.
            const blocked = freePlanDeviceBlock(
              await organizationDeviceCount(tx, fleet.organization),
              FREE_PLAN_DEVICE_ALLOWANCE,
            );
            if (blocked === "free plan allowance reached") throw new FlotillaError("free_plan_allowance_reached");
            if (blocked) throw new FlotillaError("free_plan_allowance_exceeded");
            return insertDevice(tx, values, apiKey);
          })
          .catch((error: unknown) => {
            if ((error as { code?: unknown })?.code === "23505") throw uuidTaken();
            throw error;
          });
    // The device chose its key and may have tried it before registering: it is no unknown token now.
    ctx.devices.forgetUnknownKey(hashApiKey(apiKey));
    reply.code(201);
    return { id: id.id, uuid: body.uuid, api_key: apiKey };
  });
}

/** A new actor, its device and the device's API key (stored hashed), in one statement. */
async function insertDevice(db: Pick<Queryable, "query">, values: unknown[], apiKey: string) {
  const { rows } = await db.query<{ id: number; actor: number }>(
    `WITH a AS (INSERT INTO "actor" DEFAULT VALUES RETURNING id),
          d AS (INSERT INTO "device" (actor, uuid, device_name, belongs_to__application, is_of__device_type,
                  supervisor_version, os_version, os_variant, mac_address)
                SELECT a.id, $1, $2, $3, $4, $5, $6, $7, $8 FROM a RETURNING id, actor),
          k AS (INSERT INTO "api_key" (key_hash, is_of__actor, role) SELECT $9, actor, 'device-api-key' FROM d)
     SELECT id, actor FROM d`,
    [...values, hashApiKey(apiKey)],
  );
  return { id: Number(rows[0]?.id), actor: Number(rows[0]?.actor) };
}
