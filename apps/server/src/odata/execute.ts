import type { Database, Queryable } from "../db/index.ts";
import { FlotillaError } from "../errors.ts";
import type { ODataUrl } from "./ast.ts";
import { compileRead } from "./compile-read.ts";
import {
  accessCheckStatement,
  checkBody,
  checkRequired,
  deleteStatement,
  dropParameters,
  insertManyStatement,
  insertStatement,
  targetRowsStatement,
  updateStatement,
} from "./compile-write.ts";
import type { AuditActorRef, HookContext, Hooks } from "./hooks.ts";
import { idFieldOf, type Model, type ResourceDefinition } from "./model.ts";
import type { Action, Permissions } from "./permissions.ts";
import { requireResource } from "./resolve.ts";

/** Everything a request is executed with. */
export type ODataContext = {
  db: Pick<Database, "query" | "transaction">;
  model: Model;
  permissions: Permissions;
  hooks?: Hooks;
  actorId?: number | undefined;
  /** What kind of actor calls (`user`, `application`, `device`): named when a write is refused. */
  actorType?: string | undefined;
  /** When the caller's session was authenticated (ms); undefined for API keys. Hooks of sensitive writes read it. */
  authTime?: number | undefined;
  /** The caller's token was issued to an OAuth application; hooks of credential writes refuse it. */
  delegated?: boolean | undefined;
  /** Who writes, for the audit log written by hooks. */
  auditActor?: AuditActorRef | undefined;
  /**
   * Set inside a `$batch` atomicity group, whose requests share one transaction (`db` is then
   * that transaction): the work hooks queue for after the commit goes here, to run once the
   * whole group has committed (batch.ts).
   */
  afterCommit?: HookContext["afterCommit"];
};

/** Runs statements: the database itself, or a transaction. */
type Querier = Pick<Queryable, "query">;

export type ODataResponse = { status: number; body?: unknown; headers: Record<string, string> };

/** GET: `{"d": [...]}`, or `{"d": n}` for `/$count`. */
export async function executeRead(context: ODataContext, url: ODataUrl, queryable: Querier = context.db) {
  const { kind, query } = compileRead(context.model, context.permissions, url);
  const { rows } = await queryable.query<{ d: unknown }>(query.text, query.values);
  if (kind === "count") return { status: 200, body: { d: Number(rows[0]?.d ?? 0) }, headers: {} };
  return { status: 200, body: { d: rows.map((row) => JSON.parse(String(row.d))) }, headers: {} };
}

/**
 * POST: 201 with the created object (as a GET of it would show it, honouring `$select`/`$expand`)
 * and its `Location`. The new row must pass the caller's create permission, else 401 and nothing is
 * written.
 */
export async function executeCreate(context: ODataContext, url: ODataUrl, body: unknown): Promise<ODataResponse> {
  const { model, permissions } = context;
  if (url.key || url.count) throw new FlotillaError("bad_request", "POST to the resource itself, without a key");
  const resource = requireResource(model, url.resource);
  if (permissions.filter(resource.name, "create") === "none") throw permissionDenied(context, resource, "create");
  const values = checkBody(model, resource, body);
  return inTransaction(context, async (tx, afterCommit) => {
    const hookContext = hookContextOf(context, tx, resource, afterCommit);
    const hooks = context.hooks?.[resource.name];
    await expectReadableReferences(context, tx, resource, "create", values);
    await hooks?.beforeCreate?.({ ...hookContext, body: values });
    dropParameters(resource, values);
    checkRequired(resource, values);
    const insert = insertStatement(resource, values);
    const { rows } = await tx.query<{ id: number }>(insert.text, insert.values);
    const id = Number(rows[0]?.id);
    await expectAccess(context, tx, resource, [id], "create");
    await hooks?.afterCreate?.({ ...hookContext, body: values, id });
    return {
      status: 201,
      body: await readCreated(context, tx, url, resource, id),
      headers: { location: `/v7/${url.resource}(${id})` },
    };
  });
}

