import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../context.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { model } from "../../model/index.ts";
import { createPermissions, handleODataRequest } from "../../odata/index.ts";
import { hooks } from "./hooks.ts";
import { permissionsForUser } from "./permissions.ts";

/** The data API at /v7 (DESIGN §3): every resource of the model, filtered by the caller's rights. */
export async function dataApiRoutes(app: FastifyInstance, { db }: AppContext) {
  app.route({
    method: ["GET", "POST", "PATCH", "DELETE"],
    url: "/v7/*",
    handler: async (request, reply) => {
      const caller = requireAuth(request);
      // Fleets' and devices' own keys get their rights with the device API; none here yet.
      const strings = caller.user ? permissionsForUser(caller.globalRoles) : [];
      const permissions = createPermissions({ model, permissions: strings, actorId: caller.actor });
      const response = await handleODataRequest({
        db,
        model,
        permissions,
        hooks,
        actorId: caller.actor,
        method: request.method,
        url: request.url,
        body: request.body,
      });
      return reply.code(response.status).headers(response.headers).send(response.body);
    },
  });
}
