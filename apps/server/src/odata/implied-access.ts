import type { Expr, PropertyPath } from "./ast.ts";
import type { Access } from "./permissions.ts";

/**
 * Whether a row reached from a readable parent is readable whatever it is: the child's read
 * permission grants every child of a readable parent, because it has `back/canAccess()` or, for
 * each of the parent's read filters, `back/any(v: <that filter, of v>)`. Then the check can go:
 * the parent row was checked already (a device's tags in a filter or an expansion: 37 of the
 * tag filter's 64 ms over a fleet of 100,000 devices, docs/benchmarks.md).
 * `back` is the child's navigation to the parent. Conservative: any other shape answers false.
 */
export function readImpliedByParent(child: Access, parent: Access, back: string): boolean {
  if (child === "all") return true;
  if (child === "none" || parent === "all" || parent === "none") return false;
  const viaBack = child.flatMap((filter) =>
    filter.kind === "path" && filter.path.segments.length === 1 && filter.path.segments[0] === back
      ? [filter.path]
      : [],
  );
  if (viaBack.some((path) => path.tail?.kind === "canAccess")) return true;
  return parent.every((filter) =>
    viaBack.some(
      (path) =>
        path.tail?.kind === "lambda" &&
        path.tail.method === "any" &&
        sameExpr(path.tail.body, filter, { parentRow: path.tail.variable, depth: 0, variables: new Map() }),
    ),
  );
}

/**
 * `a` (in the child's lambda over its parent, which is `parentRow`) says of that row what `b`
 * (the parent's own filter) says. Lambda variables correspond by position, not name.
 */
interface Context {
  parentRow: string;
  depth: number;
  /** The child's lambda variables and the parent's at the same place. */
  variables: ReadonlyMap<string, string>;
}

function sameExpr(a: Expr, b: Expr, context: Context): boolean {
  switch (a.kind) {
    case "path":
      return b.kind === "path" && samePath(a.path, b.path, context);
    case "compare":
    case "arithmetic":
      return (
        b.kind === a.kind && b.op === a.op && sameExpr(a.left, b.left, context) && sameExpr(a.right, b.right, context)
      );
    case "and":
    case "or":
      return (
        b.kind === a.kind &&
        a.args.length === b.args.length &&
        a.args.every((arg, index) => sameExpr(arg, b.args[index] as Expr, context))
      );
    case "not":
      return b.kind === "not" && sameExpr(a.arg, b.arg, context);
    case "in":
      return (
        b.kind === "in" && sameExpr(a.left, b.left, context) && JSON.stringify(a.items) === JSON.stringify(b.items)
      );
    case "call":
      return (
        b.kind === "call" &&
        a.method === b.method &&
        a.args.length === b.args.length &&
        a.args.every((arg, index) => sameExpr(arg, b.args[index] as Expr, context))
      );
    default:
      return JSON.stringify(a) === JSON.stringify(b);
  }
}

function samePath(a: PropertyPath, b: PropertyPath, context: Context): boolean {
  const [first, ...rest] = a.segments;
  const parentVariables = new Set(context.variables.values());
  let segments: string[];
  if (first === context.parentRow) {
    // `v/x` of the child's lambda is the parent's own `x`, at the top level only.
    if (context.depth > 0) return false;
    segments = rest;
  } else if (first !== undefined && context.variables.has(first)) {
    segments = [context.variables.get(first) as string, ...rest];
  } else {
    segments = a.segments;
    if (b.segments[0] !== undefined && parentVariables.has(b.segments[0])) return false;
  }
  if (segments.length !== b.segments.length || segments.some((segment, index) => segment !== b.segments[index])) {
    return false;
  }
  const tail = a.tail;
  const other = b.tail;
  if (!tail || !other) return !tail && !other;
  if (tail.kind === "canAccess") return other.kind === "canAccess";
  const inner = { ...context, depth: context.depth + 1 };
  if (tail.kind === "count") {
    if (other.kind !== "count") return false;
    if (!tail.filter || !other.filter) return !tail.filter && !other.filter;
    return sameExpr(tail.filter, other.filter, inner);
  }
  if (other.kind !== "lambda" || other.method !== tail.method) return false;
  const variables = new Map(context.variables).set(tail.variable, other.variable);
  return sameExpr(tail.body, other.body, { ...inner, variables });
}