/**
 * POSTs of many rows of one resource in one transaction (a `$batch` atomicity group): each row
 * goes through what a POST of it would (its body checked, the rows it refers to readable by the
 * caller, the resource's hooks, the create permission on the new row), with the checks that are
 * one query asked once for all rows. Any refusal refuses them all (the group rolls back). The
 * answers are the POSTs' own: 201, the created object and its `Location`.
 */
export async function executeCreateMany(
  context: ODataContext,
  url: ODataUrl,
  bodies: readonly unknown[],
): Promise<ODataResponse[]> {
  const { model, permissions } = context;
  if (url.key || url.count) throw new FlotillaError("bad_request", "POST to the resource itself, without a key");
  const resource = requireResource(model, url.resource);
  if (permissions.filter(resource.name, "create") === "none") throw permissionDenied(context, resource, "create");
  const rows = bodies.map((body) => checkBody(model, resource, body));
  return inTransaction(context, async (tx, afterCommit) => {
    const hookContext = hookContextOf(context, tx, resource, afterCommit);
    const hooks = context.hooks?.[resource.name];
    await expectReadableReferences(context, tx, resource, "create", ...rows);
    const ids: number[] = [];
    const insertOne = async (values: Record<string, unknown>) => {
      const insert = insertStatement(resource, values);
      const { rows: inserted } = await tx.query<{ id: number }>(insert.text, insert.values);
      ids.push(Number(inserted[0]?.id));
    };
    if (hooks?.beforeCreateMany) {
      // The rows checked together, then inserted together (up to 1,000 rows a statement).
      await hooks.beforeCreateMany({ ...hookContext, bodies: rows });
      for (const values of rows) {
        dropParameters(resource, values);
        checkRequired(resource, values);
      }
      for (let start = 0; start < rows.length; start += 1000) {
        const chunk = rows.slice(start, start + 1000);
        const insert = insertManyStatement(resource, chunk);
        if (!insert) {
          for (const values of chunk) await insertOne(values);
          continue;
        }
        const { rows: inserted } = await tx.query<{ id: number }>(insert.text, insert.values);
        ids.push(...inserted.map((row) => Number(row.id)));
      }
    } else {
      for (const values of rows) {
        await hooks?.beforeCreate?.({ ...hookContext, body: values });
        dropParameters(resource, values);
        checkRequired(resource, values);
        await insertOne(values);
      }
    }
    await expectAccess(context, tx, resource, ids, "create");
    for (const [index, values] of rows.entries()) {
      await hooks?.afterCreate?.({ ...hookContext, body: values, id: ids[index] ?? 0 });
    }
    const bodiesById = await readManyCreated(context, tx, url, resource, ids);
    return ids.map((id) => ({
      status: 201,
      body: bodiesById.get(id) ?? { [idFieldOf(resource)]: id },
      headers: { location: `/v7/${url.resource}(${id})` },
    }));
  });
}

/** The created rows as a GET of each would show them, in one read when it names their ids. */
async function readManyCreated(
  context: ODataContext,
  tx: Querier,
  url: ODataUrl,
  resource: ResourceDefinition,
  ids: number[],
): Promise<Map<number, unknown>> {
  const found = new Map<number, unknown>();
  if (context.permissions.filter(resource.name, "read") === "none" || ids.length === 0) return found;
  const { select, expand } = url.options;
  const idName = idFieldOf(resource);
  if (select && !select.some((item) => item.name === idName || item.name === "*")) {
    for (const id of ids) found.set(id, await readCreated(context, tx, url, resource, id));
    return found;
  }
  const read = await executeRead(
    context,
    {
      resource: url.resource,
      count: false,
      options: {
        ...(select ? { select } : {}),
        ...(expand ? { expand } : {}),
        filter: {
          kind: "in",
          left: { kind: "path", path: { segments: [idName] } },
          items: ids.map((id) => ({ kind: "number" as const, value: id })),
        },
      },
    },
    tx,
  );
  for (const row of read.body.d as Array<Record<string, unknown>>) found.set(Number(row[idName]), row);
  return found;
}

