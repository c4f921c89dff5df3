import { FlotillaError } from "../errors.ts";
import type { Arithmetic, Comparison, Expr, Literal, PathTail, PropertyPath } from "./ast.ts";
import { readImpliedByParent } from "./implied-access.ts";
import type { FieldDefinition, FieldType, Model, ResourceDefinition } from "./model.ts";
import type { Access, Action, Permissions } from "./permissions.ts";
import { fieldOf, fieldSql, idField, inverseOf, type Navigation, navigationOf } from "./resolve.ts";
import { quoteTable, type SqlBuilder } from "./sql.ts";

/**
 * Compiles `$filter` expressions (and permission filters, and `$orderby` paths) to SQL.
 *
 * Semantics are OData's two-valued logic: a condition compiles to SQL that is TRUE exactly when
 * the condition holds (FALSE or NULL otherwise), so `and`/`or` map directly and `not x` becomes
 * `(x) IS NOT TRUE`. Comparisons with null are false except `eq`/`ne`, which treat null as a value
 * (`x ne 'a'` holds when x is null). Arithmetic propagates null. Integer division truncates
 * (PostgreSQL's). Navigations reached from a client's filter are ANDed with the target's read
 * permission; inside permission filters they are not (see `createPermissions`).
 */

export type ValueType = "number" | "text" | "boolean" | "datetime" | "date" | "time" | "duration" | "json" | "null";

/** An SQL value expression and its OData type. */
export type Value = {
  sql: string;
  type: ValueType;
  /** Double precision: `%` needs numeric operands. */
  float?: boolean;
  /** Built from client literals only and never null: `=` is then as good as IS NOT DISTINCT FROM. */
  constant?: boolean;
};

/** A resource row under an SQL alias. */
export type Binding = { resource: ResourceDefinition; alias: string };

export type Scope = {
  /** The resource the unqualified names refer to: the filtered one, or the innermost lambda's target. */
  it: Binding;
  /** Lambda variables in scope. */
  variables: ReadonlyMap<string, Binding>;
  /** Whether navigated-to resources are limited by the caller's read permission. */
  restricted: boolean;
  /**
   * Inside a permission filter: the action it grants (what `canAccess()` asks of the targets) and
   * the resources whose permission is being expanded (a cycle through them grants nothing).
   */
  permission?: { action: Action; trail: readonly string[] };
  /**
   * Rows already joined, by the alias of a row and the to-one navigation that reaches them: a
   * permission compiled for a row reached from its parent (a device's tags) takes the parent row
   * where its path names it, instead of joining it again (`readAccess`).
   */
  joined?: ReadonlyMap<string, ReadonlyMap<string, Binding>>;
};

const badRequest = (message: string) => new FlotillaError("bad_request", message);

const TYPE_NAMES: Record<ValueType, string> = {
  number: "Number",
  text: "Text",
  boolean: "Boolean",
  datetime: "Date Time",
  date: "Date",
  time: "Time",
  duration: "Duration",
  json: "JSON",
  null: "null",
};

const PG_TYPES: Partial<Record<ValueType, string>> = {
  number: "numeric",
  text: "text",
  boolean: "boolean",
  datetime: "timestamptz",
  date: "date",
  time: "time",
  duration: "interval",
};

const FIELD_TYPES: Record<FieldType, ValueType> = {
  Integer: "number",
  "Big Integer": "number",
  Real: "number",
  Text: "text",
  Boolean: "boolean",
  "Date Time": "datetime",
  JSON: "json",
};

const COMPARISON_SQL: Record<Exclude<Comparison, "eq" | "ne">, string> = { gt: ">", ge: ">=", lt: "<", le: "<=" };
const ARITHMETIC_SQL: Record<Arithmetic, string> = { add: "+", sub: "-", mul: "*", div: "/", mod: "%" };

/** ` FROM a, b` of a chain's joins; nothing when every row it needs is already joined. */
const fromList = (from: readonly string[]) => (from.length > 0 ? ` FROM ${from.join(", ")}` : "");

export const and = (conditions: readonly string[]): string =>
  conditions.length === 0 ? "TRUE" : conditions.map((condition) => `(${condition})`).join(" AND ");

export function fieldValue(field: FieldDefinition, alias: string): Value {
  return { sql: fieldSql(field, alias), type: FIELD_TYPES[field.type], float: field.type === "Real" };
}

