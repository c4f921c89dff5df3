import { osUpdateCategory, parseOsVersion, STARTABLE_OS_UPDATE_CATEGORIES } from "@flotilla/domain";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { mayDo, notAllowed } from "../data-api/actions.ts";
import { deviceByUuid } from "../devices/queries.ts";
import { refuseFrozen } from "../devices/settings-hooks.ts";
import { devicesForUpdate, osReleasesOf, setOperatingRelease } from "./catalogue.ts";

const startBody = z.object({
  parameters: z.object({ target_version: z.string().trim().min(1).max(100) }),
});

/**
 * Host OS updates through the device actions service (spec 2 §7, docs/device-protocol.md "OS and
 * supervisor updates"), balena-sdk's `POST https://actions.{base}/v{1,2}/{uuid}/resinhup` with
 * `{parameters: {target_version}}`, served on the API origin like the diagnostics actions. The
 * server checks device.actions-proxy-hup, the catalogue and the update rules
 * (packages/domain/src/os-updates.ts), relays `resinhup` to the agent over cloudlink and marks
 * the target release on the device (`should_be_operated_by__release`). `GET` answers the
 * device's last run.
 */
export async function osUpdateRoutes(app: FastifyInstance, { db, devices }: AppContext) {
  async function visibleDevice(request: FastifyRequest) {
    const user = requireUser(request);
    const { uuid } = request.params as { uuid: string };
    const device = /^[0-9a-f]{7,62}$/.test(uuid) ? await deviceByUuid(db, uuid) : undefined;
    if (!device || !(await mayDo(db, user.caller, "device.read", { device: device.id }))) {
      throw new FlotillaError("device_not_found", undefined, { params: { device: uuid } });
    }
    if (!(await mayDo(db, user.caller, "device.actions-proxy-hup", { device: device.id })))
      throw notAllowed("device.actions-proxy-hup");
    return device;
  }

  async function start(request: FastifyRequest, reply: FastifyReply) {
    const device = await visibleDevice(request);
    const { parameters } = parseInput(startBody, request.body ?? {});
    await refuseFrozen(db, [device.id]);
    const [facts] = await devicesForUpdate(db, [device.id]);
    if (!facts) throw new FlotillaError("device_not_found", undefined, { params: { device: device.uuid } });
    if (!facts.is_connected_to_vpn) throw new FlotillaError("device_must_be_online");
    if (!parseOsVersion(facts.os_version)) throw new FlotillaError("os_version_unparseable");
    const releases = await osReleasesOf(db, facts.device_type);
    const assessment = osUpdateCategory(
      { deviceType: facts.device_type_slug, isOnline: true, osVersion: facts.os_version, osVariant: facts.os_variant },
      releases,
      parameters.target_version,
    );
    const target = releases.find((r) => r.raw_version === assessment.target?.raw_version);
    if (assessment.category === "version_not_available" || !target) throw new FlotillaError("os_release_not_found");
    if (!STARTABLE_OS_UPDATE_CATEGORIES.includes(assessment.category)) {
      throw new FlotillaError("update_not_supported_for_type_version", undefined, {
        params: { reason: assessment.reason ?? assessment.category.replaceAll("_", " ") },
      });
    }
    const answer = await devices.relay.request(device.id, "resinhup", {
      run: true,
      parameters: { target_version: target.raw_version },
    });
    if (answer.status === 423) throw new FlotillaError("supervisor_locked");
    const body = answer.body as { status?: unknown; lastRun?: unknown } | null;
    // Anything but "triggered" means the device did not start (spec 2 §7).
    if (answer.status >= 300 || body?.status !== "triggered") throw new FlotillaError("os_update_not_triggered");
    await setOperatingRelease(db, device.id, target.id);
    return reply.code(202).send({
      status: "triggered",
      action: "resinhup",
      parameters: { target_version: target.raw_version },
      lastRun: typeof body.lastRun === "number" ? body.lastRun : Date.now(),
    });
  }

  async function status(request: FastifyRequest, reply: FastifyReply) {
    const device = await visibleDevice(request);
    const answer = await devices.relay.request(device.id, "resinhup", { run: false, parameters: {} });
    return reply.code(answer.status).send(answer.body ?? null);
  }

  for (const version of ["v1", "v2"]) {
    app.post(`/${version}/:uuid/resinhup`, start);
    app.get(`/${version}/:uuid/resinhup`, status);
  }
}
