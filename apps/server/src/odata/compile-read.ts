import { FlotillaError } from "../errors.ts";
import type { ExpandItem, Expr, Key, ODataUrl, OrderItem, QueryOptions } from "./ast.ts";
import { and, type Binding, ExpressionCompiler, fieldValue, fromItem } from "./expressions.ts";
import { type FieldDefinition, idFieldOf, type Model } from "./model.ts";
import type { Permissions } from "./permissions.ts";
import { fieldOf, fieldSql, idField, navigationOf, requireResource } from "./resolve.ts";
import { isoTimestamp, jsonObject, SqlBuilder } from "./sql.ts";

/** One parameterised statement. */
export type CompiledQuery = { text: string; values: unknown[] };

/**
 * A GET compiled to one statement: `rows` yields one JSON text per row in column `d`, `count`
 * yields the number in column `d`.
 */
export type ReadQuery = { kind: "rows" | "count"; query: CompiledQuery };

/**
 * Compiles a GET. Every row is built as JSON by PostgreSQL: `$expand` levels are correlated
 * `COALESCE(json_agg(…), '[]')` sub-selects, so one statement answers the whole tree. The caller's
 * read permission on every resource touched is ANDed in; no read access to the requested resource
 * is a 401.
 */
export function compileRead(model: Model, permissions: Permissions, url: ODataUrl): ReadQuery {
  const compiler = new ReadCompiler(model, permissions);
  const { binding, where } = compiler.root(url, "read");
  const { options } = url;
  const from = `FROM ${fromItem(binding)} WHERE ${and(where)}`;
  const sql = compiler.sql;
  if (url.count) {
    const paged = options.top !== undefined || options.skip !== undefined;
    const text = paged
      ? `SELECT count(*)::int AS "d" FROM (SELECT 1 ${from}${compiler.page(options)}) AS "counted"`
      : `SELECT count(*)::int AS "d" ${from}`;
    return { kind: "count", query: sql.finish(text) };
  }
  const json = compiler.row(binding, options);
  const order = orderBy(compiler.order(binding, options.orderby));
  const text = `SELECT (${json})::text AS "d" ${from} ORDER BY ${order}${compiler.page(options)}`;
  return { kind: "rows", query: sql.finish(text) };
}

export class ReadCompiler {
  readonly sql = new SqlBuilder();
  readonly expressions: ExpressionCompiler;

  constructor(
    readonly model: Model,
    readonly permissions: Permissions,
  ) {
    this.expressions = new ExpressionCompiler(model, permissions, this.sql);
  }

  /**
   * The requested resource and the conditions on its rows: key, `$filter`, and the caller's read
   * permission plus, for writes, the permission for `action`.
   */
  root(url: ODataUrl, action: "read" | "update" | "delete") {
    const resource = requireResource(this.model, url.resource);
    const binding: Binding = { resource, alias: this.sql.alias() };
    const where: string[] = [];
    for (const each of action === "read" ? (["read"] as const) : (["read", action] as const)) {
      const access = this.permissions.filter(resource.name, each);
      if (access === "none") throw new FlotillaError("unauthorized");
      const condition = this.expressions.accessCondition(access, binding, each);
      if (condition) where.push(condition);
    }
    const scope = ExpressionCompiler.scope(binding);
    if (url.key) where.push(this.expressions.predicate(keyFilter(this.model, url.key, url.resource), scope));
    if (url.options.filter) where.push(this.expressions.predicate(url.options.filter, scope));
    return { binding, where };
  }

  /** The JSON object of a row: selected fields, `nav/$count` selections and expansions. */
  row(binding: Binding, options: QueryOptions): string {
    const { resource, alias } = binding;
    const pairs: [string, string][] = [];
    const taken = new Set<string>();
    const take = (name: string, sql: string) => {
      if (taken.has(name)) throw new FlotillaError("bad_request", `"${name}" is requested twice on ${resource.name}`);
      taken.add(name);
      pairs.push([name, sql]);
    };
    const expansions = options.expand ?? [];
    const expanded = new Set(expansions.map((item) => item.name));

    const fields: FieldDefinition[] = [];
    if (options.select === undefined) {
      fields.push(...resource.fields.filter((field) => field.selectByDefault !== false));
    } else {
      for (const item of options.select) {
        if (item.count) {
          take(item.name, this.count(binding, item.name, item.count.filter));
          continue;
        }
        const field = fieldOf(this.model, resource, item.name);
        if (!fields.includes(field)) fields.push(field);
      }
    }
    for (const field of fields) {
      // An expanded foreign key is answered by its expansion.
      if (!expanded.has(field.name)) take(field.name, jsonFieldValue(field, alias));
    }
    for (const item of expansions) take(item.name, this.expansion(binding, item));
    if (pairs.length === 0) throw new FlotillaError("bad_request", `Nothing is selected on ${resource.name}`);
    return jsonObject(pairs);
  }

  /** `(SELECT count(*) …)` of a navigation's readable rows. */
  private count(parent: Binding, name: string, filter: Expr | undefined): string {
    const { binding, where } = this.navigate(parent, name, filter);
    return `(SELECT count(*) FROM ${fromItem(binding)} WHERE ${and(where)})`;
  }

