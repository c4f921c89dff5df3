import { t } from "./i18n.ts";

/**
 * Shape checks of query results (spec 2 §8 Keyed errors: errors.failed_query_check). A page that
 * relies on a response having a certain shape asks for a check; an answer that fails it becomes
 * a FailedQueryCheckError: the query fails (it is not retried — the same answer would fail
 * again), the user sees "Failed query check" as a danger toast (the query client reports it,
 * see query-client.ts), and the details go to the console for whoever debugs it.
 *
 *   queryFn: checkedQueryFn(() => sdk.pine.get({ … }), isArrayOf(hasFields({ id: "number" })), "fleets")
 */

export const FAILED_QUERY_CHECK_CODE = "FlotillaFailedQueryCheck";

export class FailedQueryCheckError extends Error {
  readonly code = FAILED_QUERY_CHECK_CODE;
  /** Which query failed its check (for the console, not the user). */
  readonly what: string;
  constructor(what: string) {
    super(t("errors.failed_query_check"));
    this.name = "FailedQueryCheckError";
    this.what = what;
  }
}

export const isFailedQueryCheck = (error: unknown): error is FailedQueryCheckError =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === FAILED_QUERY_CHECK_CODE;

/** A check of a response's shape: a type guard, so a passing value is typed. */
export type QueryCheck<T> = (data: unknown) => data is T;

/** Returns `data` when it passes `check`; otherwise throws a FailedQueryCheckError. */
export function checkQueryResult<T>(data: unknown, check: QueryCheck<T>, what = "query"): T {
  if (check(data)) return data;
  console.warn(`Flotilla: ${what} failed its query check`, data);
  throw new FailedQueryCheckError(what);
}

/** A query function whose result is checked before TanStack Query stores it. */
export function checkedQueryFn<T, Context = unknown>(
  queryFn: (context: Context) => unknown,
  check: QueryCheck<T>,
  what?: string,
): (context: Context) => Promise<T> {
  return async (context) => checkQueryResult(await queryFn(context), check, what);
}

type FieldType = "string" | "number" | "boolean" | "object" | "array" | "nullable-string" | "nullable-number";
type FieldValue<F extends FieldType> = F extends "string"
  ? string
  : F extends "number"
    ? number
    : F extends "boolean"
      ? boolean
      : F extends "array"
        ? unknown[]
        : F extends "nullable-string"
          ? string | null
          : F extends "nullable-number"
            ? number | null
            : Record<string, unknown>;

const fieldIs = (value: unknown, type: FieldType): boolean => {
  switch (type) {
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "nullable-string":
      return value === null || typeof value === "string";
    case "nullable-number":
      return value === null || typeof value === "number";
    default:
      return typeof value === type;
  }
};

/** An object with (at least) these fields of these types. */
export function hasFields<const S extends Record<string, FieldType>>(
  fields: S,
): QueryCheck<{ [K in keyof S]: FieldValue<S[K]> } & Record<string, unknown>> {
  return (data): data is { [K in keyof S]: FieldValue<S[K]> } & Record<string, unknown> =>
    typeof data === "object" &&
    data !== null &&
    !Array.isArray(data) &&
    Object.entries(fields).every(([name, type]) => fieldIs((data as Record<string, unknown>)[name], type));
}

/** An array whose every item passes `check`. */
export function isArrayOf<T>(check: QueryCheck<T>): QueryCheck<T[]> {
  return (data): data is T[] => Array.isArray(data) && data.every((item) => check(item));
}

/** `check`, or nothing (a lookup that may find nothing — see lookup.ts). */
export function orMissing<T>(check: QueryCheck<T>): QueryCheck<T | undefined | null> {
  return (data): data is T | undefined | null => data === undefined || data === null || check(data);
}