export class ExpressionCompiler {
  constructor(
    readonly model: Model,
    readonly permissions: Permissions,
    readonly sql: SqlBuilder,
  ) {}

  /** A scope for a client's expression over `binding`. */
  static scope(binding: Binding, restricted = true): Scope {
    return { it: binding, variables: new Map(), restricted };
  }

  /**
   * The caller's read permission on a row, as a condition; undefined when everything is readable.
   * `reached`: the row was joined from `parent` through `navigation`; a permission whose path goes
   * back to the parent uses that row (a device's tags: their device is the one in hand), which
   * spares PostgreSQL a hash of every readable parent (docs/benchmarks.md, the tag filter).
   */
  readAccess(binding: Binding, reached?: { parent: Binding; navigation: Navigation }): string | undefined {
    const access = this.permissions.filter(binding.resource.name, "read");
    const back = reached && inverseOf(this.model, reached.parent.resource, reached.navigation);
    // Every parent reached here was checked readable (the requested rows, an expansion's, a
    // chain's earlier hop; an OR's union branches are intersected with the requested rows).
    if (back && readImpliedByParent(access, this.permissions.filter(reached.parent.resource.name, "read"), back)) {
      return undefined;
    }
    const joined = back ? new Map([[binding.alias, new Map([[back, reached.parent]])]]) : undefined;
    return this.accessCondition(access, binding, "read", [], joined);
  }

  /** A permission (for `action`) on a row as a condition; undefined when it allows every row. */
  accessCondition(
    access: Access,
    binding: Binding,
    action: Action,
    trail: readonly string[] = [],
    joined?: Scope["joined"],
  ): string | undefined {
    if (access === "all") return undefined;
    if (access === "none" || access.length === 0) return "FALSE";
    const scope: Scope = {
      ...ExpressionCompiler.scope(binding, false),
      permission: { action, trail: [...trail, binding.resource.name] },
      ...(joined ? { joined } : {}),
    };
    try {
      return access.map((filter) => `(${this.predicate(filter, scope)})`).join(" OR ");
    } catch (error) {
      // A permission that does not fit the model is the server's bug: a 500, and no names leak.
      if (!(error instanceof FlotillaError)) throw error;
      throw new Error(`permissions: the ${action} filter of ${binding.resource.name}: ${error.message}`, {
        cause: error,
      });
    }
  }

  /** A condition: SQL that is TRUE exactly when `expr` holds. */
  predicate(expr: Expr, scope: Scope): string {
    switch (expr.kind) {
      case "or":
        if (isSplittableOr(expr.args, scope)) return this.orAsUnion(expr.args, scope);
        return `(${expr.args.map((arg) => `(${this.predicate(arg, scope)})`).join(" OR ")})`;
      case "and":
        return `(${expr.args.map((arg) => `(${this.predicate(arg, scope)})`).join(" AND ")})`;
      case "not":
        return `((${this.predicate(expr.arg, scope)}) IS NOT TRUE)`;
      case "compare":
        return this.compare(expr.op, this.value(expr.left, scope), this.value(expr.right, scope));
      case "in":
        return this.in(this.value(expr.left, scope), expr.items);
      case "boolean":
        return expr.value ? "TRUE" : "FALSE";
      case "null":
        return "FALSE";
      default: {
        const value = this.value(expr, scope);
        if (value.type !== "boolean") {
          throw badRequest(`A condition was expected, not a ${TYPE_NAMES[value.type]} value`);
        }
        return value.sql;
      }
    }
  }

  /**
   * `a or b or nav/any(x: …)` over the filtered row, as `id IN (rows where a or b UNION ALL rows
   * where nav/any(…))`. The same rows, but PostgreSQL can answer each branch from its indexes (a
   * BitmapOr over pg_trgm indexes for the row's own fields, the lambda's from the target's):
   * an OR with an EXISTS in it is a filter on every row of the scan instead (0.3–1.3 s for the
   * dashboard's free-text filter over a fleet of 100,000 devices, bench/big-fleet.ts). Where
   * an index does not help (a text under 3 characters), PostgreSQL may still probe the branches
   * row by row from the outer scan (a parameterized append).
   */
  private orAsUnion(args: readonly Expr[], scope: Scope): string {
    const { resource } = scope.it;
    const id = idField(resource);
    const branch = (conditions: readonly Expr[]) => {
      const row: Binding = { resource, alias: this.sql.alias() };
      const inner = { ...scope, it: row };
      const where = conditions.map((condition) => `(${this.predicate(condition, inner)})`).join(" OR ");
      return `SELECT ${fieldSql(id, row.alias)} FROM ${fromItem(row)} WHERE ${where}`;
    };
    const lambdas = args.filter(isAnyLambda);
    const others = args.filter((arg) => !isAnyLambda(arg));
    const branches = [...(others.length > 0 ? [branch(others)] : []), ...lambdas.map((lambda) => branch([lambda]))];
    return `(${fieldSql(id, scope.it.alias)} IN (${branches.join(" UNION ALL ")}))`;
  }

