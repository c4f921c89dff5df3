import fastifyMultipart from "@fastify/multipart";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { type Caller, requireAuth } from "../../lib/authenticate.ts";
import { isDelegated } from "../../lib/delegation.ts";
import { loadSecret } from "../../lib/secret.ts";
import { model } from "../../model/index.ts";
import {
  createPermissions,
  type Hooks,
  handleODataBatch,
  handleODataRequest,
  type ODataContext,
  type ODataRequest,
  type ODataResponse,
} from "../../odata/index.ts";
import { resendVerificationEmail } from "../account/service.ts";
import { type AssetLinks, createAssetLinks, signAssetLinks } from "../releases/asset-links.ts";
import { assetUploads, beginBody, commitBody } from "../releases/asset-uploads.ts";
import { assetUploadHooks, assetUploadTarget, contentOf, isAssetUpload, readAssetUpload } from "../releases/assets.ts";
import { findReleaseAsset } from "../releases/queries.ts";
import { mayDo } from "./actions.ts";
import { createHooks } from "./hooks.ts";
import { guestPermissions, permissionsForKey, permissionsForUser } from "./permissions.ts";

/** The data API at /v7 (DESIGN §3): every resource of the model, filtered by the caller's rights. */
/** `PATCH /v7/user(1)` or `/v7/user(id=1)`: the user addressed by key. */
const USER_BY_KEY = /^\/v7\/user\((?:id=)?(\d+)\)(?:\?.*)?$/;

/** balena-sdk's multipart upload actions on one release asset (asset-uploads.ts). */
const ASSET_ACTION = /^\/v7\/(?:release_asset|release__has__asset_key)\((?:id=)?(\d{1,10})\)\/(\w+)(?:\?.*)?$/;

/** `POST /v7/$batch`: JSON batch requests (odata/batch.ts). */
const BATCH = /^\/v7\/\$batch(?:\?.*)?$/;

/** Actor ids start at 1: a guest's `@__ACTOR_ID` matches no row. */
const GUEST_ACTOR = 0;

/**
 * A data API request as the caller: their permissions and hooks apply, as on /v7. Without a
 * caller (no token) it is a guest's read of the public catalogues (`guestPermissions`).
 */
export function odataAs(
  ctx: AppContext,
  caller: Caller | undefined,
  request: Pick<ODataRequest, "method" | "url" | "body"> & { clientAddress?: string },
  hooks: Hooks = hooksOf(ctx),
) {
  if (!caller) {
    if (request.method !== "GET") throw new FlotillaError("not_logged_in");
    return handleODataRequest({
      db: ctx.db,
      model,
      permissions: createPermissions({ model, permissions: guestPermissions(), actorId: GUEST_ACTOR }),
      hooks,
      actorId: GUEST_ACTOR,
      actorType: "guest",
      authTime: undefined,
      ...request,
    });
  }
  return handleODataRequest({
    ...callerContext(ctx, caller, hooks, request.clientAddress),
    method: request.method,
    url: request.url,
    body: request.body,
  });
}

/** A JSON `$batch` as the caller (its atomicity groups each in one transaction), as on /v7/$batch. */
export function odataBatchAs(ctx: AppContext, caller: Caller, body: unknown) {
  return handleODataBatch(callerContext(ctx, caller, hooksOf(ctx)), body);
}

/** What the data API runs a signed-in caller's requests with: their permissions, the hooks, the audit actor. */
function callerContext(ctx: AppContext, caller: Caller, hooks: Hooks, clientAddress?: string): ODataContext {
  const strings = caller.user ? permissionsForUser(caller.globalRoles) : permissionsForKey(caller.apiKey?.role);
  return {
    db: ctx.db,
    model,
    permissions: createPermissions({ model, permissions: strings, actorId: caller.actor }),
    hooks,
    actorId: caller.actor,
    actorType: actorTypeOf(caller),
    authTime: caller.session?.authTime,
    delegated: isDelegated(caller),
    auditActor: { user: caller.user?.id, apiKey: caller.apiKey?.id, clientAddress },
  };
}

