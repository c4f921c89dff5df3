import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { FLEET_MEMBERSHIP_ROLES } from "@flotilla/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { User } from "../src/features/users/service.ts";
import { model } from "../src/model/index.ts";
import { idFieldOf, type ResourceDefinition } from "../src/odata/model.ts";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * Tenant isolation (DESIGN §3), the issue's requirement: a user never sees or changes another
 * organization's data unless a role grants it. Users of organization A, one per role, send real
 * HTTP requests — every verb, at every resource of the model — against the rows of organization B,
 * which holds a bit of everything (fleets, devices, tags, variables, services, releases, images,
 * installs, memberships, teams, invites, keys, a private device type). Every GET must answer no
 * row of B (also inside expansions, `$count`s and lambda filters), every write must be refused or
 * touch nothing, nothing may answer 500, and a dump of B's rows in every table (plus any row
 * created meanwhile) must be the same afterwards.
 *
 * Rows belong to B when they were inserted while B was seeded (ids above the high-water marks
 * taken just before). A's own rows also point at some of B's rows (a device pinned on B's
 * release, B's image in A's release, B's team given access to A's fleet…), as a bug or an old
 * import could leave them, so expansions and filters across those links are put to the test too.
 */

const CONCURRENCY = 8;
/** B rows addressed one by one, per resource. */
const KEYED = 2;
const MIN_REQUESTS = 5_000;
const FAILURES_SHOWN = 60;

let t: TestApp;
let requests = 0;
const tally = new Map<string, number>();

type Caller = { label: string; token: string };
type Tenant = { admin: User; member: User; roles: [User, string][]; teamMember: User };
type Json = Record<string, unknown>;

const hex = (bytes = 6) => crypto.randomBytes(bytes).toString("hex");
const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
/** An OData literal as it goes in a URL: only a string's content is percent-encoded. */
const literal = (value: unknown) =>
  typeof value === "string"
    ? `'${encodeURIComponent(value.replaceAll("'", "''"))}'`
    : String(value as number | boolean);
/** OData syntax in a URL the way pinejs-client writes it: spaces encoded, the rest as is. */
const odata = (text: string) => text.replaceAll(" ", "%20");
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Ids per table: B's rows, A's rows (for bodies that point at A), and the catalogue's. */
const rowsOf = { A: new Map<string, number[]>(), B: new Map<string, number[]>(), catalogue: new Map<string, number>() };
/** B's rows as stored, for alternate keys and foreign-key values. */
const storedB = new Map<string, Map<number, Json>>();

const tableOf = (resource: ResourceDefinition) => (resource.table === "fleet_access" ? "application" : resource.table);
const idsOf = (tenant: "A" | "B", resource: ResourceDefinition) => rowsOf[tenant].get(tableOf(resource)) ?? [];
const bSets = new Map<string, Set<number>>();
const isB = (resource: ResourceDefinition, id: unknown) =>
  typeof id === "number" && (bSets.get(tableOf(resource))?.has(id) ?? false);

function must<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`tenant-isolation: no ${what}`);
  return value;
}

async function insert(table: string, values: Json): Promise<number> {
  const columns = Object.keys(values);
  const { rows } = await t.db.query<{ id: number }>(
    `INSERT INTO ${quote(table)} (${columns.map(quote).join(", ")}) VALUES (${columns
      .map((_, index) => `$${index + 1}`)
      .join(", ")}) RETURNING "id"`,
    columns.map((column) => values[column]),
  );
  return Number(must(rows[0], `row inserted into ${table}`).id);
}

async function oneId(sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await t.db.query<{ id: number }>(sql, params);
  return Number(must(rows[0], sql).id);
}

