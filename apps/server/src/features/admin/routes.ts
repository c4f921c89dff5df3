import { GLOBAL_ROLES } from "@flotilla/domain";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireFreshAuth, requireUser } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { auditActorOf } from "../audit/record.ts";
import { changeGlobalRole, listUsers } from "./global-roles.ts";

/**
 * Platform administration (docs/support.md "Platform staff"): the users of the installation with
 * their global roles and last sign-in, and granting and removing `support_agent` and
 * `balena_admin`. Only platform administrators (`balena_admin`) get an answer; granting and
 * removing also need a session signed in within the last 20 minutes (spec 1 §4 sensitive actions).
 *
 * - `GET /admin/v1/users?search=&role=&limit=&offset=`
 * - `POST /admin/v1/users/{id}/roles` `{"role": "support_agent"}`
 * - `DELETE /admin/v1/users/{id}/roles/{role}`
 */

const ROLE_ERROR = "must be support_agent or balena_admin";
const role = z.enum(GLOBAL_ROLES, { error: ROLE_ERROR });

const listQuery = z.object({
  search: z.string({ error: "must be text" }).max(254, "must be at most 254 characters").optional(),
  role: z.enum([...GLOBAL_ROLES, "any"], { error: "must be support_agent, balena_admin or any" }).optional(),
  limit: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number from 1 to 100")
    .min(1, "must be a whole number from 1 to 100")
    .max(100, "must be a whole number from 1 to 100")
    .default(25),
  offset: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number from 0 to 1000000")
    .min(0, "must be a whole number from 0 to 1000000")
    .max(1_000_000, "must be a whole number from 0 to 1000000")
    .default(0),
});

const grantBody = z.object({ role }, { error: 'The body must be a JSON object such as {"role": "support_agent"}' });

const userIdOf = (raw: string | undefined) => {
  if (!raw || !/^\d{1,9}$/.test(raw)) throw new FlotillaError("bad_request", "invalid id passed in url");
  return Number(raw);
};

export async function adminRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db } = ctx;

  const requirePlatformAdmin = (request: FastifyRequest) => {
    const user = requireUser(request);
    if (!user.caller.globalRoles.includes("balena_admin")) {
      throw new FlotillaError("forbidden", "Only platform administrators manage users and their global roles.");
    }
    return user;
  };

  /** A role change: a platform administrator's own session, signed in within 20 minutes. */
  const requireRoleChanger = (request: FastifyRequest) => {
    const user = requirePlatformAdmin(request);
    if (!user.caller.session) {
      throw new FlotillaError(
        "forbidden",
        "Global roles are granted and removed from a dashboard session (or with flotilla-server admin on the server host), not with an API key.",
      );
    }
    const session = requireFreshAuth(request);
    if (session.actualUser !== undefined) {
      throw new FlotillaError("forbidden", "Global roles cannot be changed while logged in as another user.");
    }
    return user;
  };

  app.get("/admin/v1/users", async (request) => {
    requirePlatformAdmin(request);
    const query = parseInput(listQuery, request.query);
    return listUsers(db, query);
  });

  app.post("/admin/v1/users/:id/roles", async (request) => {
    requireRoleChanger(request);
    const id = userIdOf((request.params as { id?: string }).id);
    const body = parseInput(grantBody, request.body);
    return changeGlobalRole(db, {
      user: id,
      role: body.role,
      grant: true,
      actor: auditActorOf(request),
      source: "api",
    });
  });

  app.delete("/admin/v1/users/:id/roles/:role", async (request) => {
    requireRoleChanger(request);
    const params = request.params as { id?: string; role?: string };
    const id = userIdOf(params.id);
    const parsed = role.safeParse(params.role);
    if (!parsed.success) throw new FlotillaError("bad_request", `role: ${ROLE_ERROR}`);
    return changeGlobalRole(db, {
      user: id,
      role: parsed.data,
      grant: false,
      actor: auditActorOf(request),
      source: "api",
    });
  });
}
