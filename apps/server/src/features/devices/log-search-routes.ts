import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth, requireUser } from "../../lib/authenticate.ts";
import { idInput, parseInput } from "../../lib/validation.ts";
import { mayDo } from "../data-api/actions.ts";
import { type LogScope, readLogRetention, searchLogLines, writeLogRetention } from "./log-queries.ts";
import { LOG_RETENTION_INTERVAL_MS, runLogRetention } from "./log-retention.ts";
import { deviceByUuid } from "./queries.ts";

/** Lines per page when `limit` is not given, and the most one page may hold. */
export const DEFAULT_SEARCH_LIMIT = 100;
export const MAX_SEARCH_LIMIT = 1000;
/** Longest search text: a pattern is not a document. */
const MAX_SEARCH_TEXT = 200;

/** ms since the epoch or an ISO date. */
const instant = (name: string) =>
  z.string().transform((raw, ctx) => {
    const value = /^-?\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
    if (!Number.isSafeInteger(Math.trunc(value)) || !Number.isFinite(value)) {
      ctx.addIssue({ code: "custom", message: `"${name}" must be milliseconds since the epoch or an ISO date` });
      return z.NEVER;
    }
    return Math.trunc(value);
  });

const searchQuery = z
  .object({
    device: z
      .string()
      .regex(/^[0-9a-f]{7,62}$/, "must be a device uuid")
      .optional(),
    fleet: idInput.optional(),
    q: z
      .string()
      .min(1, "must not be empty")
      .max(MAX_SEARCH_TEXT, `must be at most ${MAX_SEARCH_TEXT} characters`)
      .optional(),
    service: z.string().min(1, "must not be empty").max(100, "must be at most 100 characters").optional(),
    from: instant("from").optional(),
    to: instant("to").optional(),
    limit: z
      .string()
      .regex(/^\d+$/, `must be a whole number from 1 to ${MAX_SEARCH_LIMIT}`)
      .transform(Number)
      .refine((n) => n >= 1 && n <= MAX_SEARCH_LIMIT, `must be a whole number from 1 to ${MAX_SEARCH_LIMIT}`)
      .optional(),
    before: z
      .string()
      .regex(/^-?\d{1,16}_\d{1,16}$/, "must be the next cursor of a previous page")
      .transform((raw) => {
        const [timestamp, id] = raw.split("_").map(Number) as [number, number];
        return { timestamp, id };
      })
      .optional(),
  })
  .strict()
  .refine((q) => (q.device === undefined) !== (q.fleet === undefined), {
    message: "give either device (a uuid) or fleet (an id)",
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from < q.to, {
    message: '"from" must be before "to"',
    path: ["from"],
  });

const retentionBody = (limits: { maxAgeDays: number; maxLinesPerDevice: number }) =>
  z
    .object({
      maxAgeDays: z
        .number({ error: "must be a whole number of days, or null for the server's default" })
        .int(`must be a whole number of days from 1 to ${limits.maxAgeDays}`)
        .min(1, `must be a whole number of days from 1 to ${limits.maxAgeDays}`)
        .max(
          limits.maxAgeDays,
          `must be a whole number of days from 1 to ${limits.maxAgeDays} (the server's retention)`,
        )
        .nullable()
        .optional(),
      maxLinesPerDevice: z
        .number({ error: "must be a whole number of lines, or null for the server's default" })
        .int(`must be a whole number from 1 to ${limits.maxLinesPerDevice}`)
        .min(1, `must be a whole number from 1 to ${limits.maxLinesPerDevice}`)
        .max(
          limits.maxLinesPerDevice,
          `must be a whole number from 1 to ${limits.maxLinesPerDevice} (the server's lines per device)`,
        )
        .nullable()
        .optional(),
    })
    .strict();

/** The next page's cursor: the last line's (timestamp, id). */
const cursorOf = (line: { timestamp: number; id: number }) => `${line.timestamp}_${line.id}`;

/**
 * Logs over time (docs/logs.md): search of a device's or a fleet's stored lines, and each
 * organization's retention, pruned by a periodic job.
 */
export async function logSearchRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, config } = ctx;
  const limits = { maxAgeDays: config.deviceLogRetentionDays, maxLinesPerDevice: config.deviceLogLines };
  const job = setInterval(() => {
    runLogRetention(db, limits).catch((error) => app.log.warn({ err: error }, "device logs: retention failed"));
  }, LOG_RETENTION_INTERVAL_MS);
  job.unref();
  app.addHook("onClose", () => clearInterval(job));

  /** Where the caller may search: a device or fleet it may read, else 404 as if it did not exist. */
  async function readableScope(
    request: FastifyRequest,
    query: { device?: string | undefined; fleet?: number | undefined },
  ): Promise<LogScope> {
    const caller = requireAuth(request);
    if (query.device !== undefined) {
      const target = caller.user ? await deviceByUuid(db, query.device) : undefined;
      if (!target || !(await mayDo(db, caller, "device.read", { device: target.id }))) {
        throw new FlotillaError("device_not_found", undefined, { params: { device: query.device } });
      }
      return { device: target.id };
    }
    const fleet = query.fleet as number;
    if (!caller.user || !(await mayDo(db, caller, "application.read", { fleet }))) {
      throw new FlotillaError("not_found", `Fleet not found: ${fleet}`);
    }
    return { fleet };
  }

  /** `?device=uuid|fleet=id&q=&service=&from=&to=&limit=&before=`: newest first, `next` for the following page. */
  app.get("/logs/v1/search", async (request) => {
    const query = parseInput(searchQuery, request.query);
    const scope = await readableScope(request, query);
    const limit = query.limit ?? DEFAULT_SEARCH_LIMIT;
    const rows = await searchLogLines(db, {
      scope,
      ...(query.q !== undefined ? { text: query.q } : {}),
      ...(query.service !== undefined ? { service: query.service } : {}),
      ...(query.from !== undefined ? { from: query.from } : {}),
      ...(query.to !== undefined ? { to: query.to } : {}),
      ...(query.before !== undefined ? { before: query.before } : {}),
      limit: limit + 1,
    });
    const lines = rows.slice(0, limit);
    const last = lines.at(-1);
    return { lines, next: rows.length > limit && last ? cursorOf(last) : null };
  });

  /** The organization of the route for its members (and platform administrators), else 404. */
  async function memberOrganization(request: FastifyRequest<{ Params: { id: string } }>) {
    const user = requireUser(request);
    const raw = request.params.id;
    if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid id passed in url");
    const id = Number(raw);
    const staff = user.caller.globalRoles.includes("balena_admin");
    const { rows } = await db.query(
      `SELECT 1 FROM "organization" o WHERE o.id = $1
          AND (EXISTS (SELECT 1 FROM "organization_membership" m WHERE m.is_member_of__organization = o.id AND m."user" = $2) OR $3)`,
      [id, user.id, staff],
    );
    if (rows.length === 0) throw new FlotillaError("not_found", "Organization not found");
    return { id, caller: user.caller };
  }

  const retentionOf = async (organization: number) => ({
    ...(await readLogRetention(db, organization)),
    server: limits,
  });

  /** The organization's own retention (null: the server's) and the server's bounds. */
  app.get<{ Params: { id: string } }>("/logs/v1/organizations/:id/retention", async (request) => {
    const { id } = await memberOrganization(request);
    return retentionOf(id);
  });

  /** Organization administrators set a shorter age and a line cap per device; null goes back to the server's. */
  app.patch<{ Params: { id: string } }>("/logs/v1/organizations/:id/retention", async (request) => {
    const { id, caller } = await memberOrganization(request);
    if (!(await mayDo(db, caller, "organization.update", { organization: id }))) {
      throw new FlotillaError("forbidden", "Only the organization's administrators can change its log retention.");
    }
    const body = parseInput(retentionBody(limits), request.body);
    const current = await readLogRetention(db, id);
    await writeLogRetention(db, id, {
      maxAgeDays: body.maxAgeDays === undefined ? current.maxAgeDays : body.maxAgeDays,
      maxLinesPerDevice: body.maxLinesPerDevice === undefined ? current.maxLinesPerDevice : body.maxLinesPerDevice,
    });
    return retentionOf(id);
  });
}