  value(expr: Expr, scope: Scope): Value {
    switch (expr.kind) {
      case "number":
      case "text":
      case "boolean":
      case "datetime":
      case "date":
      case "duration":
      case "null":
        return this.literal(expr);
      case "path":
        return this.path(expr.path, scope);
      case "arithmetic":
        return this.arithmetic(expr.op, this.value(expr.left, scope), this.value(expr.right, scope));
      case "call":
        return this.call(
          expr.method,
          expr.args.map((arg) => this.value(arg, scope)),
        );
      default:
        return { sql: `((${this.predicate(expr, scope)}) IS TRUE)`, type: "boolean" };
    }
  }

  literal(literal: Literal): Value {
    switch (literal.kind) {
      case "number":
        return Number.isSafeInteger(literal.value)
          ? { sql: this.sql.param(literal.value, "bigint"), type: "number", constant: true }
          : { sql: this.sql.param(String(literal.value), "numeric"), type: "number", constant: true };
      case "text":
        return { sql: this.sql.param(literal.value, "text"), type: "text", constant: true };
      case "boolean":
        return { sql: literal.value ? "TRUE" : "FALSE", type: "boolean", constant: true };
      case "datetime":
        return { sql: this.sql.param(literal.value, "timestamptz"), type: "datetime", constant: true };
      case "date":
        return { sql: this.sql.param(literal.value, "date"), type: "date", constant: true };
      case "duration": {
        const sign = literal.negative ? "-" : "";
        const text = `${sign}${literal.day} days ${sign}${literal.hour} hours ${sign}${literal.minute} minutes ${sign}${literal.second} seconds`;
        return { sql: this.sql.param(text, "interval"), type: "duration", constant: true };
      }
      case "null":
        return { sql: "NULL", type: "null" };
    }
  }

  /** A property path: a field (possibly across to-one navigations), a `$count`, or a lambda. */
  path(path: PropertyPath, scope: Scope): Value {
    const [first = "", ...others] = path.segments;
    const variable = scope.variables.get(first);
    const start = variable ?? scope.it;
    const rest = variable ? others : path.segments;
    if (path.tail) return this.collection(start, rest, path.tail, scope);
    const fieldName = rest.at(-1);
    if (fieldName === undefined) throw badRequest(`The lambda variable "${first}" is not a value; use ${first}/field`);
    const hops = rest.slice(0, -1);
    if (hops.length === 0) return fieldValue(fieldOf(this.model, start.resource, fieldName), start.alias);
    const chain = this.chain(start, hops, scope, true);
    const value = fieldValue(fieldOf(this.model, chain.last.resource, fieldName), chain.last.alias);
    return { ...value, sql: `(SELECT ${value.sql}${fromList(chain.from)} WHERE ${and(chain.where)} LIMIT 1)` };
  }

  /** `nav/$count(...)`, `nav/any(x: ...)`, `nav/all(x: ...)`, `nav/canAccess()` from `start` through `hops`. */
  private collection(start: Binding, hops: string[], tail: PathTail, scope: Scope): Value {
    if (hops.length === 0) throw badRequest("$count, any() and all() apply to a navigation");
    const chain = this.chain(start, hops, scope, false);
    const from = fromList(chain.from);
    if (tail.kind === "canAccess") {
      const { permission } = scope;
      if (!permission) throw badRequest("canAccess() is only for permissions");
      const target = chain.last;
      // Cutting cycles gives the least fixpoint: access must come from somewhere outside the cycle.
      const condition = permission.trail.includes(target.resource.name)
        ? "FALSE"
        : (this.accessCondition(
            this.permissions.filter(target.resource.name, permission.action),
            target,
            permission.action,
            permission.trail,
          ) ?? "TRUE");
      return { sql: `(EXISTS (SELECT 1${from} WHERE ${and([...chain.where, condition])}))`, type: "boolean" };
    }
    if (tail.kind === "count") {
      const where = [...chain.where];
      if (tail.filter) where.push(this.predicate(tail.filter, { ...scope, it: chain.last }));
      return { sql: `(SELECT count(*)${from} WHERE ${and(where)})`, type: "number" };
    }
    // As in pinejs, unqualified names in the body refer to the lambda's target; outer rows by their variable.
    const variables = new Map(scope.variables).set(tail.variable, chain.last);
    const body = this.predicate(tail.body, { ...scope, it: chain.last, variables });
    const sql =
      tail.method === "any"
        ? `EXISTS (SELECT 1${from} WHERE ${and([...chain.where, body])})`
        : `NOT EXISTS (SELECT 1${from} WHERE ${and([...chain.where, `(${body}) IS NOT TRUE`])})`;
    return { sql: `(${sql})`, type: "boolean" };
  }

