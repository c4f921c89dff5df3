import { FlotillaError } from "../errors.ts";
import type { ODataUrl } from "./ast.ts";
import { type CompiledQuery, ReadCompiler } from "./compile-read.ts";
import { and, fromItem } from "./expressions.ts";
import { type FieldDefinition, type Model, quoteIdent, type ResourceDefinition } from "./model.ts";
import type { Action, Permissions } from "./permissions.ts";
import { fieldOf, fieldSql, idField } from "./resolve.ts";
import { quoteTable } from "./sql.ts";

/** A write body: field name → value, already checked and normalised (foreign keys as numbers, instants as ISO). */
export type WriteValues = Record<string, unknown>;

const badRequest = (message: string) => new FlotillaError("bad_request", message);
const INT4 = 2_147_483_647;

/**
 * Checks a client's POST/PATCH body: known fields, writable ones only, values of the field's type.
 * `required` is checked separately (after the create hooks, which may fill fields in).
 */
export function checkBody(model: Model, resource: ResourceDefinition, body: unknown): WriteValues {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest("The body must be a JSON object of field values");
  }
  const values: WriteValues = {};
  const namesByColumn = new Map<string, string>();
  for (const [name, value] of Object.entries(body)) {
    const parameter = resource.parameters?.[name];
    if (parameter) {
      const type = parameter === "Boolean" ? "boolean" : "string";
      if (value !== null && value !== undefined && typeof value !== type)
        throw badRequest(`"${name}" must be a ${type}`);
      values[name] = value ?? undefined;
      continue;
    }
    const field = fieldOf(model, resource, name);
    if (field.writable !== true || field.computed) throw badRequest(`"${name}" of ${resource.name} cannot be written`);
    // A synonym names the same column: sending both would write it twice.
    const column = field.column ?? field.name;
    const other = namesByColumn.get(column);
    if (other !== undefined) throw badRequest(`"${other}" and "${name}" are the same field of ${resource.name}`);
    namesByColumn.set(column, name);
    values[name] = normalise(field, value);
  }
  return values;
}

/** Drops the parameters the hooks left as they came (strings where a field wants something else). */
export function dropParameters(resource: ResourceDefinition, values: WriteValues) {
  for (const name of Object.keys(resource.parameters ?? {})) {
    const field = resource.fields.find((each) => each.name === name);
    if (!field || field.computed || (field.references && typeof values[name] !== "number")) delete values[name];
  }
}

export function checkRequired(resource: ResourceDefinition, values: WriteValues) {
  for (const field of resource.fields) {
    if (field.required && (values[field.name] === undefined || values[field.name] === null)) {
      throw badRequest(`"${field.name}" is required on ${resource.name}`);
    }
  }
}

function normalise(field: FieldDefinition, value: unknown): unknown {
  if (value === null) return null;
  const invalid = (expected: string) => badRequest(`"${field.name}" must be ${expected}`);
  if (field.references) {
    const id = typeof value === "object" && value !== null && "__id" in value ? value.__id : value;
    if (typeof id !== "number" || !Number.isSafeInteger(id)) throw invalid(`an id or {"__id": id}`);
    return id;
  }
  switch (field.type) {
    case "Integer":
    case "Big Integer": {
      const number = typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value;
      if (typeof number !== "number" || !Number.isSafeInteger(number)) throw invalid("an integer");
      if (field.type === "Integer" && Math.abs(number) > INT4) throw invalid("an integer within ±2147483647");
      return number;
    }
    case "Real": {
      const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
      if (typeof number !== "number" || !Number.isFinite(number)) throw invalid("a number");
      return number;
    }
    case "Text":
      if (typeof value !== "string") throw invalid("a string");
      return value;
    case "Boolean":
      if (value === 0 || value === 1) return value === 1;
      if (typeof value !== "boolean") throw invalid("true or false");
      return value;
    case "Date Time": {
      const date = typeof value === "string" || typeof value === "number" ? new Date(value) : undefined;
      if (!date || Number.isNaN(date.getTime())) throw invalid("a date and time (ISO 8601)");
      return date.toISOString();
    }
    case "JSON":
      return value;
  }
}

/** A column value as a statement parameter. */
function parameter(field: FieldDefinition, value: unknown): unknown {
  return field.type === "JSON" && value !== null && value !== undefined ? JSON.stringify(value) : value;
}

/** Field names written by the server's hooks must exist too (a hook's bug is a 500). */
function columnsOf(resource: ResourceDefinition, values: WriteValues) {
  return Object.entries(values)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => {
      const field = resource.fields.find((each) => each.name === name);
      if (!field || field.computed) throw new Error(`odata: ${resource.name} has no column for ${name}`);
      return { column: quoteIdent(field.column ?? field.name), value: parameter(field, value) };
    });
}

