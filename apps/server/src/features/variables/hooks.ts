import {
  configVarNameProblem,
  envVarNameProblem,
  VARIABLE_TEXTS,
  type VariableRules,
  variableValueProblem,
} from "@flotilla/domain";
import { FlotillaError } from "../../errors.ts";
import type { HookContext, ResourceHooks } from "../../odata/index.ts";
import { checkConfigValue } from "./config-var-schema.ts";

/**
 * Fleet, service, device and device-service environment variables and fleet and device
 * configuration variables written through the data API (spec 2 §5 "Variables"): a name is
 * mandatory and follows the kind's rules (packages/domain variables.ts, with the server's
 * configured lists); a name already used in the same scope (fleet, service, device, device-service
 * install) is a 409 whose text says "unique" (balena-sdk's `envVar.set` then PATCHes); values are
 * bounded, and known configuration variables' values follow their schema. Who may write which
 * kind is the data API's permission table (spec 2 §6).
 */

type Kind = "env" | "config";
/** `buildOnly`: read by builds, never by devices (no update trigger). */
type Scope = { table: string; parent: string; kind: Kind; buildOnly?: true };

/** The variable resources by canonical name: their table, the scope's column and the kind. */
export const VARIABLE_RESOURCES: Readonly<Record<string, Scope>> = {
  application__has__env_var_name: { table: "application_environment_variable", parent: "application", kind: "env" },
  application__has__config_var_name: { table: "application_config_variable", parent: "application", kind: "config" },
  build_environment_variable: {
    table: "build_environment_variable",
    parent: "application",
    kind: "env",
    buildOnly: true,
  },
  application__has__service_name__has__name: { table: "service_environment_variable", parent: "service", kind: "env" },
  device__has__env_var_name: { table: "device_environment_variable", parent: "device", kind: "env" },
  device__has__config_var_name: { table: "device_config_variable", parent: "device", kind: "config" },
  device__installs__application__has__service_name__has__name: {
    table: "device_service_environment_variable",
    parent: "service_install",
    kind: "env",
  },
};

type Body = Record<string, unknown>;

const invalid = (code: "variable_name_invalid" | "variable_value_invalid", message: string) =>
  new FlotillaError(code, message);

/** The name's problem as the catalogue error that carries its text. */
function nameError(kind: Kind, name: string, rules: VariableRules): FlotillaError | undefined {
  const problem = kind === "env" ? envVarNameProblem(name, rules) : configVarNameProblem(name, rules);
  switch (problem) {
    case undefined:
      return undefined;
    case VARIABLE_TEXTS.nameRequired:
      return new FlotillaError("variable_name_required");
    case VARIABLE_TEXTS.reserved:
      return new FlotillaError("variable_reserved");
    case VARIABLE_TEXTS.configReserved:
      return new FlotillaError("config_variable_reserved");
    case VARIABLE_TEXTS.isConfigVariable:
      return new FlotillaError("variable_is_config_variable");
    default:
      return invalid("variable_name_invalid", problem);
  }
}

function checkName(kind: Kind, name: unknown, rules: VariableRules): string {
  if (name === undefined || name === null || name === "") throw new FlotillaError("variable_name_required");
  if (typeof name !== "string") throw invalid("variable_name_invalid", '"name" must be a string');
  const error = nameError(kind, name, rules);
  if (error) throw error;
  return name;
}

/** Checks (and for known config variables normalises) `body.value`. */
function checkValue(kind: Kind, name: string | undefined, body: Body) {
  const value = body.value;
  if (value === undefined) return;
  if (value === null) throw invalid("variable_value_invalid", VARIABLE_TEXTS.valueRequired);
  if (typeof value !== "string") throw invalid("variable_value_invalid", '"value" must be a string');
  const problem = variableValueProblem(value);
  if (problem) throw invalid("variable_value_invalid", problem);
  if (kind === "config" && name !== undefined) {
    const checked = checkConfigValue(name, value);
    if ("problem" in checked) throw invalid("variable_value_invalid", checked.problem);
    body.value = checked.value;
  }
}

/** The scope's id as the body gives it, under the field's name or one of its synonyms. */
function parentOf(context: HookContext, scope: Scope, body: Body): number | undefined {
  for (const field of context.resource.fields) {
    if ((field.column ?? field.name) !== scope.parent || !(field.name in body)) continue;
    const value = body[field.name];
    if (typeof value === "number" && Number.isSafeInteger(value)) return value;
  }
  return undefined;
}

async function refuseDuplicate(context: HookContext, scope: Scope, parent: number, name: string, except: number[]) {
  const { rows } = await context.tx.query(
    `SELECT 1 FROM "${scope.table}" WHERE "${scope.parent}" = $1 AND "name" = $2 AND NOT ("id" = ANY($3::int[])) LIMIT 1`,
    [parent, name, except],
  );
  if (rows.length > 0) throw new FlotillaError("variable_already_exists");
}

