import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/index.ts";
import { FlotillaError } from "../../src/errors.ts";
import type { Permissions } from "../../src/odata/index.ts";
import { createTestDatabase } from "../harness.ts";
import { ACTORS, admin, createFixture, memberOf, requester } from "./fixture.ts";

/**
 * Random `$filter`/`$orderby`/`$top`/`$skip`/`$select` over devices, checked against a small
 * evaluator written here: a valid query answers 200 with exactly the rows, order and fields the
 * evaluator computes; an invalid one answers 400; nothing ever answers 500.
 */

type Value = number | string | boolean | null;
type Row = {
  id: number;
  device_name: string;
  cpu_usage: number | null;
  cpu_temp: number | null;
  is_online: boolean;
  note: string | null;
  overall_status: string;
  belongs_to__application: number | null;
};

const ROWS: Row[] = (() => {
  // A fixed pseudo-random fleet: small domains so that comparisons often tie and nulls are common.
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  const word = () => Array.from({ length: 1 + next(3) }, () => "ab c'"[next(5)]).join("");
  return Array.from({ length: 40 }, (_, index): Row => {
    const is_online = next(2) === 1;
    return {
      id: index + 1,
      device_name: word(),
      cpu_usage: next(4) === 0 ? null : next(12) * 5,
      cpu_temp: next(3) === 0 ? null : next(200) / 4,
      is_online,
      note: next(2) === 0 ? null : word(),
      overall_status: is_online ? "idle" : "disconnected",
      belongs_to__application: [1, 2, 3, null][next(4)] ?? null,
    };
  });
})();

// ----- expressions, typed so that generated filters are valid by construction -----

type Num =
  | { k: "field"; name: "id" | "cpu_usage" | "cpu_temp" }
  | { k: "lit"; v: number }
  | { k: "null" }
  | { k: "arith"; op: "add" | "sub" | "mul" | "mod"; l: Num; r: Num };
type Text = { k: "field"; name: "device_name" | "note" | "overall_status" } | { k: "lit"; v: string } | { k: "null" };
type Bool =
  | { k: "field"; name: "is_online" }
  | { k: "lit"; v: boolean }
  | { k: "cmp"; op: Cmp; l: Num; r: Num; t: "num" }
  | { k: "cmp"; op: Cmp; l: Text; r: Text; t: "text" }
  | { k: "cmp"; op: "eq" | "ne"; l: Bool; r: Bool; t: "bool" }
  | { k: "and" | "or"; l: Bool; r: Bool }
  | { k: "not"; e: Bool }
  | { k: "in"; l: Num; items: (number | null)[]; t: "num" }
  | { k: "in"; l: Text; items: (string | null)[]; t: "text" }
  | { k: "fn"; name: "contains" | "startswith" | "endswith"; l: Text; r: Text };
type Cmp = "eq" | "ne" | "gt" | "ge" | "lt" | "le";

