import { DIAGNOSTICS_ACTIONS, type DiagnosticsAction, isDiagnosticsState } from "@flotilla/domain";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { mayDo, notAllowed } from "../data-api/actions.ts";
import { deviceByUuid } from "./queries.ts";

const runBody = z.object({ parameters: z.record(z.string(), z.unknown()).optional() }).optional();

/**
 * The device actions service (spec 2 §7, packages/domain/src/diagnostics.ts), on the API origin
 * unless FLOTILLA_DEVICE_ACTIONS_HOST names another: `GET /v1/{uuid}/{checks|diagnose}` answers
 * the device's last report, `POST` (body `{parameters}`) starts a run (202, `in_progress`). Both
 * need `device.access_diagnostics` and an online device (the agent holds the reports).
 */
export async function diagnosticsRoutes(app: FastifyInstance, { db, devices }: AppContext) {
  async function relay(request: FastifyRequest, run: boolean) {
    const user = requireUser(request);
    const { uuid, action } = request.params as { uuid: string; action: string };
    if (!DIAGNOSTICS_ACTIONS.includes(action as DiagnosticsAction)) {
      throw new FlotillaError("not_found", `Unknown device action: ${action}`);
    }
    const device = /^[0-9a-f]{7,62}$/.test(uuid) ? await deviceByUuid(db, uuid) : undefined;
    if (!device || !(await mayDo(db, user.caller, "device.read", { device: device.id }))) {
      throw new FlotillaError("device_not_found", undefined, { params: { device: uuid } });
    }
    if (!(await mayDo(db, user.caller, "device.access_diagnostics", { device: device.id })))
      throw notAllowed("device.access_diagnostics");
    const parameters = run ? (parseInput(runBody, request.body ?? undefined)?.parameters ?? {}) : {};
    const answer = await devices.relay.request(device.id, action as DiagnosticsAction, { run, parameters });
    // A report is in one of the five states (spec 2 §4); the device is not trusted to say so.
    const state = (answer.body as { status?: unknown } | null)?.status;
    if (answer.status < 300 && !isDiagnosticsState(state)) {
      throw new FlotillaError("diagnostics_state_invalid", undefined, {
        params: { state: String(state).slice(0, 40) },
      });
    }
    return answer;
  }

  app.get("/v1/:uuid/:action", async (request, reply) => {
    const answer = await relay(request, false);
    return reply.code(answer.status).send(answer.body);
  });
  app.post("/v1/:uuid/:action", async (request, reply) => {
    const answer = await relay(request, true);
    return reply.code(answer.status).send(answer.body);
  });
}