async function readCreated(
  context: ODataContext,
  tx: Querier,
  url: ODataUrl,
  resource: ResourceDefinition,
  id: number,
) {
  const fallback = { [idFieldOf(resource)]: id };
  if (context.permissions.filter(resource.name, "read") === "none") return fallback;
  const { select, expand } = url.options;
  const read = await executeRead(
    context,
    {
      resource: url.resource,
      key: { kind: "id", value: { kind: "number", value: id } },
      count: false,
      options: { select, expand },
    },
    tx,
  );
  return (read.body.d as unknown[])[0] ?? fallback;
}

/**
 * PATCH by key or `$filter`: changes the addressed rows the caller may read and update; afterwards
 * every changed row must still pass the update permission (nobody moves a row out of their
 * tenant), else 401 and nothing is written.
 */
export async function executeUpdate(context: ODataContext, url: ODataUrl, body: unknown): Promise<ODataResponse> {
  const { model } = context;
  const target = writeTargetStatement(context, url, "update");
  const resource = requireResource(model, url.resource);
  const values = checkBody(model, resource, body);
  return inTransaction(context, async (tx, afterCommit) => {
    const ids = (await tx.query<{ id: number }>(target.text, target.values)).rows.map((row) => Number(row.id));
    if (ids.length === 0) {
      await expectNothingReadable(context, tx, url, "update");
      return { status: 200, headers: {} };
    }
    await expectReadableReferences(context, tx, resource, "update", values);
    const hookContext = hookContextOf(context, tx, resource, afterCommit);
    const hooks = context.hooks?.[resource.name];
    await hooks?.beforeUpdate?.({ ...hookContext, ids, body: values });
    dropParameters(resource, values);
    const update = updateStatement(resource, ids, values);
    if (update) await tx.query(update.text, update.values);
    await expectAccess(context, tx, resource, ids, "update");
    await hooks?.afterUpdate?.({ ...hookContext, ids, body: values });
    return { status: 200, headers: {} };
  });
}

/** DELETE by key or `$filter`: removes the addressed rows the caller may read and delete. */
export async function executeDelete(context: ODataContext, url: ODataUrl): Promise<ODataResponse> {
  const { model } = context;
  const target = writeTargetStatement(context, url, "delete");
  const resource = requireResource(model, url.resource);
  return inTransaction(context, async (tx, afterCommit) => {
    const ids = (await tx.query<{ id: number }>(target.text, target.values)).rows.map((row) => Number(row.id));
    if (ids.length === 0) {
      await expectNothingReadable(context, tx, url, "delete");
      return { status: 200, headers: {} };
    }
    const hookContext = hookContextOf(context, tx, resource, afterCommit);
    const hooks = context.hooks?.[resource.name];
    await hooks?.beforeDelete?.({ ...hookContext, ids });
    const remove = deleteStatement(resource, ids);
    const { rows } = await tx.query(remove.text, remove.values);
    await hooks?.afterDelete?.({ ...hookContext, ids, rows });
    return { status: 200, headers: {} };
  });
}

/** The rows a PATCH or DELETE may change; a caller without the right at all is refused by name. */
function writeTargetStatement(context: ODataContext, url: ODataUrl, action: "update" | "delete") {
  const resource = requireResource(context.model, url.resource);
  if (context.permissions.filter(resource.name, "read") !== "none") {
    if (context.permissions.filter(resource.name, action) === "none") throw permissionDenied(context, resource, action);
  }
  return targetRowsStatement(context.model, context.permissions, url, action);
}

/**
 * A write that matched no row the caller may change, while it addresses rows the caller can read,
 * is refused (401) rather than answered 200 with nothing done; rows the caller cannot read are
 * not told apart from missing ones.
 */
async function expectNothingReadable(context: ODataContext, tx: Querier, url: ODataUrl, action: "update" | "delete") {
  const readable = compileRead(context.model, context.permissions, { ...url, count: true, options: pick(url) });
  const { rows } = await tx.query<{ d: number }>(readable.query.text, readable.query.values);
  if (Number(rows[0]?.d) > 0) throw permissionDenied(context, requireResource(context.model, url.resource), action);
}

const pick = (url: ODataUrl) => (url.options.filter ? { filter: url.options.filter } : {});