/** One organization with a bit of everything the tables allow. */
async function seedOrganization(label: string, people: Tenant) {
  const make = t.factories;
  const members = [people.member, people.teamMember, ...people.roles.map(([user]) => user)];
  const org = await make.organization({ name: `${label} ${hex(3)}`, admins: [people.admin], members });
  const memberRole = await oneId(`SELECT id FROM organization_membership_role WHERE name = 'member'`);
  const observerRole = await oneId(`SELECT id FROM application_membership_role WHERE name = 'observer'`);
  const arch = await oneId(`SELECT id FROM cpu_architecture ORDER BY id LIMIT 1`);
  const later = new Date(Date.now() + 86_400_000).toISOString();

  // A private device type only this organization may use (spec checklist API-142).
  const board = await insert("device_type", {
    slug: `${label}-board-${hex(3)}`.toLowerCase(),
    name: `${label} private board`,
    is_of__cpu_architecture: arch,
    is_private: true,
    contract: JSON.stringify({ slug: "board" }),
  });
  await insert("device_type_alias", { device_type: board, is_referenced_by__alias: `${label}-alias-${hex(3)}` });
  await insert("organization_has_private_access_to_device_type", {
    organization: org.id,
    has_private_access_to__device_type: board,
  });

  const fleets = [await make.fleet(org, { name: `${label}-one` }), await make.fleet(org, { name: `${label}-two` })];
  const [first] = fleets;
  if (!first) throw new Error("no fleet");
  for (const [user, role] of people.roles) await make.fleetMember(user, first, role);
  const team = await make.team(org, { members: [people.teamMember], fleets: [{ fleet: first, role: "developer" }] });
  await make.team(org, { members: [people.admin, people.member] });

  const memberships = await t.db.query<{ id: number }>(
    "SELECT id FROM organization_membership WHERE is_member_of__organization = $1",
    [org.id],
  );
  for (const { id } of memberships.rows) {
    await insert("organization_membership_tag", { organization_membership: id, tag_key: "desk", value: label });
  }
  const invitee = await insert("invitee", { email: `invitee-${hex()}@example.com` });
  await insert("organization_invite", {
    invitee,
    is_invited_to__organization: org.id,
    organization_membership_role: memberRole,
    message: `join ${label}`,
    is_created_by__user: people.admin.id,
    token_hash: hex(16),
    expires_at: later,
  });
  await insert("application_invite", {
    invitee,
    is_invited_to__application: first.id,
    application_membership_role: observerRole,
    message: `join ${label}`,
    is_created_by__user: people.admin.id,
    token_hash: hex(16),
    expires_at: later,
  });
  for (const user of [people.admin, ...members]) {
    await insert("api_key", { key_hash: hex(16), is_of__actor: user.actor, role: "user", name: `${label} key` });
    await insert("user_public_key", { user: user.id, title: "laptop", public_key: `ssh-ed25519 AAAA${hex(16)}` });
  }

  for (const fleet of fleets) {
    await insert("api_key", { key_hash: hex(16), is_of__actor: fleet.actor, role: "provisioning-api-key" });
    await insert("application_tag", { application: fleet.id, tag_key: "owner", value: label });
    await insert("application_environment_variable", { application: fleet.id, name: "FLEET_VAR", value: label });
    await insert("application_config_variable", { application: fleet.id, name: "RESIN_SUPERVISOR_POLL_INTERVAL" });
    const services: number[] = [];
    for (const name of ["main", "sidecar"]) {
      const service = await insert("service", { application: fleet.id, service_name: name });
      await insert("service_label", { service, label_name: "io.balena.features.dbus", value: "1" });
      await insert("service_environment_variable", { service, name: "SERVICE_VAR", value: label });
      services.push(service);
    }
    const releases: { id: number; images: number[] }[] = [];
    for (const [index, status] of ["success", "running"].entries()) {
      const release = await insert("release", {
        belongs_to__application: fleet.id,
        commit: hex(16),
        status,
        semver_major: 1,
        semver_minor: index,
        is_final: status === "success",
        is_finalized_at__date: status === "success" ? new Date().toISOString() : null,
        is_created_by__user: people.admin.id,
        note: `${label} secret release note`,
        // A running build with progress ahead of it: the stalled-build sweep (2 min) must not
        // end it while a slow machine runs this test, which would read as a change by A.
        ...(status === "running" ? { update_timestamp: new Date(Date.now() + 86_400_000).toISOString() } : {}),
      });
      await insert("release_tag", { release, tag_key: "channel", value: "stable" });
      await insert("release_asset", { release, asset_key: "notes.txt", asset: JSON.stringify({ href: "notes" }) });
      const images: number[] = [];
      for (const service of services) {
        const image = await insert("image", {
          is_a_build_of__service: service,
          is_stored_at__image_location: `registry.local/${label.toLowerCase()}/${hex()}`,
          status: "success",
          content_hash: `sha256:${hex(16)}`,
        });
        const releaseImage = await insert("release_image", { image, is_part_of__release: release });
        await insert("image_label", { release_image: releaseImage, label_name: "io.balena.private", value: label });
        await insert("image_environment_variable", { release_image: releaseImage, name: "IMAGE_VAR", value: label });
        images.push(image);
      }
      releases.push({ id: release, images });
    }
    const [current, next] = releases;
    if (!current || !next) throw new Error("no release");
    await t.db.query("UPDATE application SET should_be_running__release = $1 WHERE id = $2", [current.id, fleet.id]);
    for (let n = 0; n < 3; n++) {
      const device = await make.device(fleet, { name: `${label}-device-${n}` });
      await t.db.query(
        `UPDATE device SET is_running__release = $1, is_pinned_on__release = $2, belongs_to__user = $3,
           api_heartbeat_state = 'online', is_connected_to_vpn = true, last_connectivity_event = now(),
           note = $4 WHERE id = $5`,
        [current.id, n === 0 ? next.id : null, people.admin.id, `${label} secret note`, device.id],
      );
      await insert("api_key", { key_hash: hex(16), is_of__actor: device.actor, role: "device-api-key" });
      await insert("device_tag", { device: device.id, tag_key: "location", value: label });
      await insert("device_environment_variable", { device: device.id, name: "DEVICE_VAR", value: label });
      await insert("device_config_variable", { device: device.id, name: "RESIN_HOST_CONFIG_gpu_mem", value: "16" });
      for (const [index, service] of services.entries()) {
        const serviceInstall = await insert("service_install", { device: device.id, installs__service: service });
        await insert("device_service_environment_variable", {
          service_install: serviceInstall,
          name: "INSTALL_VAR",
          value: label,
        });
        await insert("image_install", {
          device: device.id,
          installs__image: must(current.images[index], "image"),
          is_provided_by__release: current.id,
          status: "Running",
        });
      }
    }
  }
  return { org, fleets, team };
}

/** The highest id of every table with an integer id. */
async function highWaterMarks(): Promise<Map<string, number>> {
  const { rows } = await t.db.query<{ table_name: string }>(
    `SELECT c.table_name FROM information_schema.columns c
       JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
      WHERE c.table_schema = 'public' AND c.column_name = 'id' AND c.data_type = 'integer'
        AND tb.table_type = 'BASE TABLE'`,
  );
  const marks = new Map<string, number>();
  for (const { table_name } of rows) {
    marks.set(table_name, await oneId(`SELECT coalesce(max(id), 0) AS id FROM ${quote(table_name)}`));
  }
  return marks;
}

async function rowsBetween(from: Map<string, number>, to: Map<string, number>) {
  const rows = new Map<string, number[]>();
  for (const [table, high] of to) {
    const low = from.get(table) ?? 0;
    if (high <= low) continue;
    const { rows: ids } = await t.db.query<{ id: number }>(
      `SELECT id FROM ${quote(table)} WHERE id > $1 AND id <= $2 ORDER BY id`,
      [low, high],
    );
    rows.set(
      table,
      ids.map((row) => Number(row.id)),
    );
  }
  return rows;
}

