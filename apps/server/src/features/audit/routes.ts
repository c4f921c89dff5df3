import { Readable } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import type { Database } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { mayDo } from "../data-api/actions.ts";
import { type AuditEntryRow, type AuditFilter, listAuditEntries, pruneAuditEntries } from "./queries.ts";

/**
 * The audit log's read API (docs/audit-and-webhooks.md): an organization's administrators read its
 * entries, platform administrators everyone's. There is no route that changes or deletes an entry.
 */

const RETENTION_INTERVAL_MS = 60 * 60 * 1000;
/** Any constant: one instance at a time prunes. */
const RETENTION_LOCK = 7_240_001;
const CSV_MAX_ROWS = 100_000;
const PAGE = 1_000;

const time = z.iso.datetime({ offset: true, error: "must be an ISO 8601 time (2026-01-31T12:00:00Z)" });
const idText = z
  .string()
  .regex(/^\d{1,9}$/, "must be an id")
  .transform(Number);
const filterQuery = z.object({
  actor: idText.optional(),
  action: z
    .string()
    .regex(/^[a-z_]+(\.[a-z_]*)?$/, 'must be an action ("variable.created") or a prefix ending in "." ("variable.")')
    .optional(),
  target_type: z.string().min(1).max(50).optional(),
  target_id: z.string().min(1).max(100).optional(),
  from: time.optional(),
  to: time.optional(),
  before: idText.optional(),
  limit: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(500, "must be at most 500")
    .default(100),
  organization: idText.optional(),
});

function filterOf(query: z.output<typeof filterQuery>, organization: number | undefined): AuditFilter {
  return {
    organization,
    actor: query.actor,
    action: query.action,
    targetType: query.target_type,
    targetId: query.target_id,
    from: query.from ? new Date(query.from) : undefined,
    to: query.to ? new Date(query.to) : undefined,
    before: query.before,
    limit: query.limit,
  };
}

const entryOf = (row: AuditEntryRow) => ({
  id: row.id,
  time: row.created_at,
  actor: {
    user: row.actor_user,
    username: row.actor_username,
    api_key: row.actor_api_key,
    api_key_name: row.actor_api_key_name,
  },
  organization: row.organization,
  action: row.action,
  target: { type: row.target_type, id: row.target_id, user: row.target_user },
  client_address: row.client_address,
  details: row.details,
});

const CSV_COLUMNS = [
  "id",
  "time",
  "actor_user",
  "actor_username",
  "actor_api_key",
  "organization",
  "action",
  "target_type",
  "target_id",
  "client_address",
  "details",
] as const;

/** A CSV cell; text a spreadsheet would run as a formula is prefixed with a quote. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = typeof value === "string" ? value : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function csvLine(row: AuditEntryRow): string {
  const record: Record<(typeof CSV_COLUMNS)[number], unknown> = { ...row, time: row.created_at };
  return `${CSV_COLUMNS.map((column) => cell(record[column])).join(",")}\r\n`;
}

/** Prunes entries older than the retention, under a lock so one instance does it at a time. */
export async function runAuditRetention(db: Database, days: number): Promise<number> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [
      RETENTION_LOCK,
    ]);
    if (!rows[0]?.locked) return 0;
    let total = 0;
    for (;;) {
      const pruned = await pruneAuditEntries(tx, days);
      total += pruned;
      if (pruned === 0) return total;
    }
  });
}

export async function auditRoutes(app: FastifyInstance, ctx: AppContext) {
  const job = setInterval(() => {
    runAuditRetention(ctx.db, ctx.config.auditRetentionDays).catch((error) =>
      app.log.warn({ err: error }, "audit: pruning old entries failed"),
    );
  }, RETENTION_INTERVAL_MS);
  job.unref();
  app.addHook("onClose", () => clearInterval(job));

  /** The organization of the route for its administrators (and platform administrators): 404 to non-members, 403 to members. */
  async function auditedOrganization(request: FastifyRequest): Promise<number> {
    const user = requireUser(request);
    const raw = (request.params as { org: string }).org;
    if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid id passed in url");
    const id = Number(raw);
    const staff = user.caller.globalRoles.includes("balena_admin");
    const { rows } = await ctx.db.query(
      `SELECT 1 FROM "organization" o WHERE o.id = $1
          AND (EXISTS (SELECT 1 FROM "organization_membership" m WHERE m.is_member_of__organization = o.id AND m."user" = $2) OR $3)`,
      [id, user.id, staff],
    );
    if (rows.length === 0) throw new FlotillaError("not_found", "Organization not found");
    if (!(await mayDo(ctx.db, user.caller, "organization.read_audit_log", { organization: id }))) {
      throw new FlotillaError("forbidden", "Only the organization's administrators can read its audit log.");
    }
    return id;
  }

  function requireStaff(request: FastifyRequest) {
    const user = requireUser(request);
    if (!user.caller.globalRoles.includes("balena_admin")) {
      throw new FlotillaError("forbidden", "Only platform administrators read every organization's audit log.");
    }
  }

  async function page(filter: AuditFilter) {
    const rows = await listAuditEntries(ctx.db, filter);
    const last = rows.at(-1);
    return { entries: rows.map(entryOf), next: rows.length === filter.limit && last ? last.id : null };
  }

  async function* csv(filter: AuditFilter) {
    yield `${CSV_COLUMNS.join(",")}\r\n`;
    let before = filter.before;
    let sent = 0;
    while (sent < CSV_MAX_ROWS) {
      const rows = await listAuditEntries(ctx.db, { ...filter, before, limit: Math.min(PAGE, CSV_MAX_ROWS - sent) });
      for (const row of rows) yield csvLine(row);
      sent += rows.length;
      const last = rows.at(-1);
      if (!last || rows.length < PAGE) return;
      before = last.id;
    }
  }

  app.get("/audit/v1/organizations/:org/entries", async (request) => {
    const organization = await auditedOrganization(request);
    return page(filterOf(parseInput(filterQuery, request.query), organization));
  });

  app.get("/audit/v1/organizations/:org/entries.csv", async (request, reply) => {
    const organization = await auditedOrganization(request);
    const filter = filterOf(parseInput(filterQuery, request.query), organization);
    reply
      .type("text/csv; charset=utf-8")
      .header("content-disposition", `attachment; filename="audit-organization-${organization}.csv"`);
    return reply.send(ReadableFrom(csv(filter)));
  });

  // Platform staff: every entry, including those of no organization (sign-ins, SSH keys).
  app.get("/audit/v1/entries", async (request) => {
    requireStaff(request);
    const query = parseInput(filterQuery, request.query);
    return page(filterOf(query, query.organization));
  });

  app.get("/audit/v1/entries.csv", async (request, reply) => {
    requireStaff(request);
    const query = parseInput(filterQuery, request.query);
    reply.type("text/csv; charset=utf-8").header("content-disposition", 'attachment; filename="audit.csv"');
    return reply.send(ReadableFrom(csv(filterOf(query, query.organization))));
  });
}

const ReadableFrom = (lines: AsyncGenerator<string>) => Readable.from(lines);