/** spec 1 §6.2: "A no-permission message lists the actor types that lack rights." */
function permissionDenied(context: ODataContext, resource: ResourceDefinition, action: Action) {
  const actor = context.actorType ?? "user";
  return new FlotillaError(
    "unauthorized",
    `Unauthorized: ${actor} lacks the permission to ${action} ${resource.name}.`,
  );
}

/**
 * Runs a write's transaction; the work hooks queue with `afterCommit` (mails) runs once it has
 * committed, never when it rolled back. Their failures are theirs to log: the write stands.
 */
async function inTransaction<T>(
  context: ODataContext,
  work: (tx: HookContext["tx"], afterCommit: HookContext["afterCommit"]) => Promise<T>,
): Promise<T> {
  if (context.afterCommit) return context.db.transaction((tx) => work(tx, context.afterCommit ?? (() => undefined)));
  const queued: (() => Promise<void> | void)[] = [];
  const result = await context.db.transaction((tx) => work(tx, (task) => queued.push(task)));
  for (const task of queued) {
    try {
      await task();
    } catch {
      // The hook's own concern (mailers log and swallow their errors).
    }
  }
  return result;
}

function hookContextOf(
  context: ODataContext,
  tx: HookContext["tx"],
  resource: ResourceDefinition,
  afterCommit: HookContext["afterCommit"],
): HookContext {
  return {
    tx,
    afterCommit,
    actorId: context.actorId,
    actorType: context.actorType,
    authTime: context.authTime,
    delegated: context.delegated,
    auditActor: context.auditActor,
    permissions: context.permissions,
    model: context.model,
    resource,
  };
}

/**
 * Users are nobody's tenant data: whom a membership may name is the resource's hooks' business
 * (invitations, usernames), not the reader's permission.
 */
const REFERENCES_UNCHECKED = new Set(["user"]);

/**
 * Every row a client's write points at must be one the caller can read, so that nobody links
 * their rows to another tenant's (pins a device on its release, moves a fleet into its
 * organization). An unreadable row is answered as a missing one: its existence is not told.
 * A POST naming such a parent is answered 401, as balena's API does (balena-sdk turns it into
 * "<Resource> not found"); a PATCH 400.
 */
async function expectReadableReferences(
  context: ODataContext,
  tx: Querier,
  resource: ResourceDefinition,
  write: "create" | "update",
  ...rows: Record<string, unknown>[]
) {
  const byTarget = new Map<string, { names: string[]; ids: Set<number> }>();
  for (const [name, value] of rows.flatMap((values) => Object.entries(values))) {
    const field = resource.fields.find((each) => each.name === name);
    if (!field?.references || typeof value !== "number" || REFERENCES_UNCHECKED.has(field.references)) continue;
    const entry = byTarget.get(field.references) ?? { names: [], ids: new Set<number>() };
    if (!entry.names.includes(name)) entry.names.push(name);
    entry.ids.add(value);
    byTarget.set(field.references, entry);
  }
  for (const [targetName, { names, ids }] of byTarget) {
    const target = requireResource(context.model, targetName);
    const check = accessCheckStatement(context.model, context.permissions, target, [...ids], "read");
    if (!check) continue;
    const { rows } = await tx.query<{ n: number }>(check.text, check.values);
    if (Number(rows[0]?.n) !== ids.size) {
      throw new FlotillaError(
        write === "create" ? "unauthorized" : "bad_request",
        `${names.map((name) => `"${name}"`).join(" and ")} does not refer to an existing row.`,
      );
    }
  }
}

/** Throws 401 (rolling the transaction back) unless every row passes the permission for `action`. */
async function expectAccess(
  context: ODataContext,
  tx: Querier,
  resource: ResourceDefinition,
  ids: number[],
  action: "create" | "update",
) {
  const check = accessCheckStatement(context.model, context.permissions, resource, ids, action);
  if (!check) return;
  const { rows } = await tx.query<{ n: number }>(check.text, check.values);
  if (Number(rows[0]?.n) !== ids.length) throw permissionDenied(context, resource, action);
}