/** A personal key or session acts as its user; provisioning keys as their fleet; device keys as the device. */
function actorTypeOf(caller: Caller) {
  if (caller.user) return "user";
  return caller.apiKey?.role === "device-api-key" ? "device" : "application";
}

const hooksByContext = new WeakMap<AppContext, ReturnType<typeof createHooks>>();
function hooksOf(ctx: AppContext) {
  let hooks = hooksByContext.get(ctx);
  if (!hooks) {
    hooks = createHooks(ctx);
    hooksByContext.set(ctx, hooks);
  }
  return hooks;
}

/**
 * A multipart write of a release asset: the fields go through the data API as the caller, and the
 * file is stored by that write's own hooks, for the row it created or updated (assets.ts).
 */
async function assetUpload(ctx: AppContext, caller: Caller, request: FastifyRequest) {
  const { id } = assetUploadTarget(request.method, request.url);
  const { body, file } = await readAssetUpload(request);
  const write = { method: request.method, url: request.url };
  if (!file) return odataAs(ctx, caller, { ...write, body });
  const { asset: _described, ...fields } = body;
  const upload = assetUploadHooks(hooksOf(ctx), {
    dataDir: ctx.config.dataDir,
    apiUrl: ctx.config.apiUrl,
    file: contentOf(file),
  });
  let committed = false;
  try {
    const response = await odataAs(ctx, caller, { ...write, body: fields }, upload.hooks);
    committed = true;
    // A PATCH that matched no row the caller may change wrote nothing: say so.
    if (id !== undefined && upload.stored.length === 0) throw new FlotillaError("not_found", "Release asset not found");
    return response;
  } finally {
    // Staged files left after a commit are renames that failed; after a rollback, nothing to say.
    if ((await upload.discard()) > 0 && committed) {
      request.log.error({ assets: upload.stored }, "release asset: the file could not be put in place after the write");
    }
  }
}

/**
 * `POST /v7/release_asset({id})/beginUpload|commitUpload`: the asset must be readable (else 404)
 * and the caller's to change (else 401, as a PATCH would be); the commit stores the joined parts
 * through the data API's own write, so the row and the file change together or not at all.
 */
async function assetAction(
  ctx: AppContext,
  caller: Caller,
  uploads: ReturnType<typeof assetUploads>,
  links: AssetLinks,
  request: FastifyRequest,
  [, rawId = "", action = ""]: string[],
) {
  const id = Number(rawId);
  if (action !== "beginUpload" && action !== "commitUpload") {
    throw new FlotillaError("bad_request", `Unknown release_asset action: ${action} (beginUpload, commitUpload)`);
  }
  const row = id <= 2_147_483_647 ? await findReleaseAsset(ctx.db, id) : undefined;
  if (!row || !(await mayDo(ctx.db, caller, "release_asset.read", { fleet: row.fleet }))) {
    throw new FlotillaError("not_found", "Release asset not found");
  }
  if (!(await mayDo(ctx.db, caller, "release_asset.update", { fleet: row.fleet }))) {
    throw new FlotillaError("unauthorized", "You may not change this release asset");
  }
  if (action === "beginUpload") {
    const body = beginBody.safeParse(request.body);
    if (!body.success) throw new FlotillaError("bad_request", issueText(body.error));
    return uploads.begin(id, caller.actor, body.data.asset);
  }
  const body = commitBody.safeParse(request.body);
  if (!body.success) throw new FlotillaError("bad_request", issueText(body.error));
  const { content, done } = await uploads.complete(id, caller.actor, body.data);
  const upload = assetUploadHooks(hooksOf(ctx), {
    dataDir: ctx.config.dataDir,
    apiUrl: ctx.config.apiUrl,
    file: content,
  });
  try {
    await odataAs(ctx, caller, { method: "PATCH", url: `/v7/release_asset(${id})`, body: {} }, upload.hooks);
  } finally {
    await upload.discard();
  }
  if (upload.stored.length === 0) throw new FlotillaError("not_found", "Release asset not found");
  await done();
  const stored = await findReleaseAsset(ctx.db, id);
  signAssetLinks(stored, links, ctx.config.apiUrl);
  return stored?.asset;
}

