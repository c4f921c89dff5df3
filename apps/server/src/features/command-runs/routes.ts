import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { mayDo } from "../data-api/actions.ts";
import { listRuns } from "./queries.ts";
import { createRun, newRunBody, readableByCreator, readableRun, runDetail, runView } from "./runs.ts";
import type { RunEvent } from "./scheduler.ts";

/**
 * Bulk commands (docs/bulk-commands.md): `POST /command/v1/runs` starts a command on many
 * devices, `GET /command/v1/runs[/{id}]` reads runs, `GET /command/v1/runs/{id}/stream` follows
 * one as server-sent events, `POST /command/v1/runs/{id}/cancel` stops it.
 */

/** The stream says it is alive this often, so proxies keep it open. */
const KEEPALIVE_MS = 15_000;
/** A reader this far behind is cut off (it reconnects and gets a fresh snapshot) instead of filling memory. */
const MAX_STREAM_BACKLOG = 8 * 1024 * 1024;

const runId = (request: FastifyRequest) => {
  const raw = (request.params as { id: string }).id;
  if (!/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "the run id must be a whole number");
  return Number(raw);
};

const idText = z
  .string()
  .regex(/^\d{1,9}$/, "must be an id")
  .transform(Number);
const listQuery = z.object({
  fleet: idText.optional(),
  organization: idText.optional(),
  before: idText.optional(),
  limit: z.coerce.number({ error: "must be a number" }).int().min(1).max(200).default(50),
});

export async function commandRunRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, commandRuns: scheduler } = ctx;
  await scheduler.start();
  app.addHook("preClose", () => scheduler.close());

  app.post("/command/v1/runs", async (request, reply) => {
    const user = requireUser(request);
    const body = parseInput(newRunBody, request.body);
    const created = await createRun(
      { db, relay: ctx.devices.relay, scheduler, instance: ctx.devices.bus.instanceId },
      { ...user.caller, user },
      body,
      request.ip,
    );
    return reply.code(201).send(created);
  });

  app.get("/command/v1/runs", async (request) => {
    const user = requireUser(request);
    const query = parseInput(listQuery, request.query);
    // An organization's administrators list all its runs; everyone else the runs they started.
    const admin =
      query.organization !== undefined &&
      (await mayDo(db, user.caller, "organization.read_audit_log", { organization: query.organization }));
    const rows = await listRuns(
      db,
      { createdBy: admin ? undefined : user.id, organization: query.organization, fleet: query.fleet },
      query.limit,
      query.before,
    );
    // A creator no longer allowed to read a run's devices no longer sees it.
    const shown = admin ? rows : await readableByCreator(db, user.caller, rows);
    return {
      runs: shown.map((row) => ({ ...runView(row), device_count: row.device_count, states: row.states })),
    };
  });

  app.get("/command/v1/runs/:id", async (request) => {
    const user = requireUser(request);
    const run = await readableRun(db, user.caller, runId(request));
    return runDetail(db, scheduler, run);
  });

  app.post("/command/v1/runs/:id/cancel", async (request) => {
    const user = requireUser(request);
    const run = await readableRun(db, user.caller, runId(request));
    if (run.status === "running") {
      // Scheduled on another instance: it is asked through the bus and cancels a moment later.
      scheduler.cancel(run.id);
      await scheduler.settled();
    }
    return runDetail(db, scheduler, await readableRun(db, user.caller, run.id));
  });

  app.get("/command/v1/runs/:id/stream", async (request, reply) => {
    const user = requireUser(request);
    const run = await readableRun(db, user.caller, runId(request));
    const raw = reply.raw;
    reply.hijack();
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    const send = (event: string, data: unknown) => {
      if (raw.writableEnded) return;
      if (raw.writableLength > MAX_STREAM_BACKLOG) return finish();
      raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      clearInterval(keepalive);
      raw.end();
    };
    // Events that happen while the snapshot is read are held, then sent after it.
    const held: RunEvent[] = [];
    let snapshotSent = false;
    const unsubscribe = scheduler.subscribe(run.id, (event) => {
      if (!snapshotSent) held.push(event);
      else deliver(event);
    });
    const deliver = (event: RunEvent) => {
      const { event: name, ...data } = event;
      send(name, data);
      if (name === "summary") finish();
    };
    const keepalive = setInterval(() => {
      if (!raw.writableEnded) raw.write(": keepalive\n\n");
    }, KEEPALIVE_MS);
    keepalive.unref();
    raw.on("close", finish);
    const detail = await runDetail(db, scheduler, await readableRun(db, user.caller, run.id));
    send("snapshot", detail);
    snapshotSent = true;
    if (detail.status !== "running") {
      deliver({ event: "summary", run: run.id, status: detail.status, summary: detail.summary });
      return;
    }
    for (const event of held.splice(0)) if (!closed) deliver(event);
  });
}
