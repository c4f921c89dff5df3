import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../context.ts";
import { requireAuth } from "../../lib/authenticate.ts";
import { model } from "../../model/index.ts";
import { createPermissions, type Hooks, handleODataRequest } from "../../odata/index.ts";
import { permissionsForUser } from "./permissions.ts";

/** Global roles back from the token's permissions (spec 1 §3: admin.home, support.home). */
const GLOBAL_ROLES: Record<string, string> = { "admin.home": "balena_admin", "support.home": "support_agent" };

/** Resource hooks from the feature folders, by canonical resource name. */
export const hooks: Hooks = {};

/** The data API at /v7 (DESIGN §3): every resource of the model, filtered by the caller's rights. */
export async function dataApiRoutes(app: FastifyInstance, { db }: AppContext) {
  app.route({
    method: ["GET", "POST", "PATCH", "DELETE"],
    url: "/v7/*",
    handler: async (request, reply) => {
      const auth = requireAuth(request);
      const globalRoles = auth.permissions.flatMap((p) => GLOBAL_ROLES[p] ?? []);
      const permissions = createPermissions({
        model,
        permissions: permissionsForUser(globalRoles),
        actorId: auth.actor,
      });
      const response = await handleODataRequest({
        db,
        model,
        permissions,
        hooks,
        actorId: auth.actor,
        method: request.method,
        url: request.url,
        body: request.body,
      });
      return reply.code(response.status).headers(response.headers).send(response.body);
    },
  });
}
