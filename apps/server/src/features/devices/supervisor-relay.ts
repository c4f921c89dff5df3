import { UPDATE_REQUIRED_BODY, userActionsNeedUpdate } from "@flotilla/domain";
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError, notFound } from "../../errors.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { ERROR_CODE_HEADER } from "../../lib/error-handler.ts";
import { idInput, parseInput } from "../../lib/validation.ts";
import { mayDo, notAllowed } from "../data-api/actions.ts";
import { connectedDevicesOf, deviceById, deviceByUuid, fleetExists, supervisorVersionOf } from "./queries.ts";
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

/** Actions balena lets a body name a whole fleet for (`{appId}` without a device): balena-sdk's application.purge/reboot/shutdown. */
const FLEET_ACTIONS = new Set<RelayAction>(["restart", "reboot", "shutdown", "purge", "update"]);
/** Devices a fleet-wide action talks to at once. */
const FLEET_RELAY_CONCURRENCY = 16;

// Ids arrive as numbers or strings ({deviceId: "12"}, {appId: 3}, data.appId "3"): both are taken.
const relayBody = z
  .object({
    uuid: z.string().max(62).optional(),
    deviceId: idInput.optional(),
    appId: idInput.optional(),
    method: z.string().max(10).optional(),
    data: z
      .object({
        force: z.boolean().optional(),
        appId: idInput.optional(),
        imageId: idInput.optional(),
        serviceName: z.string().max(255).optional(),
      })
      .optional(),
  })
  .refine(
    (b) => b.uuid !== undefined || b.deviceId !== undefined || b.appId !== undefined,
    "uuid, deviceId or appId is required",
  );

type RelayBody = z.output<typeof relayBody>;
type Caller = ReturnType<typeof requireAuth>;

