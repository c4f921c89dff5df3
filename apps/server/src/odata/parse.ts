import odataParser, { type ODataBinds } from "@balena/odata-parser";

// A CommonJS module: Node's ESM loader only sees its default export (vitest would hide this).
const { parse } = odataParser;

import { FlotillaError } from "../errors.ts";
import {
  ARITHMETIC,
  type Arithmetic,
  COMPARISONS,
  type Comparison,
  type ExpandItem,
  type Expr,
  type Key,
  type Literal,
  type ODataUrl,
  type OrderItem,
  type PropertyPath,
  type QueryOptions,
  type SelectItem,
} from "./ast.ts";

/** Bounds on what a client may ask for (DESIGN §8). */
export const LIMITS = {
  /** Longest accepted request URL, in characters. */
  urlLength: 16 * 1024,
  /** Largest `$top`. */
  top: 10_000,
  /** Deepest `$expand` nesting. */
  expandDepth: 6,
  /** Deepest nesting of a filter expression (operators, calls, lambdas). */
  expressionDepth: 64,
} as const;

const badRequest = (message: string) => new FlotillaError("bad_request", message);

/** Parser nodes are loosely typed JSON; this is how we look at them. */
type Node = unknown;
type NodeObject = Record<string, unknown>;
const isObject = (node: Node): node is NodeObject => typeof node === "object" && node !== null && !Array.isArray(node);

/** Values of the parameter aliases a tree may use, e.g. `{ "@__ACTOR_ID": 5 }` for permission filters. */
export type AliasValues = Record<string, number | string | boolean>;

/**
 * Parses a request path and query, as received (percent-encoded), relative to the API root:
 * `/device(uuid='…')?$select=id`. A leading `/v7` is dropped.
 */
export function parseODataUrl(url: string): ODataUrl {
  if (url.length > LIMITS.urlLength) throw badRequest(`The request URL is longer than ${LIMITS.urlLength} characters.`);
  const path = decodeSyntax(url.startsWith("/v7/") ? url.slice(3) : url);
  const { tree, binds } = runParser(() => parse(path));
  const normalizer = new Normalizer(binds, {});
  const root = tree as unknown as NodeObject;
  if (typeof root.resource !== "string" || root.resource.startsWith("$")) {
    throw badRequest("Name a resource, e.g. /v7/device.");
  }
  if (root.link !== undefined) throw badRequest("$links is not supported.");
  if (root.property !== undefined) {
    throw badRequest(`Navigating from ${root.resource} in the path is not supported; use $expand or $filter.`);
  }
  const parsed: ODataUrl = {
    resource: root.resource,
    count: root.count === true,
    options: normalizer.options(root.options, 0),
  };
  if (root.key !== undefined) parsed.key = normalizer.key(root.key);
  return parsed;
}

/**
 * Escapes a client may use for OData syntax but that must stay as they are: `%25` (decoding it
 * would decode twice), `%2B` (the grammar reads it as a sign, a raw `+` as a space), `%26` (an
 * `&` that separates no options), and `/`, `?`, `#`, which would change the URL's structure.
 */
const KEPT_ESCAPES = new Set(["%25", "%2B", "%26", "%2F", "%3F", "%23"]);
const TOKEN = /%[0-9A-Fa-f]{2}|[\s\S]/g;
const isApostrophe = (token: string | undefined) => token === "'" || token === "%27";

/**
 * The grammar (as pinejs uses it) reads `'`, `$` and spaces written raw or percent-encoded, and
 * decodes a string literal's content once, itself; but `(`, `)`, `,`, `=` … only raw. Clients that
 * percent-encode every query value (URLSearchParams, curl --data-urlencode) send
 * `contains%28device_name%2C%27a%27%29`, so the escapes outside string literals are decoded here,
 * before parsing; a literal's content is left as sent, so `'50%25'` still means `50%` and is not
 * decoded twice, and `+`/`%2B` keep the grammar's meaning.
 */