export function insertStatement(resource: ResourceDefinition, values: WriteValues): CompiledQuery {
  const columns = columnsOf(resource, values);
  const id = quoteIdent(idField(resource).column ?? idField(resource).name);
  const table = quoteTable(resource.table);
  if (columns.length === 0) return { text: `INSERT INTO ${table} DEFAULT VALUES RETURNING ${id} AS "id"`, values: [] };
  const text = `INSERT INTO ${table} (${columns.map((each) => each.column).join(", ")}) VALUES (${columns
    .map((_, index) => `$${index + 1}`)
    .join(", ")}) RETURNING ${id} AS "id"`;
  return { text, values: columns.map((each) => each.value) };
}

/**
 * One INSERT of many rows that set the same columns, their ids returned in the order of the rows
 * (PostgreSQL returns a VALUES list's rows in order); undefined when the rows differ in columns.
 */
export function insertManyStatement(resource: ResourceDefinition, rows: WriteValues[]): CompiledQuery | undefined {
  const columnLists = rows.map((values) => columnsOf(resource, values));
  const names = columnLists[0]?.map((each) => each.column) ?? [];
  if (names.length === 0) return undefined;
  if (columnLists.some((columns) => columns.map((each) => each.column).join() !== names.join())) return undefined;
  const id = quoteIdent(idField(resource).column ?? idField(resource).name);
  let n = 0;
  const tuples = columnLists.map((columns) => `(${columns.map(() => `$${++n}`).join(", ")})`);
  return {
    text: `INSERT INTO ${quoteTable(resource.table)} (${names.join(", ")}) VALUES ${tuples.join(", ")} RETURNING ${id} AS "id"`,
    values: columnLists.flatMap((columns) => columns.map((each) => each.value)),
  };
}

export function updateStatement(
  resource: ResourceDefinition,
  ids: number[],
  values: WriteValues,
): CompiledQuery | undefined {
  const columns = columnsOf(resource, values);
  if (columns.length === 0) return undefined;
  const id = quoteIdent(idField(resource).column ?? idField(resource).name);
  const assignments = columns.map((each, index) => `${each.column} = $${index + 2}`).join(", ");
  return {
    text: `UPDATE ${quoteTable(resource.table)} SET ${assignments} WHERE ${id} = ANY($1::bigint[])`,
    values: [ids, ...columns.map((each) => each.value)],
  };
}

/** Deletes and returns the rows as stored, for the after-delete hooks. */
export function deleteStatement(resource: ResourceDefinition, ids: number[]): CompiledQuery {
  const id = quoteIdent(idField(resource).column ?? idField(resource).name);
  return {
    text: `DELETE FROM ${quoteTable(resource.table)} WHERE ${id} = ANY($1::bigint[]) RETURNING *`,
    values: [ids],
  };
}

/**
 * The ids of the rows a PATCH or DELETE addresses (key and `$filter`) that the caller may both read
 * and update/delete, locked for the rest of the transaction. No access at all is a 401.
 */
export function targetRowsStatement(
  model: Model,
  permissions: Permissions,
  url: ODataUrl,
  action: "update" | "delete",
): CompiledQuery {
  const { top, skip, orderby, expand } = url.options;
  if (url.count || top !== undefined || skip !== undefined || orderby || expand) {
    throw badRequest("PATCH and DELETE take a key or $filter only");
  }
  const compiler = new ReadCompiler(model, permissions);
  const { binding, where } = compiler.root(url, action);
  const id = fieldSql(idField(binding.resource), binding.alias);
  const text = `SELECT ${id} AS "id" FROM ${fromItem(binding)} WHERE ${and(where)} ORDER BY ${id} FOR UPDATE OF ${binding.alias}`;
  return compiler.sql.finish(text);
}

/**
 * Counts how many of the rows `ids` pass the caller's permission for `action` (checked after the
 * write, inside the transaction); undefined when the caller may do it to every row.
 */
export function accessCheckStatement(
  model: Model,
  permissions: Permissions,
  resource: ResourceDefinition,
  ids: number[],
  action: Action,
): CompiledQuery | undefined {
  const access = permissions.filter(resource.name, action);
  if (access === "all") return undefined;
  const compiler = new ReadCompiler(model, permissions);
  const binding = { resource, alias: compiler.sql.alias() };
  const id = fieldSql(idField(resource), binding.alias);
  const where = [`${id} = ANY(${compiler.sql.param(ids, "bigint[]")})`];
  where.push(compiler.expressions.accessCondition(access, binding, action) ?? "TRUE");
  return compiler.sql.finish(`SELECT count(*)::int AS "n" FROM ${fromItem(binding)} WHERE ${and(where)}`);
}