  private navigate(parent: Binding, name: string, filter: Expr | undefined) {
    const navigation = navigationOf(this.model, parent.resource, name);
    const binding: Binding = { resource: navigation.target, alias: this.sql.alias() };
    const where = [navigation.join(parent.alias, binding.alias)];
    const access = this.expressions.readAccess(binding, { parent, navigation });
    if (access) where.push(access);
    if (filter) where.push(this.expressions.predicate(filter, ExpressionCompiler.scope(binding)));
    return { binding, where };
  }

  /** An expansion: always an array (even to-one), or a number for `nav/$count`. */
  private expansion(parent: Binding, item: ExpandItem): string {
    const { options } = item;
    if (item.count) return this.count(parent, item.name, options.filter);
    const { binding, where } = this.navigate(parent, item.name, options.filter);
    const json = this.row(binding, options);
    const terms = this.order(binding, options.orderby);
    const from = `FROM ${fromItem(binding)} WHERE ${and(where)}`;
    if (options.top === undefined && options.skip === undefined) {
      return `(SELECT COALESCE(json_agg(${json} ORDER BY ${orderBy(terms)}), '[]'::json) ${from})`;
    }
    // Paged: order inside (for LIMIT) and again in the aggregate, on the same keys.
    const columns = terms.map((term, index) => `${term.sql} AS "o${index}"`).join(", ");
    const byColumns = (prefix: string) =>
      orderBy(terms.map((term, index) => ({ ...term, sql: `${prefix}"o${index}"` })));
    const inner = `SELECT ${json} AS "j", ${columns} ${from} ORDER BY ${byColumns("")}${this.page(options)}`;
    return `(SELECT COALESCE(json_agg("page"."j" ORDER BY ${byColumns('"page".')}), '[]'::json) FROM (${inner}) AS "page")`;
  }

  /** ORDER BY terms, ending with the id so that paging is stable. */
  order(binding: Binding, orderby: OrderItem[] | undefined): OrderTerm[] {
    const terms: OrderTerm[] = [];
    const scope = ExpressionCompiler.scope(binding);
    const id = idFieldOf(binding.resource);
    let hasId = false;
    for (const item of orderby ?? []) {
      if (item.path.tail?.kind === "lambda")
        throw new FlotillaError("bad_request", "$orderby cannot use any() or all()");
      const value = this.expressions.value({ kind: "path", path: item.path }, scope);
      if (value.type === "json") throw new FlotillaError("bad_request", "$orderby cannot use a JSON field");
      if (value.type === "boolean" && item.path.tail) throw new FlotillaError("bad_request", "$orderby needs a value");
      terms.push({ sql: value.sql, direction: item.direction === "asc" ? "ASC" : "DESC" });
      if (!item.path.tail && item.path.segments.length === 1 && item.path.segments[0] === id) hasId = true;
    }
    if (!hasId) terms.push({ sql: fieldSql(idField(binding.resource), binding.alias), direction: "ASC" });
    return terms;
  }

  page(options: QueryOptions): string {
    let text = "";
    if (options.top !== undefined) text += ` LIMIT ${this.sql.param(options.top, "bigint")}`;
    if (options.skip !== undefined) text += ` OFFSET ${this.sql.param(options.skip, "bigint")}`;
    return text;
  }
}

export type OrderTerm = { sql: string; direction: "ASC" | "DESC" };

function orderBy(terms: readonly OrderTerm[]): string {
  return terms.map((term) => `${term.sql} ${term.direction}`).join(", ");
}

/** A field's JSON: foreign keys as `{"__id": n}`, instants as ISO strings. */
function jsonFieldValue(field: FieldDefinition, alias: string): string {
  const value = fieldValue(field, alias).sql;
  if (field.references) return `CASE WHEN ${value} IS NULL THEN NULL ELSE json_build_object('__id', ${value}) END`;
  if (field.type === "Date Time") return isoTimestamp(value);
  return value;
}

/** `resource(1)` and `resource(a='x',b=2)` as an equality filter on the key fields. */
export function keyFilter(model: Model, key: Key, resourceName: string): Expr {
  const resource = requireResource(model, resourceName);
  const id = idFieldOf(resource);
  const equal = (name: string, value: Expr): Expr => ({
    kind: "compare",
    op: "eq",
    left: { kind: "path", path: { segments: [name] } },
    right: value,
  });
  if (key.kind === "id") return equal(id, key.value);
  const names = Object.keys(key.values).sort();
  const keys = [[id], ...(resource.alternateKeys ?? [])];
  const matches = keys.some(
    (candidate) =>
      candidate.length === names.length && [...candidate].sort().every((name, index) => name === names[index]),
  );
  if (!matches) {
    const known = keys.map((candidate) => candidate.join(",")).join("; ");
    throw new FlotillaError(
      "bad_request",
      `(${names.join(",")}) is not a key of ${resource.name}; its keys are: ${known}`,
    );
  }
  return { kind: "and", args: names.map((name) => equal(name, key.values[name] ?? { kind: "null" })) };
}