  /** Joins along navigations, each target limited by the caller's read permission when restricted. */
  chain(start: Binding, hops: string[], scope: Scope, toOneOnly: boolean) {
    const from: string[] = [];
    const where: string[] = [];
    let current = start;
    for (const name of hops) {
      // The row this navigation reaches is already joined (a permission of a row reached from it).
      const known = scope.joined?.get(current.alias)?.get(name);
      if (known) {
        current = known;
        continue;
      }
      const navigation = navigationOf(this.model, current.resource, name);
      if (toOneOnly && !navigation.toOne) {
        throw badRequest(`"${name}" of ${current.resource.name} is a collection: use ${name}/any(…) or ${name}/$count`);
      }
      const next: Binding = { resource: navigation.target, alias: this.sql.alias() };
      from.push(`${quoteTable(next.resource.table)} ${next.alias}`);
      where.push(navigation.join(current.alias, next.alias));
      if (scope.restricted) {
        const access = this.readAccess(next, { parent: current, navigation });
        if (access) where.push(access);
      }
      current = next;
    }
    return { from, where, last: current };
  }

  compare(op: Comparison, left: Value, right: Value): string {
    if (left.type === "null" || right.type === "null") {
      if (op !== "eq" && op !== "ne") return "FALSE";
      if (left.type === "null" && right.type === "null") return op === "eq" ? "TRUE" : "FALSE";
      const other = left.type === "null" ? right : left;
      return `(${other.sql}) IS ${op === "eq" ? "" : "NOT "}NULL`;
    }
    const [a, b] = this.unify(left, right);
    if (op === "eq") return left.constant || right.constant ? `${a} = ${b}` : `${a} IS NOT DISTINCT FROM ${b}`;
    if (op === "ne") return `${a} IS DISTINCT FROM ${b}`;
    return `${a} ${COMPARISON_SQL[op]} ${b}`;
  }

  /** Both sides of a comparison in one SQL type, or a 400. */
  private unify(left: Value, right: Value): [string, string] {
    if (left.type === "json" || right.type === "json") throw badRequest("JSON values cannot be compared");
    if (left.type === right.type) return [`(${left.sql})`, `(${right.sql})`];
    const cast = (from: Value, to: Value): string | undefined => {
      if (from.type === "date" && to.type === "datetime") return `((${from.sql})::timestamp AT TIME ZONE 'UTC')`;
      if (from.type === "text" && from.constant && (to.type === "datetime" || to.type === "date")) {
        return `(${from.sql})::${PG_TYPES[to.type]}`;
      }
      return undefined;
    };
    const leftCast = cast(left, right);
    if (leftCast) return [leftCast, `(${right.sql})`];
    const rightCast = cast(right, left);
    if (rightCast) return [`(${left.sql})`, rightCast];
    throw badRequest(`Cannot compare ${TYPE_NAMES[left.type]} with ${TYPE_NAMES[right.type]}`);
  }

