import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { model } from "../../model/index.ts";
import { createPermissions, handleODataRequest } from "../../odata/index.ts";
import { resendVerificationEmail } from "../account/service.ts";
import { createHooks } from "./hooks.ts";
import { permissionsForKey, permissionsForUser } from "./permissions.ts";

/** The data API at /v7 (DESIGN §3): every resource of the model, filtered by the caller's rights. */
/** `PATCH /v7/user(1)` or `/v7/user(id=1)`: the user addressed by key. */
const USER_BY_KEY = /^\/v7\/user\((?:id=)?(\d+)\)(?:\?.*)?$/;

export async function dataApiRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db } = ctx;
  const hooks = createHooks(ctx);
  app.route({
    method: ["GET", "POST", "PATCH", "DELETE"],
    url: "/v7/*",
    handler: async (request, reply) => {
      const caller = requireAuth(request);
      const strings = caller.user ? permissionsForUser(caller.globalRoles) : permissionsForKey(caller.apiKey?.role);
      const permissions = createPermissions({ model, permissions: strings, actorId: caller.actor });
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
      const response = await handleODataRequest({
        db,
        model,
        permissions,
        hooks,
        actorId: caller.actor,
        authTime: caller.session?.authTime,
        method: request.method,
        url: request.url,
        body,
      });
      return reply.code(response.status).headers(response.headers).send(response.body);
    },
  });
}