const issueText = (error: { issues: { path: PropertyKey[]; message: string }[] }) =>
  error.issues.map((issue) => `${issue.path.map(String).join(".") || "body"}: ${issue.message}`).join("; ");

export async function dataApiRoutes(app: FastifyInstance, ctx: AppContext) {
  // Only release assets are sent as multipart (balena-sdk release.asset.upload).
  await app.register(fastifyMultipart);
  const links = createAssetLinks(loadSecret(ctx.config), ctx.config.apiUrl);
  const uploads = assetUploads({ dataDir: ctx.config.dataDir, links });
  // The API's rate limit (app.ts), same store and key: a $batch is charged for each request it holds.
  const rateLimit = app.createRateLimit();
  const chargeRateLimit = async (request: FastifyRequest, operations: number) => {
    const extra = operations - 1; // the batch's own request is counted already
    if (extra <= 0) return;
    const state = await rateLimit(request, { increment: false });
    if (state.isAllowed) return;
    if (state.remaining < extra) {
      throw new FlotillaError(
        "too_many_requests",
        `Too Many Requests. Try again later. Each of this $batch's ${operations} requests counts against the limit of ${state.max} a minute; ${state.remaining} are left.`,
        { headers: { "retry-after": String(Math.max(1, state.ttlInSeconds)) } },
      );
    }
    for (let count = 0; count < extra; count += 1) await rateLimit(request);
  };
  /** Answers a data API response, its release asset links signed (asset-links.ts). */
  const answer = (reply: FastifyReply, url: string, response: ODataResponse) => {
    if (/asset/i.test(url)) signAssetLinks(response.body, links, ctx.config.apiUrl);
    return reply.code(response.status).headers(response.headers).send(response.body);
  };
  app.route({
    method: ["GET", "POST", "PATCH", "DELETE"],
    url: "/v7/*",
    // Reads without a token see the public catalogues only, as on balena; writes need a caller.
    config: { guest: true },
    handler: async (request, reply) => {
      if (!request.auth) {
        if (request.method !== "GET") throw new FlotillaError("not_logged_in");
        const response = await odataAs(ctx, undefined, { method: "GET", url: request.url, body: undefined });
        return answer(reply, request.url, response);
      }
      const caller = requireAuth(request);
      if (request.isMultipart()) {
        if (!isAssetUpload(request) || request.method === "GET" || request.method === "DELETE") {
          throw new FlotillaError("unsupported_media_type");
        }
        const response = await assetUpload(ctx, caller, request);
        return answer(reply, request.url, response);
      }
      if (request.method === "POST" && BATCH.test(request.url)) {
        const response = await handleODataBatch(callerContext(ctx, caller, hooksOf(ctx), request.ip), request.body, {
          admit: (operations) => chargeRateLimit(request, operations),
        });
        const { responses } = response.body as { responses: Array<{ body?: unknown }> };
        for (const each of responses) signAssetLinks(each.body, links, ctx.config.apiUrl);
        return reply.code(response.status).send(response.body);
      }
      const action = request.method === "POST" ? ASSET_ACTION.exec(request.url) : null;
      if (action) return reply.send(await assetAction(ctx, caller, uploads, links, request, [...action]));
      let body = request.body;
      // balena-sdk `auth.requestVerificationEmail` PATCHes this write-only field of the user.
      const userKey = request.method === "PATCH" ? USER_BY_KEY.exec(request.url) : null;
      if (userKey && body && typeof body === "object" && "has_been_sent_verification_email" in body) {
        const { has_been_sent_verification_email: requested, ...rest } = body as Record<string, unknown>;
        if (caller.user?.id !== Number(userKey[1])) throw new FlotillaError("unauthorized");
        if (requested !== true) {
          throw new FlotillaError("bad_request", "has_been_sent_verification_email can only be set to true");
        }
        await resendVerificationEmail(ctx, caller.user.id);
        if (Object.keys(rest).length === 0) return reply.code(200).send();
        body = rest;
      }
      const response = await odataAs(ctx, caller, {
        method: request.method,
        url: request.url,
        body,
        clientAddress: request.ip,
      });
      return answer(reply, request.url, response);
    },
  });
}
