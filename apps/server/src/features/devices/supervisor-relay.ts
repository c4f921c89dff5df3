import { UPDATE_REQUIRED_BODY, userActionsNeedUpdate } from "@flotilla/domain";
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { ERROR_CODE_HEADER } from "../../lib/error-handler.ts";
import { parseInput } from "../../lib/validation.ts";
import { mayDo } from "../data-api/actions.ts";
import { deviceById, deviceByUuid, supervisorVersionOf } from "./queries.ts";
import type { RelayAction } from "./relay.ts";
import { refuseFrozen } from "./settings-hooks.ts";

/**
 * Supervisor relay for balena-sdk (docs/device-protocol.md "Supervisor relay"): the SDK's
 * `/supervisor/v1/*` and `/supervisor/v2/applications/{appId}/*-service` calls, permission-checked
 * per spec 2 §6 "Device action permissions", relayed over cloudlink; the agent's status and body
 * are the answer (423 stays 423: the SDK's BalenaSupervisorLockedError).
 */

/** What each action needs on the device's fleet. Reading the supervisor state is a read. */
const PERMISSION: Record<RelayAction, string> = {
  blink: "device.supervisor-proxy-write",
  restart: "device.supervisor-proxy-write",
  reboot: "device.supervisor-proxy-write",
  shutdown: "device.supervisor-proxy-write",
  purge: "device.supervisor-proxy-write",
  update: "device.supervisor-proxy-write",
  "start-service": "device.supervisor-proxy-write",
  "stop-service": "device.supervisor-proxy-write",
  "restart-service": "device.supervisor-proxy-write",
  device: "device.read",
  checks: "device.access_diagnostics",
  diagnose: "device.access_diagnostics",
  // Not relayed here: features/os-updates/routes.ts serves it with its own checks.
  resinhup: "device.actions-proxy-hup",
};

const V1_ACTIONS = ["blink", "restart", "reboot", "shutdown", "purge", "update", "device"] as const;
const SERVICE_ACTIONS = ["start-service", "stop-service", "restart-service"] as const;

const relayBody = z
  .object({
    uuid: z.string().max(62).optional(),
    deviceId: z.number().int().positive().max(2147483647).optional(),
    appId: z.number().int().optional(),
    method: z.string().max(10).optional(),
    data: z
      .object({
        force: z.boolean().optional(),
        appId: z.number().int().optional(),
        imageId: z.number().int().optional(),
        serviceName: z.string().max(255).optional(),
      })
      .optional(),
  })
  .refine((b) => b.uuid !== undefined || b.deviceId !== undefined, "uuid or deviceId is required");

export async function supervisorRelayRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, devices } = ctx;

  /**
   * A user action on a supervisor older than the relay's API generation (user-actions.ts) is
   * answered with balena's exact body, which the SDK passes on untouched; the header names the code.
   */
  async function refusedAsOutdated(deviceId: number, reply: FastifyReply) {
    if (!userActionsNeedUpdate(await supervisorVersionOf(db, deviceId))) return false;
    reply.code(400).header(ERROR_CODE_HEADER, "device_update_required").send(UPDATE_REQUIRED_BODY);
    return true;
  }

  async function relay(
    action: RelayAction,
    rawBody: unknown,
    reply: FastifyReply,
    caller: ReturnType<typeof requireAuth>,
  ) {
    const body = parseInput(relayBody, rawBody ?? {});
    const reference = body.uuid ?? String(body.deviceId);
    const device =
      body.uuid !== undefined ? await deviceByUuid(db, body.uuid) : await deviceById(db, body.deviceId ?? 0);
    // A device the caller cannot see is answered like one that does not exist (as the data API does).
    if (!device || !caller.user || !(await mayDo(db, caller, "device.read", { device: device.id }))) {
      throw new FlotillaError("device_not_found", undefined, { params: { device: reference } });
    }
    const permission = PERMISSION[action];
    if (permission !== "device.read") {
      if (!(await mayDo(db, caller, permission, { device: device.id }))) throw new FlotillaError("forbidden");
      await refuseFrozen(db, [device.id]);
      if (await refusedAsOutdated(device.id, reply)) return reply;
    }
    const data: Record<string, unknown> = { ...body.data };
    if (action === "reboot" || action === "shutdown" || action === "update") data.force = body.data?.force === true;
    const answer = await devices.relay.request(device.id, action, data);
    reply.code(answer.status);
    // The dashboard's keyed errors (spec 2 §8) for the agent's answers that have one.
    if (answer.status === 423) reply.header(ERROR_CODE_HEADER, "supervisor_locked");
    if (answer.status === 400 && action === "blink")
      reply.header(ERROR_CODE_HEADER, "device_does_not_support_blinking");
    return reply.send(answer.body ?? null);
  }

  for (const action of V1_ACTIONS) {
    app.post(`/supervisor/v1/${action}`, (request, reply) => relay(action, request.body, reply, requireAuth(request)));
  }
  for (const action of SERVICE_ACTIONS) {
    app.post<{ Params: { appId: string } }>(`/supervisor/v2/applications/:appId/${action}`, (request, reply) =>
      relay(action, request.body, reply, requireAuth(request)),
    );
  }
}
