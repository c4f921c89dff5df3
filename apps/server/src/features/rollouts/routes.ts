import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { auditActorOf, recordAudit } from "../audit/record.ts";
import { mayDo } from "../data-api/actions.ts";
import { applyControl, ROLLOUT_CONTROLS, type RolloutControl } from "./controls.ts";
import { applyEffect } from "./engine.ts";
import { organizationOf, rolloutById, rolloutSummary } from "./queries.ts";

/**
 * A rollout's controls (docs/rollouts.md): `POST /rollout/v1/{id}/{pause|resume|skip-soak|abort|promote}`,
 * for those who may pin the fleet's release (`rollout.update`); the answer is the rollout with
 * its waves. Reading goes through /v7 (`rollout`, `rollout_wave`, `rollout_device`). This plugin
 * also runs the engine's periodic tick on this instance.
 */
/** The audit log's name of each control (docs/audit-and-webhooks.md). */
const AUDIT_ACTIONS: Record<RolloutControl, string> = {
  pause: "rollout.paused",
  resume: "rollout.resumed",
  "skip-soak": "rollout.soak_skipped",
  abort: "rollout.aborted",
  promote: "rollout.promoted",
};

export async function rolloutRoutes(app: FastifyInstance, { db, devices, rollouts }: AppContext) {
  rollouts.start();
  app.addHook("onClose", () => rollouts.stop());

  async function visibleRollout(request: FastifyRequest) {
    const user = requireUser(request);
    const raw = (request.params as { id: string }).id;
    if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "the rollout id must be a whole number");
    const rollout = await rolloutById(db, Number(raw));
    // A rollout the caller may not read does not exist for them.
    if (!rollout || !(await mayDo(db, user.caller, "rollout.read", { fleet: rollout.fleet }))) {
      throw new FlotillaError("not_found", `Rollout not found: ${raw}`);
    }
    return { user, rollout };
  }

  app.get("/rollout/v1/:id", async (request) => {
    const { rollout } = await visibleRollout(request);
    return rolloutSummary(db, rollout.id);
  });

  app.post("/rollout/v1/:id/:control", async (request) => {
    const control = (request.params as { control: string }).control;
    if (!ROLLOUT_CONTROLS.includes(control as RolloutControl)) {
      throw new FlotillaError("not_found", `Unknown rollout control: ${control} (${ROLLOUT_CONTROLS.join(", ")})`);
    }
    const { user, rollout } = await visibleRollout(request);
    if (!(await mayDo(db, user.caller, "rollout.update", { fleet: rollout.fleet }))) {
      throw new FlotillaError("forbidden");
    }
    const effect = await db.transaction(async (tx) => {
      const applied = await applyControl(tx, rollout.id, control as RolloutControl);
      await recordAudit(tx, auditActorOf(request), {
        action: AUDIT_ACTIONS[control as RolloutControl],
        organization: await organizationOf(tx, rollout.fleet),
        targetType: "rollout",
        targetId: rollout.id,
        details: { fleet: rollout.fleet, from_release: rollout.from_release, to_release: rollout.to_release },
      });
      return applied;
    });
    applyEffect(devices, effect);
    // A resumed or un-soaked wave may pass at once.
    if (control === "resume" || control === "skip-soak") await rollouts.evaluate(rollout.id);
    return rolloutSummary(db, rollout.id);
  });
}