const cmp = fc.constantFrom<Cmp>("eq", "ne", "gt", "ge", "lt", "le");
// LIKE's wildcards and escape too: contains() is a LIKE and must match them as plain characters.
const textLiteral = fc.stringMatching(/^[ab c'%_\\]{0,3}$/);
const numLiteral = fc.oneof(
  fc.integer({ min: -10, max: 60 }),
  fc.integer({ min: -40, max: 240 }).map((n) => n / 4),
);

const { bool } = fc.letrec<{ num: Num; text: Text; bool: Bool }>((tie) => ({
  num: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom<Num>(
      { k: "field", name: "id" },
      { k: "field", name: "cpu_usage" },
      { k: "field", name: "cpu_temp" },
    ),
    numLiteral.map((v): Num => ({ k: "lit", v })),
    fc.constant<Num>({ k: "null" }),
    fc.record({
      k: fc.constant("arith" as const),
      op: fc.constantFrom("add" as const, "sub" as const, "mul" as const),
      l: tie("num"),
      r: tie("num"),
    }),
    // mod only by a non-zero literal: a zero divisor errors or not depending on evaluation order.
    fc.record({
      k: fc.constant("arith" as const),
      op: fc.constant("mod" as const),
      l: tie("num"),
      r: fc.integer({ min: 1, max: 7 }).map((v): Num => ({ k: "lit", v })),
    }),
  ),
  text: fc.oneof(
    fc.constantFrom<Text>(
      { k: "field", name: "device_name" },
      { k: "field", name: "note" },
      { k: "field", name: "overall_status" },
    ),
    textLiteral.map((v): Text => ({ k: "lit", v })),
    fc.constant<Text>({ k: "null" }),
  ),
  bool: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant<Bool>({ k: "field", name: "is_online" }),
    fc.boolean().map((v): Bool => ({ k: "lit", v })),
    fc.record({
      k: fc.constant("cmp" as const),
      op: cmp,
      l: tie("num"),
      r: tie("num"),
      t: fc.constant("num" as const),
    }),
    fc.record({
      k: fc.constant("cmp" as const),
      op: cmp,
      l: tie("text"),
      r: tie("text"),
      t: fc.constant("text" as const),
    }),
    fc.record({
      k: fc.constant("cmp" as const),
      op: fc.constantFrom("eq" as const, "ne" as const),
      l: tie("bool"),
      r: tie("bool"),
      t: fc.constant("bool" as const),
    }),
    fc.record({ k: fc.constantFrom("and" as const, "or" as const), l: tie("bool"), r: tie("bool") }),
    fc.record({ k: fc.constant("not" as const), e: tie("bool") }),
    fc.record({
      k: fc.constant("in" as const),
      l: tie("num"),
      items: fc.array(fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }), { minLength: 1, maxLength: 4 }),
      t: fc.constant("num" as const),
    }),
    fc.record({
      k: fc.constant("in" as const),
      l: tie("text"),
      items: fc.array(fc.option(textLiteral, { nil: null }), { minLength: 1, maxLength: 3 }),
      t: fc.constant("text" as const),
    }),
    fc.record({
      k: fc.constant("fn" as const),
      name: fc.constantFrom("contains" as const, "startswith" as const, "endswith" as const),
      l: tie("text"),
      r: tie("text"),
    }),
  ),
}));

// ----- rendering, as pinejs-client writes it -----

const quote = (value: string) => `'${encodeURIComponent(value.replaceAll("'", "''"))}'`;

function renderNum(e: Num): string {
  switch (e.k) {
    case "field":
      return e.name;
    case "lit":
      return String(e.v);
    case "null":
      return "null";
    case "arith":
      return `(${renderNum(e.l)} ${e.op} ${renderNum(e.r)})`;
  }
}
function renderText(e: Text): string {
  return e.k === "field" ? e.name : e.k === "lit" ? quote(e.v) : "null";
}
function render(e: Bool): string {
  switch (e.k) {
    case "field":
      return e.name;
    case "lit":
      return String(e.v);
    case "cmp":
      if (e.t === "num") return `(${renderNum(e.l)} ${e.op} ${renderNum(e.r)})`;
      if (e.t === "text") return `(${renderText(e.l)} ${e.op} ${renderText(e.r)})`;
      return `(${render(e.l)} ${e.op} ${render(e.r)})`;
    case "and":
    case "or":
      return `(${render(e.l)} ${e.k} ${render(e.r)})`;
    case "not":
      return `not(${render(e.e)})`;
    case "in":
      if (e.t === "num") return `(${renderNum(e.l)} in (${e.items.map((item) => String(item)).join(",")}))`;
      return `(${renderText(e.l)} in (${e.items.map((item) => (item === null ? "null" : quote(item))).join(",")}))`;
    case "fn":
      return `${e.name}(${renderText(e.l)},${renderText(e.r)})`;
  }
}

// ----- the reference: OData's two-valued conditions, null as a value for eq/ne -----