/** The high-water marks once everything is seeded: rows above them are new. */
let seeded = new Map<string, number>();

/** B's rows of every table, and every row created since seeding, as JSON text ordered by id. */
async function dump(): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>();
  for (const [table, mark] of seeded) {
    const { rows } = await t.db.query<{ r: string }>(
      `SELECT row_to_json(x)::text AS r FROM ${quote(table)} x WHERE x.id = ANY($1::int[]) OR x.id > $2 ORDER BY x.id`,
      [rowsOf.B.get(table) ?? [], mark],
    );
    result.set(
      table,
      rows.map((row) => row.r),
    );
  }
  return result;
}

function differences(before: Map<string, string[]>, after: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const table of new Set([...before.keys(), ...after.keys()])) {
    const was = new Set(before.get(table) ?? []);
    const is = new Set(after.get(table) ?? []);
    for (const row of was) if (!is.has(row)) found.push(`${table}: gone or changed ${row}`);
    for (const row of is) if (!was.has(row)) found.push(`${table}: new or changed ${row}`);
  }
  return found;
}

/** Foreign keys (to-one) and to-many navigations of a resource, by name. */
type Navigation = { name: string; target: ResourceDefinition; toOne: boolean };
const navigationCache = new Map<ResourceDefinition, Navigation[]>();
function navigationsOf(resource: ResourceDefinition): Navigation[] {
  let navigations = navigationCache.get(resource);
  if (navigations) return navigations;
  const byName = new Map<string, Navigation>();
  for (const field of resource.fields) {
    if (!field.references) continue;
    const target = must(model.resource(field.references), field.references);
    byName.set(field.name, { name: field.name, target, toOne: true });
  }
  for (const navigation of resource.navigations ?? []) {
    const target = must(model.resource(navigation.target), navigation.target);
    byName.set(navigation.name, { name: navigation.name, target, toOne: navigation.toOne === true });
  }
  navigations = [...byName.values()];
  navigationCache.set(resource, navigations);
  return navigations;
}

/** B's rows among `rows` of `resource`, at any depth of expansion. */
function leaksIn(resource: ResourceDefinition, rows: unknown[], at: string, found: string[]) {
  const id = idFieldOf(resource);
  const navigations = new Map(navigationsOf(resource).map((navigation) => [navigation.name, navigation]));
  for (const row of rows) {
    if (!isObject(row)) continue;
    if (isB(resource, row[id])) found.push(`${at}: ${resource.name} ${String(row[id])} of B`);
    for (const [key, value] of Object.entries(row)) {
      const navigation = navigations.get(key);
      if (navigation && Array.isArray(value)) leaksIn(navigation.target, value, `${at}/${key}`, found);
    }
  }
}

type Answer = { status: number; text: string; json?: unknown };
type Failure = { caller: string; request: string };