  private in(left: Value, items: Literal[]): string {
    const values = items.filter((item) => item.kind !== "null");
    const hasNull = values.length < items.length;
    if (left.type === "null") return hasNull ? "TRUE" : "FALSE";
    const conditions: string[] = [];
    if (values.length > 0) {
      const kinds = new Set(values.map((item) => item.kind));
      const raw = values.map((item) => ("value" in item ? item.value : null));
      const only = (...allowed: string[]) => [...kinds].every((kind) => allowed.includes(kind));
      let arrayType: string | undefined;
      if (left.type === "number" && only("number")) {
        arrayType = raw.every((value) => Number.isSafeInteger(value)) ? "bigint[]" : "numeric[]";
      } else if (left.type === "text" && only("text")) arrayType = "text[]";
      else if (left.type === "boolean" && only("boolean")) arrayType = "boolean[]";
      else if (left.type === "datetime" && only("datetime", "text")) arrayType = "timestamptz[]";
      else if (left.type === "date" && only("date", "text")) arrayType = "date[]";
      if (!arrayType) throw badRequest(`in (…) needs ${TYPE_NAMES[left.type]} values`);
      const array = arrayType === "numeric[]" ? raw.map(String) : raw;
      conditions.push(`(${left.sql}) = ANY(${this.sql.param(array, arrayType)})`);
    }
    if (hasNull) conditions.push(`(${left.sql}) IS NULL`);
    return conditions.length === 1 ? (conditions[0] ?? "FALSE") : `(${conditions.join(" OR ")})`;
  }

  private arithmetic(op: Arithmetic, left: Value, right: Value): Value {
    const operable = new Set<ValueType>(["number", "datetime", "date", "duration", "null"]);
    if (!operable.has(left.type) || !operable.has(right.type)) {
      throw badRequest(`${op} is not defined for ${TYPE_NAMES[left.type]} and ${TYPE_NAMES[right.type]}`);
    }
    if (left.type === "null" || right.type === "null") return { sql: "NULL", type: "null" };
    const constant = left.constant === true && right.constant === true;
    const symbol = ARITHMETIC_SQL[op];
    const pair = `${left.type} ${op} ${right.type}`;
    if (left.type === "number" && right.type === "number") {
      const float = left.float === true || right.float === true;
      if (op === "mod" && float)
        return { sql: `((${left.sql})::numeric % (${right.sql})::numeric)`, type: "number", constant };
      return { sql: `((${left.sql}) ${symbol} (${right.sql}))`, type: "number", float, constant };
    }
    const utc = (value: Value) =>
      value.type === "date" ? `((${value.sql})::timestamp AT TIME ZONE 'UTC')` : `(${value.sql})`;
    switch (pair) {
      case "datetime sub datetime":
      case "datetime sub date":
      case "date sub datetime":
      case "date sub date":
        return { sql: `(${utc(left)} - ${utc(right)})`, type: "duration", constant };
      case "datetime add duration":
      case "datetime sub duration":
      case "date add duration":
      case "date sub duration":
        return { sql: `(${utc(left)} ${symbol} (${right.sql}))`, type: "datetime", constant };
      case "duration add datetime":
      case "duration add date":
        return { sql: `((${left.sql}) + ${utc(right)})`, type: "datetime", constant };
      case "duration add duration":
      case "duration sub duration":
      case "duration mul number":
      case "duration div number":
      case "number mul duration":
        return { sql: `((${left.sql}) ${symbol} (${right.sql}))`, type: "duration", constant };
      default:
        throw badRequest(`${op} is not defined for ${TYPE_NAMES[left.type]} and ${TYPE_NAMES[right.type]}`);
    }
  }