function evalNum(e: Num, row: Row): number | null {
  switch (e.k) {
    case "field":
      return row[e.name];
    case "lit":
      return e.v;
    case "null":
      return null;
    case "arith": {
      const l = evalNum(e.l, row);
      const r = evalNum(e.r, row);
      if (l === null || r === null) return null;
      return e.op === "add" ? l + r : e.op === "sub" ? l - r : e.op === "mul" ? l * r : l % r;
    }
  }
}
function evalText(e: Text, row: Row): string | null {
  return e.k === "field" ? row[e.name] : e.k === "lit" ? e.v : null;
}
/** A boolean expression as a value: conditions are two-valued, fields and functions may be null. */
function evalBool(e: Bool, row: Row): boolean | null {
  if (e.k === "field") return row[e.name];
  if (e.k === "lit") return e.v;
  if (e.k === "fn") {
    const l = evalText(e.l, row);
    const r = evalText(e.r, row);
    if (l === null || r === null) return null;
    return e.name === "contains" ? l.includes(r) : e.name === "startswith" ? l.startsWith(r) : l.endsWith(r);
  }
  return holds(e, row);
}
function compare(op: Cmp, l: Value, r: Value): boolean {
  if (op === "eq") return l === r;
  if (op === "ne") return l !== r;
  if (l === null || r === null) return false;
  const order = l < r ? -1 : l > r ? 1 : 0;
  return op === "gt" ? order > 0 : op === "ge" ? order >= 0 : op === "lt" ? order < 0 : order <= 0;
}
function holds(e: Bool, row: Row): boolean {
  switch (e.k) {
    case "cmp":
      if (e.t === "num") return compare(e.op, evalNum(e.l, row), evalNum(e.r, row));
      if (e.t === "text") return compare(e.op, evalText(e.l, row), evalText(e.r, row));
      return compare(e.op, evalBool(e.l, row), evalBool(e.r, row));
    case "and":
      return holds(e.l, row) && holds(e.r, row);
    case "or":
      return holds(e.l, row) || holds(e.r, row);
    case "not":
      return !holds(e.e, row);
    case "in": {
      const value = e.t === "num" ? evalNum(e.l, row) : evalText(e.l, row);
      return (e.items as Value[]).includes(value);
    }
    default:
      return evalBool(e, row) === true;
  }
}

// ----- whole queries -----

const FIELDS = ["id", "device_name", "cpu_usage", "cpu_temp", "is_online", "note", "overall_status"] as const;
type Field = (typeof FIELDS)[number];

type Query = {
  filter?: Bool;
  orderby: { field: Field; direction: "asc" | "desc" }[];
  top?: number;
  skip?: number;
  select?: Field[];
  member: boolean;
};

const query: fc.Arbitrary<Query> = fc.record(
  {
    filter: bool,
    orderby: fc.uniqueArray(
      fc.record({ field: fc.constantFrom(...FIELDS), direction: fc.constantFrom("asc" as const, "desc" as const) }),
      { maxLength: 3, selector: (item) => item.field },
    ),
    top: fc.integer({ min: 0, max: 50 }),
    skip: fc.integer({ min: 0, max: 45 }),
    select: fc.uniqueArray(fc.constantFrom(...FIELDS), { minLength: 1, maxLength: 7 }),
    member: fc.boolean(),
  },
  { requiredKeys: ["orderby", "member"] },
);

function urlOf(q: Query, filterText = q.filter ? render(q.filter) : undefined): string {
  const options: string[] = [];
  if (filterText !== undefined) options.push(`$filter=${filterText}`);
  if (q.orderby.length > 0)
    options.push(`$orderby=${q.orderby.map((item) => `${item.field} ${item.direction}`).join(",")}`);
  if (q.top !== undefined) options.push(`$top=${q.top}`);
  if (q.skip !== undefined) options.push(`$skip=${q.skip}`);
  if (q.select) options.push(`$select=${q.select.join(",")}`);
  return `/device${options.length > 0 ? `?${options.join("&")}` : ""}`;
}

/** PostgreSQL's order: nulls last ascending, first descending; the engine ends with the id. */
function expected(q: Query): Record<string, Value>[] {
  const visible = ROWS.filter(
    (row) => !q.member || row.belongs_to__application === 1 || row.belongs_to__application === 2,
  );
  const matching = visible.filter((row) => !q.filter || holds(q.filter, row));
  const keys = [...q.orderby];
  if (!keys.some((key) => key.field === "id")) keys.push({ field: "id", direction: "asc" });
  matching.sort((a, b) => {
    for (const { field, direction } of keys) {
      const x = a[field];
      const y = b[field];
      if (x === y) continue;
      const sign = direction === "asc" ? 1 : -1;
      if (x === null) return sign;
      if (y === null) return -sign;
      return (x < y ? -1 : 1) * sign;
    }
    return 0;
  });
  const page = matching.slice(q.skip ?? 0, q.top === undefined ? undefined : (q.skip ?? 0) + q.top);
  const fields = q.select ?? ["id"];
  return page.map((row) => Object.fromEntries(fields.map((field) => [field, row[field]])));
}

