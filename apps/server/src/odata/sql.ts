import { quoteIdent } from "./model.ts";

/**
 * Collects the parameters and table aliases of one statement. Client values only ever enter SQL
 * through `param`; identifiers come from the model and are quoted with `quoteIdent`.
 *
 * `param` hands out placeholder tokens, numbered `$1…` by `finish` in order of appearance: the
 * compiler may drop a compiled sub-expression (`x add null` is null whatever x is) without leaving
 * a parameter that PostgreSQL would see as unused.
 */
export class SqlBuilder {
  readonly #values: unknown[] = [];
  #aliases = 0;

  /** A placeholder for `value`, cast to `type`: the explicit cast keeps type inference out of the semantics. */
  param(value: unknown, type: string): string {
    this.#values.push(value);
    return `${MARK}${this.#values.length - 1}${MARK}::${type}`;
  }

  /** A fresh table alias: t0, t1, … */
  alias(): string {
    return `t${this.#aliases++}`;
  }

  /** The statement with its placeholders numbered, and their values in that order. */
  finish(text: string): { text: string; values: unknown[] } {
    const numbers = new Map<number, number>();
    const values: unknown[] = [];
    const numbered = text.replace(PLACEHOLDER, (_, index: string) => {
      let number = numbers.get(Number(index));
      if (number === undefined) {
        values.push(this.#values[Number(index)]);
        number = values.length;
        numbers.set(Number(index), number);
      }
      return `$${number}`;
    });
    return { text: numbered, values };
  }
}

/** A private-use character: no identifier, keyword or model expression contains it. */
const MARK = "\uE000";
const PLACEHOLDER = /\uE000(\d+)\uE000/g;

/** A single-quoted SQL string for model-defined names (never client values). */
function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** A table name from the model; `schema.table` is quoted part by part. */
export function quoteTable(table: string): string {
  return table.split(".").map(quoteIdent).join(".");
}

/**
 * A JSON object from (key, SQL value) pairs. json_build_object takes at most 100 arguments, so
 * wider rows are built in chunks and spliced as text (`{a…}` + `{b…}` → `{a…, b…}`), which keeps
 * the keys in their order (jsonb's `||` would sort them).
 */
export function jsonObject(pairs: ReadonlyArray<readonly [string, string]>): string {
  const build = (chunk: ReadonlyArray<readonly [string, string]>) =>
    `json_build_object(${chunk.map(([key, value]) => `${quoteLiteral(key)}, ${value}`).join(", ")})`;
  const CHUNK = 50;
  if (pairs.length <= CHUNK) return build(pairs);
  const chunks: string[] = [];
  for (let index = 0; index < pairs.length; index += CHUNK)
    chunks.push(`${build(pairs.slice(index, index + CHUNK))}::text`);
  const spliced = chunks.map((chunk, index) => {
    const opened = index === 0 ? chunk : `substr(${chunk}, 2)`;
    return index === chunks.length - 1 ? opened : `left(${opened}, -1)`;
  });
  return `(${spliced.join(" || ', ' || ")})::json`;
}

/** Timestamps as JavaScript's `toISOString()` writes them, whatever the session time zone. */
export function isoTimestamp(sql: string): string {
  return `to_char((${sql})::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