  private call(method: string, args: Value[]): Value {
    /** The argument's SQL if it has one of the types (null is typed to the first). */
    const arg = (index: number, ...types: ValueType[]): string => {
      const value = args[index];
      if (!value) throw badRequest(`${method}() is missing an argument`);
      if (value.type === "null") return `NULL::${PG_TYPES[types[0] ?? "text"] ?? "text"}`;
      if (!types.includes(value.type)) {
        throw badRequest(
          `${method}() takes ${types.map((type) => TYPE_NAMES[type]).join(" or ")}, not ${TYPE_NAMES[value.type]}`,
        );
      }
      return `(${value.sql})`;
    };
    const typeOf = (index: number) => args[index]?.type;
    /** Date parts are read in UTC. */
    const utc = (index: number, ...types: ValueType[]) => {
      const sql = arg(index, ...types);
      return typeOf(index) === "datetime" ? `(${sql} AT TIME ZONE 'UTC')` : sql;
    };
    switch (method) {
      // A LIKE, not strpos(): a pg_trgm index on the text (e.g. `lower(device_name)`, migration
      // 0025) serves it. The needle's own `%`, `_` and `\` are escaped; PostgreSQL folds the
      // escaping of a parameter before planning, so the index sees the literal pattern.
      case "contains":
        return { sql: `(${arg(0, "text")} LIKE ${likeContaining(arg(1, "text"))})`, type: "boolean" };
      case "substringof":
        return { sql: `(${arg(1, "text")} LIKE ${likeContaining(arg(0, "text"))})`, type: "boolean" };
      case "startswith":
        return { sql: `starts_with(${arg(0, "text")}, ${arg(1, "text")})`, type: "boolean" };
      case "endswith": {
        const suffix = arg(1, "text");
        return { sql: `(right(${arg(0, "text")}, char_length(${suffix})) = ${suffix})`, type: "boolean" };
      }
      case "length":
        return { sql: `char_length(${arg(0, "text")})`, type: "number" };
      case "indexof":
        return { sql: `(strpos(${arg(0, "text")}, ${arg(1, "text")}) - 1)`, type: "number" };
      case "substring": {
        const text = arg(0, "text");
        const start = `(${arg(1, "number")})::int + 1`;
        const sql =
          args.length === 3 ? `substr(${text}, ${start}, (${arg(2, "number")})::int)` : `substr(${text}, ${start})`;
        return { sql, type: "text" };
      }
      case "replace":
        return { sql: `replace(${arg(0, "text")}, ${arg(1, "text")}, ${arg(2, "text")})`, type: "text" };
      case "tolower":
        return { sql: `lower(${arg(0, "text")})`, type: "text" };
      case "toupper":
        return { sql: `upper(${arg(0, "text")})`, type: "text" };
      case "trim":
        return { sql: `btrim(${arg(0, "text")})`, type: "text" };
      case "concat":
        return { sql: `(${arg(0, "text", "number")}::text || ${arg(1, "text", "number")}::text)`, type: "text" };
      case "year":
      case "month":
      case "day":
        return { sql: `EXTRACT(${method.toUpperCase()} FROM ${utc(0, "datetime", "date")})::int`, type: "number" };
      case "hour":
      case "minute":
        return { sql: `EXTRACT(${method.toUpperCase()} FROM ${utc(0, "datetime", "time")})::int`, type: "number" };
      case "second":
        return { sql: `floor(EXTRACT(SECOND FROM ${utc(0, "datetime", "time")}))::int`, type: "number" };
      case "fractionalseconds": {
        const seconds = `EXTRACT(SECOND FROM ${utc(0, "datetime", "time")})`;
        return { sql: `(${seconds} - floor(${seconds}))`, type: "number" };
      }
      case "date":
        return { sql: `(${utc(0, "datetime", "date")})::date`, type: "date" };
      case "time":
        return { sql: `(${utc(0, "datetime")})::time`, type: "time" };
      case "totaloffsetminutes":
        // Instants are kept and answered in UTC.
        return { sql: `(CASE WHEN ${arg(0, "datetime")} IS NULL THEN NULL ELSE 0 END)`, type: "number" };
      case "now":
        return { sql: "now()", type: "datetime" };
      case "maxdatetime":
        return { sql: "'9999-12-31T23:59:59.999Z'::timestamptz", type: "datetime", constant: true };
      case "mindatetime":
        return { sql: "'0001-01-01T00:00:00.000Z'::timestamptz", type: "datetime", constant: true };
      case "totalseconds":
        return { sql: `EXTRACT(EPOCH FROM ${arg(0, "duration")})`, type: "number" };
      // On numeric: exact, ties away from zero on every platform (float8's round is the platform's).
      case "round":
      case "floor":
        return { sql: `${method}(${arg(0, "number")}::numeric)`, type: "number" };
      case "ceiling":
        return { sql: `ceil(${arg(0, "number")}::numeric)`, type: "number" };
      default:
        throw badRequest(`The function ${method}() is not supported`);
    }
  }
}

const isAnyLambda = (expr: Expr): boolean =>
  expr.kind === "path" && expr.path.tail?.kind === "lambda" && expr.path.tail.method === "any";

/**
 * An OR that `orAsUnion` may split: a client's filter (not a permission's) outside any lambda,
 * so every operand refers to the filtered row alone, and with an `any()` among its operands.
 */
const isSplittableOr = (args: readonly Expr[], scope: Scope): boolean =>
  scope.restricted && !scope.permission && scope.variables.size === 0 && args.some(isAnyLambda);

/** A LIKE pattern matching any text that contains `needle` (SQL), its wildcards escaped. */
function likeContaining(needle: string): string {
  return `('%' || replace(replace(replace(${needle}, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%')`;
}

/** Table and alias for a FROM clause. */
export function fromItem(binding: Binding): string {
  return `${quoteTable(binding.resource.table)} ${binding.alias}`;
}