// ----- invalid queries: each must answer 400 -----

const invalid: fc.Arbitrary<(q: Query) => string> = fc.constantFrom(
  (q: Query) => urlOf(q, `colour eq 1`),
  (q: Query) => urlOf(q, `cpu_usage eq 'x'`),
  (q: Query) => urlOf(q, `device_name add 1 eq 2`),
  (q: Query) => urlOf(q, `is_online gt 1`),
  (q: Query) => urlOf(q, `(${q.filter ? render(q.filter) : "id eq 1"}`),
  (q: Query) => urlOf(q, `${q.filter ? render(q.filter) : "id"} eq`),
  (q: Query) => urlOf(q, `cpu_usage`),
  (q: Query) => urlOf(q, `not cpu_usage eq 1`),
  (q: Query) => `${urlOf(q)}&$orderby=colour asc`,
  (q: Query) => `${urlOf(q)}&$select=colour`,
  (q: Query) => urlOf({ ...q, top: 10_001 }),
  (q: Query) => `${urlOf(q)}&$top=-1`,
  (q: Query) => `${urlOf(q)}&$skip=x`,
  (q: Query) => urlOf(q, `contains(cpu_usage,'1')`),
  (q: Query) => urlOf(q, `device_name in (1,2)`),
);

let db: Database;
let drop: () => Promise<void>;
let api: ReturnType<typeof requester>;

beforeAll(async () => {
  ({ db, drop } = await createTestDatabase());
  await createFixture(db);
  await db.transaction(async (tx) => {
    await tx.query("DELETE FROM fx_device");
    for (const row of ROWS) {
      await tx.query(
        "INSERT INTO fx_device (id, uuid, device_name, belongs_to__application, is_online, cpu_usage, cpu_temp, note) OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        [
          row.id,
          `uuid${row.id}`,
          row.device_name,
          row.belongs_to__application,
          row.is_online,
          row.cpu_usage,
          row.cpu_temp,
          row.note,
        ],
      );
    }
  });
  api = requester(db);
});
afterAll(() => drop());

/** More runs for a deeper search: ODATA_PROPERTY_RUNS=5000 npx vitest run … */
const RUNS = Number(process.env.ODATA_PROPERTY_RUNS ?? 250);

const permissionsOf = (q: Query): Permissions => (q.member ? memberOf(ACTORS.alice) : admin);

async function answer(url: string, permissions: Permissions) {
  try {
    const response = await api.send("GET", url, { permissions });
    return { status: response.status, rows: (response.body as { d: Record<string, Value>[] }).d };
  } catch (error) {
    if (error instanceof FlotillaError && error.statusCode < 500) return { status: error.statusCode, rows: [], error };
    throw error;
  }
}

describe("random queries against a reference evaluation", () => {
  it("answers valid queries exactly as the reference does", async () => {
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const url = urlOf({ ...q, select: q.select ?? ["id"] });
        const result = await answer(url, permissionsOf(q));
        expect(result, url).toMatchObject({ status: 200 });
        expect(result.rows, url).toEqual(expected(q));
      }),
      { numRuns: RUNS },
    );
  });

  it("answers invalid queries with 400, never 500", async () => {
    await fc.assert(
      fc.asyncProperty(query, invalid, async (q, breakIt) => {
        const url = breakIt(q);
        const result = await answer(url, permissionsOf(q));
        expect(result.status, url).toBe(400);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });

  it("answers /$count as the number of matching rows", async () => {
    await fc.assert(
      fc.asyncProperty(bool, fc.boolean(), async (filter, member) => {
        const q: Query = { filter, orderby: [], member };
        const url = `/device/$count?$filter=${render(filter)}`;
        const response = await api.send("GET", url, { permissions: permissionsOf(q) });
        expect((response.body as { d: number }).d, url).toBe(expected(q).length);
      }),
      { numRuns: Math.ceil(RUNS / 4) },
    );
  });
});