/** The devices a scope's rows reach, by the scope's ids. */
const DEVICES_OF: Readonly<Record<string, string>> = {
  application: `SELECT id FROM "device" WHERE belongs_to__application = ANY($1::int[]) AND is_active`,
  service: `SELECT d.id FROM "device" d JOIN "service" s ON s.application = d.belongs_to__application
             WHERE s.id = ANY($1::int[]) AND d.is_active`,
  device: `SELECT id FROM "device" WHERE id = ANY($1::int[])`,
  service_install: `SELECT device AS id FROM "service_install" WHERE id = ANY($1::int[])`,
};

/**
 * The hooks of one variable resource, with the server's name rules. `notify` is told, once the
 * write has committed, which devices' variables changed (the instant update trigger).
 */
export function variableHooks(
  resourceName: string,
  rules: VariableRules,
  notify?: (devices: number[]) => void,
): ResourceHooks {
  const scope = VARIABLE_RESOURCES[resourceName];
  if (!scope) throw new Error(`variable hooks: ${resourceName} is not a variable resource`);
  const devicesOf = async (context: HookContext, ids: number[]) => {
    const sql = DEVICES_OF[scope.parent];
    if (!notify || !sql || scope.buildOnly || ids.length === 0) return;
    const parents = await context.tx.query<{ parent: number }>(
      `SELECT DISTINCT "${scope.parent}" AS parent FROM "${scope.table}" WHERE "id" = ANY($1::int[])`,
      [ids],
    );
    const { rows } = await context.tx.query<{ id: number }>(sql, [parents.rows.map((row) => Number(row.parent))]);
    const devices = rows.map((row) => Number(row.id));
    if (devices.length > 0) context.afterCommit(() => notify(devices));
  };
  return {
    async beforeCreate(context) {
      const { body } = context;
      const name = checkName(scope.kind, body.name, rules);
      checkValue(scope.kind, name, body);
      const parent = parentOf(context, scope, body);
      // A missing scope is the data API's 400 ("… is required") after the hooks.
      if (parent !== undefined) await refuseDuplicate(context, scope, parent, name, []);
    },
    async beforeUpdate(context) {
      const { tx, ids, body } = context;
      const newName = body.name === undefined ? undefined : checkName(scope.kind, body.name, rules);
      const newParent = parentOf(context, scope, body);
      const { rows } = await tx.query<{ id: number; parent: number; name: string }>(
        `SELECT "id", "${scope.parent}" AS parent, "name" FROM "${scope.table}" WHERE "id" = ANY($1::int[])`,
        [ids],
      );
      if (newName !== undefined || newParent !== undefined) {
        const targets = new Set<string>();
        for (const row of rows) {
          const key = `${newParent ?? row.parent}\u0000${newName ?? row.name}`;
          // Two of the changed rows would end up with one name in one scope.
          if (targets.has(key)) throw new FlotillaError("variable_already_exists");
          targets.add(key);
          await refuseDuplicate(context, scope, newParent ?? Number(row.parent), newName ?? row.name, ids);
        }
      }
      if (body.value === undefined) return;
      const names = new Set(newName !== undefined ? [newName] : rows.map((row) => row.name));
      if (scope.kind === "config" && names.size > 1) {
        // One value for several known config variables: check it against each one's schema.
        for (const name of names) checkValue(scope.kind, name, { value: body.value });
      }
      checkValue(scope.kind, names.size === 1 ? [...names][0] : undefined, body);
    },
    async afterCreate(context) {
      await devicesOf(context, [context.id]);
    },
    async afterUpdate(context) {
      await devicesOf(context, context.ids);
    },
    async beforeDelete(context) {
      await devicesOf(context, context.ids);
    },
  };
}

/** Two hook sets of one resource run in turn (the first one's checks first). */
export function chainHooks(first: ResourceHooks | undefined, second: ResourceHooks): ResourceHooks {
  if (!first) return second;
  const result: ResourceHooks = { ...first };
  for (const stage of Object.keys(second) as (keyof ResourceHooks)[]) {
    const a = first[stage] as ((args: never) => Promise<void> | void) | undefined;
    const b = second[stage] as (args: never) => Promise<void> | void;
    (result as Record<string, unknown>)[stage] = async (args: never) => {
      await a?.(args);
      await b(args);
    };
  }
  // Rows are checked together only when every part can: a part with only beforeCreate (which
  // may look at the rows inserted before, e.g. a duplicate name) takes the rows one by one.
  const canMany = (hooks: ResourceHooks) => !hooks.beforeCreate || hooks.beforeCreateMany;
  if (canMany(first) && canMany(second) && (first.beforeCreateMany || second.beforeCreateMany)) {
    result.beforeCreateMany = async (args) => {
      await first.beforeCreateMany?.(args);
      await second.beforeCreateMany?.(args);
    };
  } else {
    delete result.beforeCreateMany;
  }
  return result;
}