async function send(caller: Caller, method: string, path: string, body?: unknown): Promise<Answer> {
  requests += 1;
  const response = await fetch(`${t.url}/v7/${path}`, {
    method,
    headers: {
      authorization: `Bearer ${caller.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const key = `${method} ${response.status}`;
  tally.set(key, (tally.get(key) ?? 0) + 1);
  let json: unknown;
  if ((response.headers.get("content-type") ?? "").includes("json")) json = JSON.parse(text);
  return { status: response.status, text, json };
}

/** Runs the tasks, `CONCURRENCY` at a time. */
async function runAll(tasks: (() => Promise<void>)[], concurrency = CONCURRENCY) {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next];
      next += 1;
      await task?.();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

const WRITE_REFUSALS = new Set([400, 401, 403, 404, 409]);
const filterIn = (field: string, ids: readonly number[]) => `$filter=${odata(`${field} in (${ids.join(",")})`)}`;

/** A value of the field's type that no row has. */
function freshValue(type: string): unknown {
  switch (type) {
    case "Integer":
    case "Big Integer":
      return 7;
    case "Real":
      return 7.5;
    case "Boolean":
      return true;
    case "Date Time":
      return new Date().toISOString();
    case "JSON":
      return { pwned: true };
    default:
      return `pwned-${hex(3)}`;
  }
}

/**
 * A POST/PATCH body: every writable field. Foreign keys point at `refs`' rows (B's, else A's,
 * else the catalogue's); alternate-key fields copy B's row so a create can only conflict;
 * `synonyms` adds the other names of a column too, `wrap` sends keys as `{"__id": n}`.
 */
function bodyFor(
  resource: ResourceDefinition,
  options: { refs: "A" | "B"; keysOnly?: boolean; plainOnly?: boolean; synonyms?: boolean; wrap?: boolean },
): Json | undefined {
  const body: Json = {};
  const altKeyFields = new Set((resource.alternateKeys ?? []).flat());
  const sample = storedB.get(resource.table)?.values().next().value;
  for (const field of resource.fields) {
    if (field.writable !== true || field.computed) continue;
    if (field.selectByDefault === false && !options.synonyms) continue;
    if (field.references) {
      if (options.plainOnly) continue;
      const target = must(model.resource(field.references), field.references);
      const table = tableOf(target);
      const id =
        rowsOf[options.refs].get(table)?.[0] ??
        (options.keysOnly ? undefined : (rowsOf.A.get(table)?.[0] ?? rowsOf.catalogue.get(table)));
      if (id === undefined) continue;
      body[field.name] = options.wrap ? { __id: id } : id;
    } else if (!options.keysOnly) {
      const column = field.column ?? field.name;
      body[field.name] =
        altKeyFields.has(field.name) && sample?.[column] != null ? sample[column] : freshValue(field.type);
    }
  }
  return Object.keys(body).length > 0 ? body : undefined;
}

/** `resource(a='x',b=2)` paths addressing B's rows by their alternate keys. */
function alternateKeyPaths(resource: ResourceDefinition): string[] {
  const paths: string[] = [];
  const stored = [...(storedB.get(resource.table)?.values() ?? [])].slice(0, KEYED);
  for (const key of resource.alternateKeys ?? []) {
    for (const row of stored) {
      const parts: string[] = [];
      for (const name of key) {
        const field = must(
          resource.fields.find((each) => each.name === name),
          `${resource.name}.${name}`,
        );
        const value = row[field.column ?? field.name];
        if (value === null || value === undefined) break;
        parts.push(`${name}=${literal(value)}`);
      }
      if (parts.length === key.length) paths.push(`${resource.name}(${parts.join(",")})`);
    }
  }
  return paths;
}

type Task = () => Promise<void>;

/**
 * The probes at one resource: `core(caller)` is what every A user sends (every verb); `extras`
 * are further variants (two-level expansions, one lambda per navigation, alternate keys, aliases,
 * filters on B's parents), each sent by one user in turn so that the run stays within time on
 * PGlite, where every statement waits for the one connection.
 */
function probesOf(resource: ResourceDefinition, failures: Failure[]) {
  const name = resource.name;
  const id = idFieldOf(resource);
  const bIds = idsOf("B", resource);
  const [firstB] = bIds;
  const navigations = navigationsOf(resource);
  const all = navigations.map((navigation) => navigation.name);

  const fail = (caller: Caller, method: string, path: string, answer: Answer, why: string, body?: unknown): void => {
    failures.push({
      caller: caller.label,
      request: `${method} /v7/${path}${body === undefined ? "" : ` ${JSON.stringify(body)}`} → ${answer.status} ${answer.text.slice(0, 300)} (${why})`,
    });
  };
  const refused = (status: number) => status === 401 || status === 403 || status === 404;

  /** A GET answering rows, none of them B's; `only`: every row it could answer is B's, so none. */
  const read = async (
    caller: Caller,
    path: string,
    options: { only?: boolean } = {},
  ): Promise<unknown[] | undefined> => {
    const answer = await send(caller, "GET", path);
    if (refused(answer.status)) return undefined;
    if (answer.status !== 200 || !isObject(answer.json) || !Array.isArray(answer.json.d)) {
      fail(caller, "GET", path, answer, "expected 200 {d: […]} or a refusal");
      return undefined;
    }
    const rows = answer.json.d;
    const found: string[] = [];
    leaksIn(resource, rows, name, found);
    if (options.only && rows.length > 0) found.push(`${rows.length} row(s) where only B's could match`);
    if (found.length > 0) fail(caller, "GET", path, answer, found.slice(0, 5).join("; "));
    return rows;
  };
  /** `recount`: the rows read again after the count, for a count that A's own writes beside it may move. */
  const count = async (
    caller: Caller,
    path: string,
    expected: number | undefined,
    recount?: () => Promise<number | undefined>,
  ) => {
    const answer = await send(caller, "GET", path);
    if (refused(answer.status)) return;
    if (answer.status !== 200 || !isObject(answer.json) || typeof answer.json.d !== "number") {
      return fail(caller, "GET", path, answer, "expected 200 {d: n} or a refusal");
    }
    if (expected === undefined || answer.json.d === expected) return;
    if (recount && (await recount()) === answer.json.d) return;
    fail(caller, "GET", path, answer, `expected ${expected}`);
  };
  const write = async (caller: Caller, method: "POST" | "PATCH" | "DELETE", path: string, body?: unknown) => {
    const answer = await send(caller, method, path, body);
    if (WRITE_REFUSALS.has(answer.status)) return;
    // PATCH and DELETE answer 200 when no row they may change matched (the dump proves nothing did).
    if (answer.status === 200 && method !== "POST") return;
    fail(caller, method, path, answer, "a write against B must be refused", body);
  };

  // Bodies: a create pointing at B's rows; a change of plain fields plus a move to A's rows.
  const create = bodyFor(resource, { refs: "B" });
  const change = {
    ...bodyFor(resource, { refs: "B", plainOnly: true }),
    ...bodyFor(resource, { refs: "A", keysOnly: true }),
  };
  // Lambda filters over every navigation that reaches B's rows: no visible row is found through them.
  const oracle = navigations.flatMap((navigation) => {
    const ids = idsOf("B", navigation.target).join(",");
    if (!ids) return [];
    const targetId = idFieldOf(navigation.target);
    return [
      `${navigation.name}/any(x:x/${targetId} in (${ids}))`,
      `${navigation.name}/$count($filter=${targetId} in (${ids})) gt 0`,
      ...(navigation.toOne ? [`${navigation.name}/${targetId} in (${ids})`] : []),
    ];
  });

  const core = (caller: Caller): Task[] => {
    const tasks: Task[] = [
      // The collection and its count: the same rows, none of B.
      async () => {
        const rows = await read(caller, name);
        // Other callers of A write A's rows meanwhile (a tag deleted between the read and the
        // count): the count must match the rows read just before it or just after it.
        await count(caller, `${name}/$count`, rows?.length, async () => (await read(caller, name))?.length);
      },
    ];
    if (all.length > 0) {
      tasks.push(async () => {
        await read(caller, `${name}?$expand=${odata(all.join(","))}`);
      });
    }
    if (oracle.length > 0) {
      tasks.push(async () => {
        await read(caller, `${name}?$filter=${odata(oracle.join(" or "))}`, { only: true });
      });
    }
    if (create) tasks.push(() => write(caller, "POST", name, create));
    if (firstB !== undefined) {
      const inB = filterIn(id, bIds);
      tasks.push(
        async () => {
          await read(caller, `${name}?${inB}`, { only: true });
        },
        async () => {
          await read(caller, `${name}(${firstB})`, { only: true });
        },
        () => write(caller, "PATCH", `${name}(${firstB})`, change),
        () => write(caller, "PATCH", `${name}?${inB}`, change),
        () => write(caller, "DELETE", `${name}(${firstB})`),
        () => write(caller, "DELETE", `${name}?${inB}`),
      );
    }
    return tasks;
  };

  const extras: ((caller: Caller) => Promise<void>)[] = [];
  if (all.length > 0) {
    // Every navigation expanded, and counted: the counts are the expansions' lengths.
    extras.push(async (caller) => {
      const rows = await read(caller, `${name}?$expand=${odata(all.join(","))}`);
      const path = `${name}?$select=${id}&$expand=${odata(all.map((each) => `${each}/$count`).join(","))}`;
      const answer = await send(caller, "GET", path);
      if (refused(answer.status)) return;
      if (answer.status !== 200 || !isObject(answer.json) || !Array.isArray(answer.json.d)) {
        return fail(caller, "GET", path, answer, "expected 200 {d: […]} or a refusal");
      }
      const lengths = (rows ?? []).map((row) =>
        all.map((each) => (isObject(row) && Array.isArray(row[each]) ? row[each].length : undefined)),
      );
      const counts = answer.json.d.map((row) => all.map((each) => (isObject(row) ? row[each] : undefined)));
      if (rows && JSON.stringify(counts) !== JSON.stringify(lengths)) {
        fail(caller, "GET", path, answer, `counts differ from the expansions' lengths ${JSON.stringify(lengths)}`);
      }
    });
    extras.push(async (caller) => {
      await read(caller, `${name}(${firstB ?? 0})?$expand=${odata(all.join(","))}`, { only: true });
    });
  }
  if (firstB !== undefined) {
    extras.push((caller) => count(caller, `${name}/$count?${filterIn(id, bIds)}`, 0));
  }
  for (const navigation of navigations) {
    // Two levels: the navigation with every navigation of its target expanded.
    const inner = navigationsOf(navigation.target).map((each) => each.name);
    if (inner.length === 0) continue;
    extras.push(async (caller) => {
      await read(caller, `${name}?$expand=${odata(`${navigation.name}($expand=${inner.join(",")})`)}`);
    });
  }
  for (const filter of oracle) {
    extras.push(async (caller) => {
      await read(caller, `${name}?$filter=${odata(filter)}`, { only: true });
    });
  }
  for (const path of alternateKeyPaths(resource)) {
    extras.push(async (caller) => {
      await read(caller, path, { only: true });
    });
    extras.push((caller) => write(caller, "PATCH", path, change));
    extras.push((caller) => write(caller, "DELETE", path));
  }
  for (const alias of resource.aliases ?? []) {
    // The SDK's names, keys as {"__id": n}, and every synonym of a key at once.
    const wrapped = bodyFor(resource, { refs: "B", wrap: true, synonyms: true });
    extras.push(async (caller) => {
      await read(caller, alias);
    });
    if (wrapped) extras.push((caller) => write(caller, "POST", alias, wrapped));
  }
  for (const key of bIds.slice(1, KEYED)) {
    extras.push(async (caller) => {
      await read(caller, `${name}(${key})`, { only: true });
    });
    extras.push((caller) => write(caller, "PATCH", `${name}(${key})`, change));
    extras.push((caller) => write(caller, "DELETE", `${name}(${key})`));
  }
  // Every row under one of B's parents, by filter.
  const stored = storedB.get(resource.table)?.get(firstB ?? 0);
  for (const parent of resource.fields) {
    const target = parent.references ? model.resource(parent.references) : undefined;
    const parentId = target && stored?.[parent.column ?? parent.name];
    // Only B's own parents: a catalogue row (a device type) is A's parent as much as B's.
    if (!target || !parent.writable || !isB(target, parentId)) continue;
    const filter = `$filter=${odata(`${parent.name} eq ${parentId}`)}`;
    extras.push(async (caller) => {
      await read(caller, `${name}?${filter}`);
    });
    extras.push((caller) => write(caller, "PATCH", `${name}?${filter}`, change));
    extras.push((caller) => write(caller, "DELETE", `${name}?${filter}`));
  }
  return { core, extras };
}

let callers: Caller[] = [];
let tenants: { A: Awaited<ReturnType<typeof seedOrganization>>; B: Awaited<ReturnType<typeof seedOrganization>> };

beforeAll(async () => {
  t = await createTestApp({ FLOTILLA_RATE_LIMIT: "10000000" });
  const before = await highWaterMarks();
  for (const table of [
    "device_type",
    "application_type",
    "organization_membership_role",
    "application_membership_role",
  ]) {
    rowsOf.catalogue.set(table, await oneId(`SELECT min(id) AS id FROM ${quote(table)}`));
  }

  // Organization A: one user per role.
  const person = () => t.factories.user();
  const [adminA, memberA, teamA] = [await person(), await person(), await person()];
  const roleUsers: [Awaited<ReturnType<typeof person>>, string][] = [];
  for (const role of FLEET_MEMBERSHIP_ROLES) roleUsers.push([await person(), role]);
  const seededA = await seedOrganization("A", {
    admin: adminA.user,
    member: memberA.user,
    teamMember: teamA.user,
    roles: roleUsers.map(([p, role]) => [p.user, role]),
  });
  callers = [
    { label: "A organization administrator", token: adminA.token },
    { label: "A organization member", token: memberA.token },
    ...roleUsers.map(([p, role]) => ({ label: `A fleet ${role}`, token: p.token })),
    { label: "A fleet developer through a team", token: teamA.token },
  ];
  const middle = await highWaterMarks();

  // Organization B: the same, with its own people.
  const [adminB, memberB, teamB, developerB] = [await person(), await person(), await person(), await person()];
  const seededB = await seedOrganization("B", {
    admin: adminB.user,
    member: memberB.user,
    teamMember: teamB.user,
    roles: [[developerB.user, "developer"]],
  });
  const after = await highWaterMarks();
  tenants = { A: seededA, B: seededB };
  for (const [table, ids] of await rowsBetween(before, middle)) rowsOf.A.set(table, ids);
  for (const [table, ids] of await rowsBetween(middle, after)) {
    rowsOf.B.set(table, ids);
    bSets.set(table, new Set(ids));
    const { rows } = await t.db.query<Json>(`SELECT * FROM ${quote(table)} WHERE id = ANY($1::int[]) ORDER BY id`, [
      ids,
    ]);
    storedB.set(table, new Map(rows.map((row) => [Number(row.id), row])));
  }

  // A's rows that point at B's (what a bug or an old import could leave behind).
  const aDevice = must(rowsOf.A.get("device")?.[1], "A device");
  const aRelease = must(rowsOf.A.get("release")?.[1], "A release");
  const [bRelease, bOtherRelease] = must(rowsOf.B.get("release"), "B releases");
  const bImage = must(rowsOf.B.get("image")?.[0], "B image");
  const bService = must(rowsOf.B.get("service")?.[0], "B service");
  const [, aSecondFleet] = seededA.fleets;
  await t.db.query(
    "UPDATE device SET is_pinned_on__release = $1, should_be_managed_by__release = $2, is_running__release = $1 WHERE id = $3",
    [bRelease, bOtherRelease, aDevice],
  );
  await t.db.query("UPDATE application SET should_be_running__release = $1 WHERE id = $2", [
    bRelease,
    must(aSecondFleet, "A's second fleet").id,
  ]);
  await insert("release_image", { image: bImage, is_part_of__release: aRelease });
  await insert("image_install", {
    device: aDevice,
    installs__image: bImage,
    is_provided_by__release: must(bRelease, "B release"),
    status: "Running",
  });
  await insert("service_install", { device: aDevice, installs__service: bService });
  await insert("team_application_access", {
    team: seededB.team.id,
    grants_access_to__application: must(aSecondFleet, "A's second fleet").id,
    application_membership_role: await oneId("SELECT id FROM application_membership_role WHERE name = 'observer'"),
  });
  await t.factories.fleetMember(memberB.user, must(aSecondFleet, "A's second fleet"), "observer");
  seeded = await highWaterMarks();
}, 120_000);

afterAll(async () => {
  await t?.close();
});

/** The failures, one line per request, with the users who sent it. */
function report(failures: Failure[]): string {
  const byRequest = new Map<string, string[]>();
  for (const { caller, request } of failures) byRequest.set(request, [...(byRequest.get(request) ?? []), caller]);
  const lines = [...byRequest].map(([request, by]) => `${request}\n    sent by: ${by.join(", ")}`);
  return `${failures.length} failure(s), ${lines.length} distinct request(s):\n${lines.slice(0, FAILURES_SHOWN).join("\n")}`;
}

describe("tenant isolation through /v7", () => {
  it("keeps both organizations apart in the basics", async () => {
    // Sanity for the probes above: A's administrator does see A's fleets, and B's exist.
    const [caller] = callers;
    // Every user also reads the public OS catalogue's fleets (migration 0013): not A's.
    const answer = await send(must(caller, "caller"), "GET", "application?$select=id&$filter=is_public eq false");
    const ids = ((answer.json as { d: { id: number }[] }).d ?? []).map((row) => row.id).sort((a, b) => a - b);
    expect(ids).toEqual(tenants.A.fleets.map((fleet) => fleet.id).sort((a, b) => a - b));
    expect(tenants.B.fleets).toHaveLength(2);
  });

  it("answers A's users, in every role, nothing of B and changes nothing of B, over every resource and verb", async () => {
    const started = Date.now();
    requests = 0;
    let extraTasks = 0;
    const before = await dump();
    const failures: Failure[] = [];
    const tasks: Task[] = [];
    let turn = 0;
    for (const resource of model.resources()) {
      const { core, extras } = probesOf(resource, failures);
      for (const caller of callers) tasks.push(...core(caller));
      extraTasks += extras.length;
      for (const extra of extras) {
        const caller = must(callers[turn++ % callers.length], "caller");
        tasks.push(() => extra(caller));
      }
    }
    await runAll(tasks);
    const changed = differences(before, await dump());

    console.info(
      `tenant isolation: ${requests} requests (${tasks.length - extraTasks} probes from every user, ${extraTasks} shared in turn) from ${callers.length} users over ${model.resources().length} resources in ${Date.now() - started} ms`,
      Object.fromEntries([...tally].sort()),
    );
    expect(failures.length, report(failures)).toBe(0);
    expect(changed, "B's rows changed, or rows created, by A's requests").toEqual([]);
    expect(requests).toBeGreaterThanOrEqual(MIN_REQUESTS);
  }, 600_000);

  it("lets no A user point its own rows at B's rows", async () => {
    // A's rows whose foreign keys a write could aim at B: each writable key whose target B owns
    // rows of (people excepted: users are nobody's tenant data), on a row of A's first fleet.
    const before = await dump();
    const failures: Failure[] = [];
    const tasks: Task[] = [];
    for (const caller of callers) {
      for (const resource of model.resources()) {
        const aRow = idsOf("A", resource)[0];
        for (const field of resource.fields) {
          if (!field.references || field.writable !== true || field.selectByDefault === false) continue;
          const target = must(model.resource(field.references), field.references);
          const bId = idsOf("B", target)[0];
          if (bId === undefined || target.name === "user") continue;
          const column = field.column ?? field.name;
          if (aRow !== undefined) {
            tasks.push(async () => {
              const body = { [field.name]: bId };
              const select = `SELECT ${quote(column)} AS v FROM ${quote(resource.table)} WHERE id = $1`;
              const { rows: was } = await t.db.query<Json>(select, [aRow]);
              const answer = await send(caller, "PATCH", `${resource.name}(${aRow})`, body);
              const { rows } = await t.db.query<Json>(select, [aRow]);
              if (rows[0]?.v !== was[0]?.v) {
                // Put it back, so that the next probe is judged on its own.
                await t.db.query(`UPDATE ${quote(resource.table)} SET ${quote(column)} = $1 WHERE id = $2`, [
                  was[0]?.v,
                  aRow,
                ]);
              }
              const aimed = rows[0]?.v === bId && was[0]?.v !== bId;
              if (answer.status >= 500 || aimed) {
                failures.push({
                  caller: caller.label,
                  request: `PATCH /v7/${resource.name}(${aRow}) ${JSON.stringify(body)} → ${answer.status} ${answer.text.slice(0, 200)}${aimed ? ` (A's ${resource.table} ${aRow} now points at B's ${target.table} ${bId})` : ""}`,
                });
              }
            });
          }
          tasks.push(async () => {
            const body = { ...bodyFor(resource, { refs: "A" }), [field.name]: bId };
            for (const [key, value] of Object.entries(body)) {
              const each = resource.fields.find((f) => f.name === key);
              // Fresh values, so that only the permission can refuse (a create is taken away again).
              if (each && !each.references && typeof value === "string") body[key] = `fresh-${key}`;
            }
            const answer = await send(caller, "POST", resource.name, body);
            const created = isObject(answer.json) ? answer.json[idFieldOf(resource)] : undefined;
            if (answer.status === 201 && typeof created === "number") {
              // Take it away again, so that the next probe is judged on its own.
              await t.db.query(`DELETE FROM ${quote(resource.table)} WHERE id = $1`, [created]);
            }
            if (!WRITE_REFUSALS.has(answer.status)) {
              failures.push({
                caller: caller.label,
                request: `POST /v7/${resource.name} ${JSON.stringify(body)} → ${answer.status} ${answer.text.replace(/"id":\d+,"created_at":"[^"]*",/, "").slice(0, 200)}`,
              });
            }
          });
        }
      }
    }
    // One at a time: each change is read back and put back before the next probe.
    await runAll(tasks, 1);
    const changed = differences(before, await dump());
    expect(failures.length, report(failures)).toBe(0);
    expect(changed, "rows changed").toEqual([]);
  }, 120_000);
});

describe("tenant isolation of the device endpoints", () => {
  it("answers A's users, in every role, no target state of B's devices and relays them nothing", async () => {
    const device = must(model.resource("device"), "device");
    const ids = idsOf("B", device);
    expect(ids.length).toBeGreaterThan(0);
    const { rows } = await t.db.query<{ id: number; uuid: string }>(
      "SELECT id, uuid FROM device WHERE id = ANY($1::int[])",
      [ids],
    );
    const before = await dump();
    const failures: Failure[] = [];
    const tasks: Task[] = [];
    for (const caller of callers) {
      for (const { id, uuid } of rows) {
        const probes: [string, string, unknown][] = [
          ["GET", `/device/v2/${uuid}/state`, undefined],
          ["GET", `/device/v3/${uuid}/state`, undefined],
          ["POST", "/supervisor/v1/blink", { uuid }],
          ["POST", "/supervisor/v1/device", { uuid, method: "GET" }],
          ["POST", "/supervisor/v1/reboot", { deviceId: id, data: { force: true } }],
          ["POST", `/supervisor/v2/applications/1/restart-service`, { deviceId: id, data: { imageId: 1 } }],
        ];
        for (const [method, path, body] of probes) {
          tasks.push(async () => {
            const response = await fetch(`${t.url}${path}`, {
              method,
              headers: {
                authorization: `Bearer ${caller.token}`,
                ...(body === undefined ? {} : { "content-type": "application/json" }),
              },
              ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            });
            const text = await response.text();
            if (response.status !== 404) {
              failures.push({
                caller: caller.label,
                request: `${method} ${path} → ${response.status} ${text.slice(0, 200)}`,
              });
            }
          });
        }
      }
    }
    await runAll(tasks);
    expect(failures.length, report(failures)).toBe(0);
    expect(differences(before, await dump()), "rows changed").toEqual([]);
  });
});

describe("tenant isolation of the routes that touch files or rows outside the OData engine", () => {
  const assetDir = () => path.join(t.config.dataDir, "storage", "release-assets");
  const logoDir = () => path.join(t.config.dataDir, "storage", "organization-logos");
  const filesIn = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);
  const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

  async function multipart(caller: Caller, method: string, url: string, fields: Record<string, string>) {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append("asset", new File(["planted by A"], "planted.sh", { type: "text/x-shellscript" }));
    const response = await fetch(`${t.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${caller.token}` },
      body: form,
    });
    return { status: response.status, text: await response.text() };
  }

  it("lets no A user overwrite or plant release asset files (PATCH/POST multipart)", async () => {
    const bAsset = must(idsOf("B", must(model.resource("release_asset"), "release_asset"))[0], "B asset");
    const bRelease = must(rowsOf.B.get("release")?.[0], "B release");
    // B's asset has a file, as an upload would have left it.
    fs.mkdirSync(assetDir(), { recursive: true });
    fs.writeFileSync(path.join(assetDir(), String(bAsset)), "B's firmware");
    const { rows: top } = await t.db.query<{ id: number }>(`SELECT max(id) AS id FROM "release_asset"`);
    const unknown = Number(top[0]?.id) + 1000;
    const before = await dump();
    const failures: Failure[] = [];
    const expectStatus = async (caller: Caller, method: string, url: string, expected: number[], fields = {}) => {
      const answer = await multipart(caller, method, url, fields);
      if (!expected.includes(answer.status)) {
        failures.push({ caller: caller.label, request: `${method} ${url} → ${answer.status} ${answer.text}` });
      }
    };
    for (const caller of callers) {
      await expectStatus(caller, "PATCH", `/v7/release_asset(${bAsset})`, [404]);
      await expectStatus(caller, "PATCH", `/v7/release__has__asset_key(id=${bAsset})`, [404]);
      await expectStatus(caller, "PATCH", `/v7/release_asset(${unknown})`, [404]);
      await expectStatus(caller, "PATCH", "/v7/release_asset(99999999999999999999)", [400]);
      await expectStatus(caller, "PATCH", `/v7/release_asset?$filter=id eq ${bAsset}`, [400]);
      await expectStatus(caller, "POST", "/v7/release_asset", [...WRITE_REFUSALS], {
        release: String(bRelease),
        asset_key: `planted-${hex(3)}`,
      });
    }
    // The engine itself answers an out-of-range key as a bad request, not a 500.
    for (const method of ["GET", "PATCH", "DELETE"]) {
      const answer = await send(
        must(callers[0], "caller"),
        method,
        "release_asset(99999999999999999999)",
        method === "PATCH" ? { asset_key: "x" } : undefined,
      );
      if (answer.status >= 500)
        failures.push({ caller: "A", request: `${method} release_asset(99999999999999999999) → ${answer.status}` });
    }
    expect(failures.length, report(failures)).toBe(0);
    expect(fs.readFileSync(path.join(assetDir(), String(bAsset)), "utf8")).toBe("B's firmware");
    expect(filesIn(assetDir())).toEqual([String(bAsset)]);
    expect(differences(before, await dump()), "rows changed").toEqual([]);
  });

  it("keeps B's organization logo, asset downloads, builds, logs, device actions, keys and terminals from A's users", async () => {
    const bOrg = tenants.B.org.id;
    const bFleet = must(tenants.B.fleets[0], "B fleet");
    const bAsset = must(idsOf("B", must(model.resource("release_asset"), "release_asset"))[0], "B asset");
    const { rows: devices } = await t.db.query<{ id: number; uuid: string }>(
      "SELECT id, uuid FROM device WHERE belongs_to__application = $1",
      [bFleet.id],
    );
    const bUuid = must(devices[0], "B device").uuid;
    const bDeviceId = must(devices[0], "B device").id;
    const before = await dump();
    const logosBefore = filesIn(logoDir());
    const failures: Failure[] = [];
    for (const caller of callers) {
      const probes: [string, string, Uint8Array<ArrayBuffer> | string | undefined, string | undefined, number[]][] = [
        ["PUT", `/organization/${bOrg}/logo`, new Uint8Array(PNG), "image/png", [404]],
        ["GET", `/organization/${bOrg}/logo`, undefined, undefined, [404]],
        ["DELETE", `/organization/${bOrg}/logo`, undefined, undefined, [404]],
        ["GET", `/release-asset/v1/${bAsset}/download`, undefined, undefined, [404]],
        [
          "POST",
          `/v3/buildFromUrl?app=${bFleet.id}`,
          JSON.stringify({ url: "http://127.0.0.1:9/a.tar" }),
          "application/json",
          [404],
        ],
        ["POST", `/v3/build?app=${bFleet.id}`, new Uint8Array(16), "application/x-tar", [404]],
        ["GET", `/access/v1/hostos/${bUuid}`, undefined, undefined, [404]],
        ["GET", `/device/v2/${bUuid}/logs`, undefined, undefined, [404]],
        ["GET", `/v1/${bUuid}/diagnose`, undefined, undefined, [404]],
        ["POST", `/v1/${bUuid}/diagnose`, "{}", "application/json", [404]],
        ["GET", `/v2/${bUuid}/resinhup`, undefined, undefined, [404]],
        [
          "POST",
          `/v2/${bUuid}/resinhup`,
          JSON.stringify({ parameters: { target_version: "6.0.0" } }),
          "application/json",
          [404],
        ],
        [
          "POST",
          "/api-key/v2/",
          JSON.stringify({ actorType: "application", actorTypeId: bFleet.id, roles: ["provisioning-api-key"] }),
          "application/json",
          [401, 403, 404],
        ],
        ["POST", `/api-key/device/${bDeviceId}/device-key`, "{}", "application/json", [401, 403, 404]],
      ];
      for (const [method, url, body, type, expected] of probes) {
        const response = await fetch(`${t.url}${url}`, {
          method,
          headers: { authorization: `Bearer ${caller.token}`, ...(type ? { "content-type": type } : {}) },
          ...(body === undefined ? {} : { body }),
        });
        const text = await response.text();
        if (!expected.includes(response.status)) {
          failures.push({ caller: caller.label, request: `${method} ${url} → ${response.status} ${text}` });
        }
      }
    }
    // The web terminal authenticates in its first message: B's device is not found for A's users.
    for (const caller of callers) {
      for (const target of ["host", "main"]) {
        const reason = await new Promise<string>((resolve, reject) => {
          const socket = new WebSocket(`${t.url.replace("http", "ws")}/terminal/v1/connect`);
          socket.on("open", () =>
            socket.send(JSON.stringify({ event: "authentication", token: caller.token, uuid: bUuid, target })),
          );
          socket.on("close", (_code, why) => resolve(why.toString()));
          socket.on("error", reject);
        });
        if (reason !== "device_not_found") {
          failures.push({ caller: caller.label, request: `terminal ${target} on ${bUuid} → closed with ${reason}` });
        }
      }
    }
    expect(failures.length, report(failures)).toBe(0);
    expect(filesIn(logoDir())).toEqual(logosBefore);
    expect(differences(before, await dump()), "rows changed").toEqual([]);
  });
});
