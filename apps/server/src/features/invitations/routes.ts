import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { acceptApplicationInvitation, acceptOrganizationInvitation } from "./service.ts";

const tokenOf = (params: unknown) => {
  const token = (params as { token?: string }).token ?? "";
  if (token.length === 0 || token.length > 256) throw new FlotillaError("invitation_invalid");
  return token;
};

/**
 * Accepting invitations (balena-sdk `organization.invite.accept`, `application.invite.accept`):
 * the signed-in user joins with the invited role. 200 `{"organization": id}` / `{"application": id}`;
 * 400 `invitation_invalid` ("Invitation invalid or expired") for an unknown, used or expired token.
 */
export async function invitationRoutes(app: FastifyInstance, { db }: AppContext) {
  app.post("/org/v1/invitation/:token", async (request) => {
    const user = requireUser(request);
    const token = tokenOf(request.params);
    return db.transaction((tx) => acceptOrganizationInvitation(tx, token, user.id));
  });

  app.post("/user/v1/invitation/:token", async (request) => {
    const user = requireUser(request);
    const token = tokenOf(request.params);
    return db.transaction((tx) => acceptApplicationInvitation(tx, token, user.id));
  });
}
