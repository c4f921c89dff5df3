/**
 * The engine's own request tree. `parse.ts` turns `@balena/odata-parser` output into it, resolving
 * binds and parameter aliases to literal values, so the compilers never see parser internals and
 * every client value reaches SQL only as a parameter.
 */

export type Literal =
  | { kind: "number"; value: number }
  | { kind: "text"; value: string }
  | { kind: "boolean"; value: boolean }
  /** ISO 8601 instant, e.g. `2020-01-01T00:00:00.000Z`. */
  | { kind: "datetime"; value: string }
  /** ISO 8601 calendar date, e.g. `2020-01-01`. */
  | { kind: "date"; value: string }
  | { kind: "duration"; negative: boolean; day: number; hour: number; minute: number; second: number }
  | { kind: "null" };

export const COMPARISONS = ["eq", "ne", "gt", "ge", "lt", "le"] as const;
export const ARITHMETIC = ["add", "sub", "mul", "div", "mod"] as const;
export type Comparison = (typeof COMPARISONS)[number];
export type Arithmetic = (typeof ARITHMETIC)[number];

/**
 * What ends a property path: a count of the navigation's rows, a lambda over them, or (in
 * permission filters only) `canAccess()`: some of them pass the caller's permission for the same
 * action.
 */
export type PathTail =
  | { kind: "count"; filter?: Expr }
  | { kind: "lambda"; method: "any" | "all"; variable: string; body: Expr }
  | { kind: "canAccess" };

/** `a/b/c`, optionally ending in `/$count(...)` or `/any(x: ...)`. */
export type PropertyPath = { segments: string[]; tail?: PathTail };

export type Expr =
  | Literal
  | { kind: "path"; path: PropertyPath }
  | { kind: "compare"; op: Comparison; left: Expr; right: Expr }
  | { kind: "arithmetic"; op: Arithmetic; left: Expr; right: Expr }
  | { kind: "and" | "or"; args: Expr[] }
  | { kind: "not"; arg: Expr }
  | { kind: "in"; left: Expr; items: Literal[] }
  | { kind: "call"; method: string; args: Expr[] };

export type SelectItem = { name: string; count?: { filter?: Expr } };

export type OrderItem = { path: PropertyPath; direction: "asc" | "desc" };

export type ExpandItem = { name: string; count: boolean; options: QueryOptions };

export type QueryOptions = {
  /** Absent or `*`: the resource's default fields. */
  select?: SelectItem[];
  filter?: Expr;
  expand?: ExpandItem[];
  orderby?: OrderItem[];
  top?: number;
  skip?: number;
};

/** `resource(1)`, or `resource(a='x',b=1)` for alternate and composite keys. */
export type Key = { kind: "id"; value: Literal } | { kind: "named"; values: Record<string, Literal> };

export type ODataUrl = {
  /** The resource name as requested (canonical name or alias). */
  resource: string;
  key?: Key;
  /** `/resource/$count`. */
  count: boolean;
  options: QueryOptions;
};
