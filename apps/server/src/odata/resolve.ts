import { FlotillaError } from "../errors.ts";
import { type FieldDefinition, idFieldOf, type Model, quoteIdent, type ResourceDefinition } from "./model.ts";

/**
 * Name lookups against the model, with the 400s a client gets for names that do not exist.
 * Foreign-key fields double as to-one navigations (see `FieldDefinition.references`).
 */

export type Navigation = {
  name: string;
  target: ResourceDefinition;
  toOne: boolean;
  join: (self: string, target: string) => string;
};

type Index = { fields: Map<string, FieldDefinition>; navigations: Map<string, Navigation> };
const indexes = new WeakMap<ResourceDefinition, Index>();

function indexOf(model: Model, resource: ResourceDefinition): Index {
  let index = indexes.get(resource);
  if (index) return index;
  const fields = new Map(resource.fields.map((field) => [field.name, field]));
  const navigations = new Map<string, Navigation>();
  for (const field of resource.fields) {
    if (!field.references) continue;
    const target = modelResource(model, field.references);
    const targetId = requireField(target, idFieldOf(target));
    navigations.set(field.name, {
      name: field.name,
      target,
      toOne: true,
      join: (self, other) => `${fieldSql(targetId, other)} = ${fieldSql(field, self)}`,
    });
  }
  for (const navigation of resource.navigations ?? []) {
    navigations.set(navigation.name, {
      name: navigation.name,
      target: modelResource(model, navigation.target),
      toOne: navigation.toOne === true,
      join: navigation.join,
    });
  }
  index = { fields, navigations };
  indexes.set(resource, index);
  return index;
}

const inverses = new WeakMap<Navigation, string | null>();

/**
 * The to-one navigation of a to-many navigation's target that leads back along the same join
 * (device_tag's `device` for device's `device_tag`), if there is one: a row reached through the
 * navigation reaches its parent row through it.
 */
export function inverseOf(model: Model, from: ResourceDefinition, navigation: Navigation): string | undefined {
  if (navigation.toOne) return undefined;
  const known = inverses.get(navigation);
  if (known !== undefined) return known ?? undefined;
  // The same equation whichever side each alias is written on.
  const equation = (sql: string) =>
    sql
      .split(" = ")
      .map((side) => side.trim())
      .sort()
      .join(" = ");
  const forward = equation(navigation.join("parent", "child"));
  let found: string | null = null;
  for (const candidate of indexOf(model, navigation.target).navigations.values()) {
    if (candidate.toOne && candidate.target === from && equation(candidate.join("child", "parent")) === forward) {
      found = candidate.name;
      break;
    }
  }
  inverses.set(navigation, found);
  return found ?? undefined;
}

/** A resource the model itself points at: missing means the model is wrong (500), not the client. */
function modelResource(model: Model, name: string): ResourceDefinition {
  const resource = model.resource(name);
  if (!resource) throw new Error(`model: unknown resource ${name}`);
  return resource;
}

export function requireResource(model: Model, name: string): ResourceDefinition {
  const resource = model.resource(name);
  if (!resource) throw new FlotillaError("bad_request", `Unknown resource "${name}"`);
  return resource;
}

function requireField(resource: ResourceDefinition, name: string): FieldDefinition {
  const field = resource.fields.find((each) => each.name === name);
  if (!field) throw new Error(`model: ${resource.name} has no field ${name}`);
  return field;
}

function findNavigation(model: Model, resource: ResourceDefinition, name: string): Navigation | undefined {
  return indexOf(model, resource).navigations.get(name);
}

/** A field by name, or a 400 that says what the name is instead. */
export function fieldOf(model: Model, resource: ResourceDefinition, name: string): FieldDefinition {
  const field = indexOf(model, resource).fields.get(name);
  if (field) return field;
  if (findNavigation(model, resource, name)) {
    throw new FlotillaError(
      "bad_request",
      `"${name}" is a navigation of ${resource.name}, not a field: use $expand, ${name}/any(…) or ${name}/$count`,
    );
  }
  throw new FlotillaError("bad_request", `Unknown field "${name}" on ${resource.name}`);
}

/** A navigation by name, or a 400. */
export function navigationOf(model: Model, resource: ResourceDefinition, name: string): Navigation {
  const navigation = findNavigation(model, resource, name);
  if (navigation) return navigation;
  if (indexOf(model, resource).fields.has(name)) {
    throw new FlotillaError("bad_request", `"${name}" is a field of ${resource.name}, not a navigation`);
  }
  throw new FlotillaError("bad_request", `Unknown navigation "${name}" on ${resource.name}`);
}

/** The SQL of a field over a table alias: its column, or its computed expression. */
export function fieldSql(field: FieldDefinition, alias: string): string {
  if (field.computed) return `(${field.computed(alias)})`;
  return `${alias}.${quoteIdent(field.column ?? field.name)}`;
}

export function idField(resource: ResourceDefinition): FieldDefinition {
  return requireField(resource, idFieldOf(resource));
}