export function decodeSyntax(url: string): string {
  if (!url.includes("%")) return url;
  const tokens = url.match(TOKEN) ?? [];
  let out = "";
  let run = "";
  const flush = () => {
    if (run === "") return;
    try {
      out += decodeURIComponent(run);
    } catch {
      throw badRequest("The request URL has a malformed percent-encoding.");
    }
    run = "";
  };
  let inLiteral = false;
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index] as string;
    if (isApostrophe(token)) {
      flush();
      out += "'";
      if (!inLiteral) inLiteral = true;
      else if (isApostrophe(tokens[index + 1])) {
        // A doubled quote inside a literal is one quote of its content.
        out += "'";
        index++;
      } else inLiteral = false;
    } else if (!inLiteral && token.length === 3 && !KEPT_ESCAPES.has(token.toUpperCase())) {
      run += token;
    } else {
      flush();
      out += token;
    }
  }
  flush();
  return out;
}

/** Parses an OData `$filter` expression on its own (the part of a permission after `?`). */
export function parseFilterExpression(text: string, aliases: AliasValues = {}): Expr {
  const { tree, binds } = parseFilterCached(text);
  return new Normalizer(binds, aliases).expr(tree, 0);
}

const filterCache = new Map<string, { tree: Node; binds: ODataBinds }>();
const FILTER_CACHE_SIZE = 1000;

/** Permission filters repeat on every request: keep their parse trees (the strings come from the server). */
function parseFilterCached(text: string) {
  let hit = filterCache.get(text);
  if (!hit) {
    hit = runParser(() => parse(text, { startRule: "ProcessRule", rule: "FilterByExpression" }));
    if (filterCache.size >= FILTER_CACHE_SIZE) filterCache.clear();
    filterCache.set(text, hit);
  }
  return hit;
}

function runParser<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof RangeError) throw badRequest("The request is nested too deeply.");
    const location = (error as { location?: { start?: { offset?: number } } }).location;
    const at = location?.start?.offset;
    const message = error instanceof Error ? error.message : String(error);
    throw badRequest(`Could not parse the request${at === undefined ? "" : ` at character ${at + 1}`}: ${message}`);
  }
}

const METHOD_ARITY: Record<string, number[]> = {
  contains: [2],
  endswith: [2],
  startswith: [2],
  substringof: [2],
  length: [1],
  indexof: [2],
  substring: [2, 3],
  replace: [3],
  tolower: [1],
  toupper: [1],
  trim: [1],
  concat: [2],
  year: [1],
  month: [1],
  day: [1],
  hour: [1],
  minute: [1],
  second: [1],
  fractionalseconds: [1],
  date: [1],
  time: [1],
  totaloffsetminutes: [1],
  now: [0],
  maxdatetime: [0],
  mindatetime: [0],
  totalseconds: [1],
  round: [1],
  floor: [1],
  ceiling: [1],
};

class Normalizer {
  constructor(
    private readonly binds: ODataBinds,
    private readonly aliases: AliasValues,
  ) {}

  options(node: Node, depth: number): QueryOptions {
    const result: QueryOptions = {};
    if (node === undefined) return result;
    if (!isObject(node)) throw badRequest("Malformed query options.");
    for (const [name, value] of Object.entries(node)) {
      switch (name) {
        case "$select":
          if (value !== "*") result.select = this.select(value);
          break;
        case "$filter":
          result.filter = this.expr(value, 0);
          break;
        case "$expand":
          result.expand = this.expand(value, depth);
          break;
        case "$orderby":
          result.orderby = this.orderby(value);
          break;
        case "$top": {
          const top = this.integerOption(value, "$top");
          if (top > LIMITS.top) throw badRequest(`$top may be at most ${LIMITS.top}.`);
          result.top = top;
          break;
        }
        case "$skip":
          result.skip = this.integerOption(value, "$skip");
          break;
        case "$count":
          if (value === true) throw badRequest("$count=true is not supported; request /resource/$count.");
          break;
        case "$inlinecount":
          if (value === "allpages") throw badRequest("$inlinecount is not supported; request /resource/$count.");
          break;
        case "$format":
          if (value !== "json") throw badRequest("Only $format=json is supported.");
          break;
        default:
          // Parameter aliases were resolved from the binds; other custom options (cache busters) are ignored.
          if (name.startsWith("$")) throw badRequest(`Unknown query option ${name}.`);
      }
    }
    return result;
  }