/** What the agent gets: the body's data, with `force` a boolean for the actions that have it. */
function relayData(action: RelayAction, body: RelayBody): Record<string, unknown> {
  const data: Record<string, unknown> = { ...body.data };
  if (action === "reboot" || action === "shutdown" || action === "update") data.force = body.data?.force === true;
  return data;
}

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

  async function relay(action: RelayAction, rawBody: unknown, reply: FastifyReply, caller: Caller) {
    const body = parseInput(relayBody, rawBody ?? {});
    if (body.uuid === undefined && body.deviceId === undefined) {
      if (!FLEET_ACTIONS.has(action)) throw new FlotillaError("bad_request", "uuid or deviceId is required");
      return relayToFleet(action, body.appId ?? 0, relayData(action, body), reply, caller);
    }
    const reference = body.uuid ?? String(body.deviceId);
    const device =
      body.uuid !== undefined ? await deviceByUuid(db, body.uuid) : await deviceById(db, body.deviceId ?? 0);
    // A device the caller cannot see is answered like one that does not exist (as the data API does).
    if (!device || !caller.user || !(await mayDo(db, caller, "device.read", { device: device.id }))) {
      throw new FlotillaError("device_not_found", undefined, { params: { device: reference } });
    }
    const permission = PERMISSION[action];
    if (permission !== "device.read") {
      if (!(await mayDo(db, caller, permission, { device: device.id }))) throw notAllowed(permission);
      await refuseFrozen(db, [device.id]);
      if (await refusedAsOutdated(device.id, reply)) return reply;
    }
    const answer = await devices.relay.request(device.id, action, relayData(action, body));
    reply.code(answer.status);
    // The dashboard's keyed errors (spec 2 §8) for the agent's answers that have one.
    if (answer.status === 423) reply.header(ERROR_CODE_HEADER, "supervisor_locked");
    if (answer.status === 400 && action === "blink")
      reply.header(ERROR_CODE_HEADER, "device_does_not_support_blinking");
    return reply.send(withMessage(answer.status, answer.body));
  }

  /**
   * A fleet-wide action (balena: a body with `appId` and no device; `POST
   * /application/{id}/restart`): relayed to each of the fleet's connected devices, on cloudlink or
   * the device VPN. Frozen devices and supervisors too old for user actions are left out and
   * count as not done. 200 "OK" when every device took it; otherwise the status of the failures
   * (423 first, so the SDK says an update lock is set) with the devices that did not.
   */
  async function relayToFleet(
    action: RelayAction,
    fleetId: number,
    data: Record<string, unknown>,
    reply: FastifyReply,
    caller: Caller,
  ) {
    if (
      !caller.user ||
      !(await fleetExists(db, fleetId)) ||
      !(await mayDo(db, caller, "application.read", { fleet: fleetId }))
    ) {
      throw notFound(`Fleet not found: ${fleetId}`);
    }
    if (!(await mayDo(db, caller, PERMISSION[action], { fleet: fleetId }))) throw notAllowed(PERMISSION[action]);
    const connected = await connectedDevicesOf(db, fleetId);
    const targets = connected.filter((d) => !d.frozen && !userActionsNeedUpdate(d.supervisor_version));
    // A device left out (frozen, or a supervisor too old for the action) did not take it either.
    const failed: { uuid: string; status: number }[] = connected
      .filter((d) => !targets.includes(d))
      .map((d) => ({ uuid: d.uuid, status: d.frozen ? 403 : 400 }));
    for (let at = 0; at < targets.length; at += FLEET_RELAY_CONCURRENCY) {
      await Promise.all(
        targets.slice(at, at + FLEET_RELAY_CONCURRENCY).map(async (device) => {
          const answer = await devices.relay
            .request(device.id, action, { ...data, appId: fleetId })
            .catch((error: unknown) => ({
              status: error instanceof FlotillaError ? error.statusCode : 502,
              body: null,
            }));
          if (answer.status >= 300) failed.push({ uuid: device.uuid, status: answer.status });
        }),
      );
    }
    if (failed.length === 0) return reply.code(200).send("OK");
    const locked = failed.some((f) => f.status === 423);
    const status = locked ? 423 : (failed[0]?.status ?? 502);
    if (locked) reply.header(ERROR_CODE_HEADER, "supervisor_locked");
    const text = `${failed.length} of ${connected.length} devices did not ${action}${locked ? ": an update lock is set" : ""}`;
    return reply.code(status).send({ message: text, error: text, devices: failed.map((f) => f.uuid) });
  }

  for (const action of V1_ACTIONS) {
    app.post(`/supervisor/v1/${action}`, (request, reply) => relay(action, request.body, reply, requireAuth(request)));
  }
  // balena-sdk's application.restart (balena fleet restart): every device of the fleet restarts its services.
  app.post<{ Params: { id: string } }>("/application/:id/restart", (request, reply) => {
    const { id } = parseInput(z.object({ id: idInput }), request.params);
    return relayToFleet("restart", id, { appId: id }, reply, requireAuth(request));
  });
  for (const action of SERVICE_ACTIONS) {
    app.post<{ Params: { appId: string } }>(`/supervisor/v2/applications/:appId/${action}`, (request, reply) =>
      relay(action, request.body, reply, requireAuth(request)),
    );
  }
}

/**
 * A refusal relayed from a device carries a `message`, as balena's clients read it (balena-cli
 * printed "Request error: [object Object]" for an object without one): the device's own words
 * (`message`, `error` or a plain text), else the status.
 */
export function withMessage(status: number, body: unknown): unknown {
  if (status < 400) return body ?? null;
  if (typeof body === "string") return { message: body || `The device answered ${status}` };
  const fields = body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  if (typeof fields.message === "string" && fields.message) return fields;
  // The supervisor's v1 API says `Error`, its v2 API `message` or `error`.
  const said = [fields.error, fields.Error].find((value) => typeof value === "string" && value);
  const words = typeof said === "string" ? said : `The device answered ${status}`;
  return { ...fields, message: words };
}
