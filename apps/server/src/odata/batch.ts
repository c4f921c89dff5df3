import { FlotillaError } from "../errors.ts";
import type { ODataUrl } from "./ast.ts";
import { fromDatabaseError } from "./database-errors.ts";
import { executeCreateMany, type ODataContext, type ODataResponse } from "./execute.ts";
import { handleODataRequest } from "./handle.ts";
import type { HookContext } from "./hooks.ts";
import { parseODataUrl } from "./parse.ts";

/**
 * Requests one `$batch` may hold: what the dashboard needs (a page of its select-all runs is 500
 * new tags, about 0.1 s of work; docs/benchmarks.md). Each request counts against the caller's
 * rate limit (data-api/routes.ts), so a batch is no way round it.
 */
export const MAX_BATCH_REQUESTS = 500;

/** A batch stops starting requests after this long: the rest are answered 503, not run. */
export const BATCH_TIME_LIMIT_MS = 20_000;

export type BatchRequest = {
  id: string;
  method: string;
  /** Relative to the API root (`device_tag`) or from it (`/v7/device_tag`). */
  url: string;
  body?: unknown;
  atomicityGroup?: string;
};

export type BatchResponse = ODataResponse & { id: string };

const METHODS = new Set(["GET", "POST", "PATCH", "MERGE", "DELETE"]);
const badRequest = (message: string) => new FlotillaError("bad_request", message);

/** The JSON batch body (OData 4.01 JSON Format §19, as pinejs takes it), or a 400. */
export function parseBatch(body: unknown): BatchRequest[] {
  const requests = (body as { requests?: unknown } | null | undefined)?.requests;
  if (!Array.isArray(requests)) throw badRequest('A $batch body is {"requests": [...]}');
  if (requests.length === 0) throw badRequest("A $batch holds at least one request");
  if (requests.length > MAX_BATCH_REQUESTS) {
    throw badRequest(`A $batch holds at most ${MAX_BATCH_REQUESTS} requests, not ${requests.length}`);
  }
  const ids = new Set<string>();
  const closedGroups = new Set<string>();
  let openGroup: string | undefined;
  return requests.map((raw: unknown, index): BatchRequest => {
    if (typeof raw !== "object" || raw === null) throw badRequest(`$batch request ${index + 1} is not an object`);
    const { id, method, url, body, atomicityGroup, dependsOn } = raw as Record<string, unknown>;
    if (typeof id !== "string" || id === "") throw badRequest(`$batch request ${index + 1} needs a string "id"`);
    if (ids.has(id)) throw badRequest(`$batch request id "${id}" is used twice`);
    ids.add(id);
    if (typeof method !== "string" || !METHODS.has(method.toUpperCase())) {
      throw badRequest(`$batch request "${id}": the method must be one of ${[...METHODS].join(", ")}`);
    }
    if (typeof url !== "string" || url === "") throw badRequest(`$batch request "${id}" needs a "url"`);
    if (/\$batch/.test(url)) throw badRequest(`$batch request "${id}": a $batch cannot hold another`);
    if (url.startsWith("/") && !url.startsWith("/v7/")) {
      throw badRequest(`$batch request "${id}": the url is under /v7/ or relative to it`);
    }
    if (dependsOn !== undefined) throw badRequest(`$batch request "${id}": dependsOn is not supported`);
    if (atomicityGroup !== undefined && (typeof atomicityGroup !== "string" || atomicityGroup === "")) {
      throw badRequest(`$batch request "${id}": atomicityGroup is a string`);
    }
    // The requests of an atomicity group are adjacent (OData 4.01 JSON Format §19.1).
    if (atomicityGroup !== openGroup) {
      if (openGroup !== undefined) closedGroups.add(openGroup);
      if (atomicityGroup !== undefined && closedGroups.has(atomicityGroup)) {
        throw badRequest(`$batch: the requests of atomicity group "${atomicityGroup}" must be adjacent`);
      }
      openGroup = atomicityGroup;
    }
    return {
      id,
      method: method.toUpperCase(),
      url: url.startsWith("/v7/") ? url : `/v7/${url}`,
      ...(body === undefined ? {} : { body }),
      ...(atomicityGroup === undefined ? {} : { atomicityGroup }),
    };
  });
}