  key(node: Node): Key {
    if (isObject(node) && "bind" in node) return { kind: "id", value: this.bind(node) };
    if (!isObject(node)) throw badRequest("Malformed key.");
    const values: Record<string, Literal> = {};
    for (const [name, value] of Object.entries(node)) values[name] = this.bind(value);
    return { kind: "named", values };
  }

  private integerOption(node: Node, name: string): number {
    const literal = this.bind(node);
    if (literal.kind !== "number" || !Number.isSafeInteger(literal.value) || literal.value < 0) {
      throw badRequest(`${name} must be a non-negative integer.`);
    }
    return literal.value;
  }

  private select(node: Node): SelectItem[] {
    const properties = isObject(node) && Array.isArray(node.properties) ? node.properties : [];
    return properties.map((property: Node): SelectItem => {
      if (!isObject(property) || typeof property.name !== "string") throw badRequest("Malformed $select.");
      if (property.property !== undefined || property.key !== undefined) {
        throw badRequest(`$select takes field names, not paths (${property.name}/…); use $expand.`);
      }
      if (property.count === true) {
        const filter = this.countFilter(property.options, 0);
        return { name: property.name, count: filter === undefined ? {} : { filter } };
      }
      return { name: property.name };
    });
  }

  private expand(node: Node, depth: number): ExpandItem[] {
    if (depth + 1 > LIMITS.expandDepth) throw badRequest(`$expand may be nested at most ${LIMITS.expandDepth} deep.`);
    const properties = isObject(node) && Array.isArray(node.properties) ? node.properties : [];
    return properties.map((property: Node): ExpandItem => {
      if (!isObject(property) || typeof property.name !== "string") throw badRequest("Malformed $expand.");
      if (property.property !== undefined) {
        throw badRequest(`Expand ${property.name}($expand=…) instead of the path ${property.name}/….`);
      }
      return {
        name: property.name,
        count: property.count === true,
        options: this.options(property.options, depth + 1),
      };
    });
  }

  private orderby(node: Node): OrderItem[] {
    const properties = isObject(node) && Array.isArray(node.properties) ? node.properties : [];
    return properties.map((property: Node): OrderItem => {
      if (!isObject(property)) throw badRequest("Malformed $orderby.");
      return { path: this.path(property, 0), direction: property.order === "asc" ? "asc" : "desc" };
    });
  }

  private countFilter(options: Node, depth: number): Expr | undefined {
    if (options === undefined) return undefined;
    if (!isObject(options)) throw badRequest("Malformed $count options.");
    return options.$filter === undefined ? undefined : this.expr(options.$filter, depth + 1);
  }

  expr(node: Node, depth: number): Expr {
    if (depth > LIMITS.expressionDepth) throw badRequest("The filter is nested too deeply.");
    if (node === null) return { kind: "null" };
    if (Array.isArray(node)) return this.operation(node, depth);
    if (!isObject(node)) throw badRequest("Malformed filter.");
    if ("bind" in node) return this.bind(node);
    if ("negative" in node) return duration(node);
    if (typeof node.name === "string") return { kind: "path", path: this.path(node, depth) };
    throw badRequest("Malformed filter.");
  }

  private operation(node: unknown[], depth: number): Expr {
    const [op, ...operands] = node;
    if (op === "call") return this.call(operands[0], depth);
    if (op === "not") return { kind: "not", arg: this.expr(operands[0], depth + 1) };
    if (op === "eqany") {
      const list = this.bindValue(operands[1]);
      if (list[0] !== "List" || !Array.isArray(list[1])) throw badRequest("in (…) takes a list of values.");
      return {
        kind: "in",
        left: this.expr(operands[0], depth + 1),
        items: list[1].map((item: unknown) => literalOf(item as [string, unknown])),
      };
    }
    const args = operands.map((operand) => this.expr(operand, depth + 1));
    if (op === "and" || op === "or") return { kind: op, args };
    // The parser chains repeated operators (`a sub 1 sub 2`); they associate to the left.
    const [first, ...rest] = args;
    if (first === undefined || rest.length === 0) throw badRequest(`Malformed operator ${String(op)}.`);
    if ((COMPARISONS as readonly unknown[]).includes(op)) {
      return rest.reduce<Expr>((left, right) => ({ kind: "compare", op: op as Comparison, left, right }), first);
    }
    if ((ARITHMETIC as readonly unknown[]).includes(op)) {
      return rest.reduce<Expr>((left, right) => ({ kind: "arithmetic", op: op as Arithmetic, left, right }), first);
    }
    throw badRequest(`Unsupported operator ${String(op)}.`);
  }

