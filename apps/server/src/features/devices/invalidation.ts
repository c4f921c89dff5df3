import type { Queryable } from "../../db/index.ts";
import type { Hooks, Model, ResourceHooks } from "../../odata/index.ts";
import type { Invalidation } from "./target-state.ts";

/**
 * Which cached target states a data API write touches (docs/device-protocol.md "Target state"):
 * the devices or fleets the written rows hang off, found from the rows' ids, dropped once the
 * write has committed. Release contents (images, labels) drop everything: they change rarely.
 */
type Scope = { devices: string } | { fleets: string } | { all: true };

const SCOPES: Readonly<Record<string, Scope>> = {
  device: { devices: `SELECT id FROM "device" WHERE id = ANY($1::int[])` },
  device_config_variable: { devices: `SELECT device AS id FROM "device_config_variable" WHERE id = ANY($1::int[])` },
  device_environment_variable: {
    devices: `SELECT device AS id FROM "device_environment_variable" WHERE id = ANY($1::int[])`,
  },
  service_install: { devices: `SELECT device AS id FROM "service_install" WHERE id = ANY($1::int[])` },
  device_service_environment_variable: {
    devices: `SELECT si.device AS id FROM "device_service_environment_variable" v
                JOIN "service_install" si ON si.id = v.service_install WHERE v.id = ANY($1::int[])`,
  },
  application: { fleets: `SELECT id FROM "application" WHERE id = ANY($1::int[])` },
  application_config_variable: {
    fleets: `SELECT application AS id FROM "application_config_variable" WHERE id = ANY($1::int[])`,
  },
  application_environment_variable: {
    fleets: `SELECT application AS id FROM "application_environment_variable" WHERE id = ANY($1::int[])`,
  },
  service: { fleets: `SELECT application AS id FROM "service" WHERE id = ANY($1::int[])` },
  service_label: {
    fleets: `SELECT s.application AS id FROM "service_label" l JOIN "service" s ON s.id = l.service WHERE l.id = ANY($1::int[])`,
  },
  service_environment_variable: {
    fleets: `SELECT s.application AS id FROM "service_environment_variable" v JOIN "service" s ON s.id = v.service WHERE v.id = ANY($1::int[])`,
  },
  release: { fleets: `SELECT belongs_to__application AS id FROM "release" WHERE id = ANY($1::int[])` },
  release_image: { all: true },
  image: { all: true },
  image_label: { all: true },
  image_environment_variable: { all: true },
};

async function affected(tx: Pick<Queryable, "query">, scope: Scope, ids: number[]): Promise<Invalidation> {
  if ("all" in scope) return { all: true };
  const sql = "devices" in scope ? scope.devices : scope.fleets;
  const { rows } = await tx.query<{ id: number }>(sql, [ids]);
  const found = [...new Set(rows.map((r) => Number(r.id)))];
  return "devices" in scope ? { devices: found } : { fleets: found };
}

/** The hooks with target-state invalidation added to every resource whose table affects it. */
export function withTargetStateInvalidation(
  model: Model,
  hooks: Hooks,
  invalidate: (change: Invalidation) => void,
): Hooks {
  const result: Record<string, ResourceHooks | undefined> = { ...hooks };
  for (const resource of model.resources()) {
    const scope = SCOPES[resource.table];
    if (!scope) continue;
    const own = hooks[resource.name] ?? {};
    const mark = async (
      { tx, afterCommit }: { tx: Pick<Queryable, "query">; afterCommit(task: () => void): void },
      ids: number[],
    ) => {
      const change = await affected(tx, scope, ids);
      afterCommit(() => invalidate(change));
    };
    result[resource.name] = {
      ...own,
      async afterCreate(args) {
        await own.afterCreate?.(args);
        await mark(args, [args.id]);
      },
      async afterUpdate(args) {
        await own.afterUpdate?.(args);
        await mark(args, args.ids);
      },
      // Before the rows go: afterwards there is nothing left to say where they hung.
      async beforeDelete(args) {
        await own.beforeDelete?.(args);
        await mark(args, args.ids);
      },
    };
  }
  return result;
}