/** A refused request's answer, as the data API would give it (the text, its code in a header). */
function errorResponse(id: string, error: unknown): BatchResponse {
  if (!(error instanceof FlotillaError)) throw error;
  return {
    id,
    status: error.statusCode,
    headers: { ...error.headers, "x-flotilla-error-code": error.code },
    body: error.message,
  };
}

/**
 * `POST /v7/$batch`: the requests in order, each exactly as the data API would run it alone (the
 * caller's permissions and the hooks apply to every one). A request outside an atomicity group
 * has its own transaction and answer; the requests of a group share one transaction, and when one
 * is refused the group rolls back and every request of it is answered with that refusal. In a
 * group, consecutive POSTs to the same URL are written together (`executeCreateMany`): a page of
 * 500 new tags is one request and about 0.2 s, not 500 POSTs (docs/benchmarks.md).
 */
export async function handleODataBatch(
  context: ODataContext,
  body: unknown,
  options: { admit?: (requests: number) => Promise<void>; timeLimitMs?: number } = {},
): Promise<ODataResponse> {
  const requests = parseBatch(body);
  await options.admit?.(requests.length);
  const deadline = Date.now() + (options.timeLimitMs ?? BATCH_TIME_LIMIT_MS);
  const responses: BatchResponse[] = [];
  for (let start = 0; start < requests.length; ) {
    const group = requests[start]?.atomicityGroup;
    let end = start + 1;
    while (group !== undefined && end < requests.length && requests[end]?.atomicityGroup === group) end += 1;
    const unit = requests.slice(start, end);
    start = end;
    if (Date.now() > deadline) {
      const late = new FlotillaError(
        "service_unavailable",
        `Not run: the $batch took longer than ${Math.round((options.timeLimitMs ?? BATCH_TIME_LIMIT_MS) / 1000)} s; send the rest again`,
      );
      for (const request of unit) responses.push(errorResponse(request.id, late));
      continue;
    }
    if (group === undefined) {
      for (const request of unit) responses.push(await runOne(context, request));
      continue;
    }
    responses.push(...(await runGroup(context, unit)));
  }
  return { status: 200, headers: {}, body: { responses } };
}

async function runOne(context: ODataContext, request: BatchRequest): Promise<BatchResponse> {
  try {
    return { id: request.id, ...(await handleODataRequest({ ...context, ...request })) };
  } catch (error) {
    return errorResponse(request.id, error);
  }
}

/** One atomicity group in one transaction; the hooks' after-commit work runs once it commits. */
async function runGroup(context: ODataContext, group: BatchRequest[]): Promise<BatchResponse[]> {
  const queued: Parameters<HookContext["afterCommit"]>[0][] = [];
  let answers: BatchResponse[];
  try {
    answers = await context.db.transaction(async (tx) => {
      const inGroup: ODataContext = {
        ...context,
        db: { query: (text, params) => tx.query(text, params), transaction: (fn) => fn(tx) },
        afterCommit: (task) => queued.push(task),
      };
      const out: BatchResponse[] = [];
      for (let index = 0; index < group.length; ) {
        const request = group[index] as BatchRequest;
        let end = index + 1;
        if (request.method === "POST") {
          while (end < group.length && group[end]?.method === "POST" && group[end]?.url === request.url) end += 1;
        }
        if (end - index > 1) {
          const run = group.slice(index, end);
          const created = await createMany(inGroup, request.url, run);
          out.push(...created.map((response, at) => ({ id: run[at]?.id ?? "", ...response })));
        } else {
          out.push({ id: request.id, ...(await handleODataRequest({ ...inGroup, ...request })) });
        }
        index = end;
      }
      return out;
    });
  } catch (error) {
    const refusal = errorResponse("", error);
    return group.map((request) => ({ ...refusal, id: request.id }));
  }
  for (const task of queued) {
    try {
      await task();
    } catch {
      // The hook's own concern, as after a single write (execute.ts).
    }
  }
  return answers;
}

async function createMany(context: ODataContext, rawUrl: string, run: BatchRequest[]) {
  const url: ODataUrl = parseODataUrl(rawUrl);
  try {
    return await executeCreateMany(
      context,
      url,
      run.map((request) => request.body),
    );
  } catch (error) {
    throw fromDatabaseError(error, context.model, context.model.resource(url.resource)) ?? error;
  }
}