  private call(node: Node, depth: number): Expr {
    if (!isObject(node) || typeof node.method !== "string" || !Array.isArray(node.args)) {
      throw badRequest("Malformed function call.");
    }
    const arity = METHOD_ARITY[node.method];
    if (!arity) throw badRequest(`The function ${node.method}() is not supported.`);
    if (!arity.includes(node.args.length)) throw badRequest(`${node.method}() takes ${arity.join(" or ")} arguments.`);
    return { kind: "call", method: node.method, args: node.args.map((arg: Node) => this.expr(arg, depth + 1)) };
  }

  private path(node: NodeObject, depth: number): PropertyPath {
    const segments: string[] = [];
    let current: NodeObject = node;
    for (;;) {
      if (typeof current.name !== "string") throw badRequest("Malformed property path.");
      segments.push(current.name);
      if (current.key !== undefined) throw badRequest(`Keys inside a path (${current.name}(…)) are not supported.`);
      if (current.method !== undefined) {
        const call: unknown = Array.isArray(current.method) ? current.method[1] : undefined;
        if (isObject(call) && call.method === "canAccess") return { segments, tail: { kind: "canAccess" } };
        throw badRequest(`${current.name}/…() is not a supported function.`);
      }
      if (current.count === true) {
        const filter = this.countFilter(current.options, depth);
        return { segments, tail: filter === undefined ? { kind: "count" } : { kind: "count", filter } };
      }
      if (isObject(current.lambda)) {
        const lambda = current.lambda;
        if (typeof lambda.identifier !== "string" || (lambda.method !== "any" && lambda.method !== "all")) {
          throw badRequest("Malformed lambda.");
        }
        const body = this.expr(lambda.expression, depth + 1);
        return { segments, tail: { kind: "lambda", method: lambda.method, variable: lambda.identifier, body } };
      }
      if (current.property === undefined) return { segments };
      if (!isObject(current.property)) throw badRequest("Malformed property path.");
      current = current.property;
    }
  }

  private bindValue(node: Node): [string, unknown] {
    if (!isObject(node)) throw badRequest("Malformed value.");
    const key = node.bind;
    if (typeof key === "number") {
      const value = this.binds[key];
      if (!value) throw badRequest("Malformed value.");
      return value;
    }
    if (typeof key === "string") {
      const value = this.binds[key as `@${string}`];
      if (value) return value;
      const alias = this.aliases[key];
      if (alias === undefined) throw badRequest(`The parameter alias ${key} has no value.`);
      return typeof alias === "number"
        ? ["Real", alias]
        : typeof alias === "boolean"
          ? ["Boolean", alias]
          : ["Text", alias];
    }
    throw badRequest("Malformed value.");
  }

  bind(node: Node): Literal {
    return literalOf(this.bindValue(node));
  }
}

function literalOf([type, value]: [string, unknown]): Literal {
  switch (type) {
    case "Real":
    case "Integer":
      if (typeof value !== "number" || !Number.isFinite(value)) throw badRequest("A number is out of range.");
      return { kind: "number", value };
    case "Text":
      return { kind: "text", value: String(value) };
    case "Boolean":
      return { kind: "boolean", value: value === true };
    case "Date Time":
    case "Date": {
      const date = new Date(value as number);
      if (Number.isNaN(date.getTime())) throw badRequest("A date is out of range.");
      const iso = date.toISOString();
      return type === "Date" ? { kind: "date", value: iso.slice(0, 10) } : { kind: "datetime", value: iso };
    }
    case "Null":
      return { kind: "null" };
    default:
      throw badRequest(`Unsupported value of type ${type}.`);
  }
}

function duration(node: NodeObject): Literal {
  const part = (name: string) => {
    const value = node[name];
    return typeof value === "number" && Number.isFinite(value) ? value : 0;
  };
  return {
    kind: "duration",
    negative: node.negative === true,
    day: part("day"),
    hour: part("hour"),
    minute: part("minute"),
    second: part("second"),
  };
}
