import crypto from "node:crypto";
import { SESSION_TOKEN_LIFETIME_MS } from "@flotilla/domain";
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import type { Tx } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { requireFreshAuth, requireUser } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import type { WriteValues } from "../../odata/compile-write.ts";
import type { ResourceHooks } from "../../odata/index.ts";
import { findUserById } from "../users/service.ts";

/**
 * OAuth applications (spec 1 §2.1 `/login/oauth/{clientId}`, §7 POST /oauth/authorize): a
 * platform administrator registers an application through the data API and gets its client
 * secret once from POST /oauth/applications/{id}/secret; a signed-in user grants it access on
 * the dashboard's consent screen, which yields a one-time code; the application exchanges the
 * code (with its secret) at POST /oauth/token for a delegated session token of the user: it acts
 * for the user but manages no credentials (lib/delegation.ts), so deleting the user's
 * `oauth_application_authorization` (which revokes the sessions the application holds) leaves
 * nothing of the application's working.
 */

/** From the grant until the application exchanges the code (RFC 6749 §4.1.2 recommends at most 10 minutes). */
const CODE_TTL_MS = 5 * 60_000;

const sha256 = (value: string) => crypto.createHash("sha256").update(value).digest("hex");
const sameHash = (a: string, b: string) =>
  a.length === b.length && crypto.timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"));

const CLIENT_ID = /^[A-Za-z0-9._~-]{3,100}$/;

/** https anywhere; http only to this machine (native and command-line applications, RFC 8252 §7.3). */
export function isAllowedRedirectUri(value: unknown): boolean {
  if (typeof value !== "string" || value.length > 2000) return false;
  try {
    const url = new URL(value);
    if (url.hash || url.username || url.password) return false;
    if (url.protocol === "https:") return true;
    return url.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  } catch {
    return false;
  }
}

function checkApplicationFields(body: WriteValues) {
  if (body.redirect_uri !== undefined && !isAllowedRedirectUri(body.redirect_uri)) {
    throw new FlotillaError("oauth_redirect_uri_invalid");
  }
  if (body.name !== undefined && (typeof body.name !== "string" || body.name.trim() === "")) {
    throw new FlotillaError("name_required");
  }
  if (body.client_id !== undefined && (typeof body.client_id !== "string" || !CLIENT_ID.test(body.client_id))) {
    throw new FlotillaError("bad_request", "client_id: 3 to 100 letters, digits and . _ ~ -");
  }
}

/** Ends the sessions applications hold through these authorizations. */
async function revokeSessions(tx: Tx, authorizationsSql: string, ids: number[]) {
  await tx.query(
    `UPDATE "user_session" SET revoked_at = now() WHERE revoked_at IS NULL AND id IN (
       SELECT session FROM "oauth_session" WHERE is_for__oauth_application_authorization IN (${authorizationsSql}))`,
    [ids],
  );
}

/** The application's fields (the client id is chosen by the server unless given). */
export const oauthApplicationHooks: ResourceHooks = {
  beforeCreate({ body }) {
    checkApplicationFields(body);
    if (body.client_id === undefined || body.client_id === null)
      body.client_id = crypto.randomBytes(16).toString("hex");
  },
  beforeUpdate({ body }) {
    checkApplicationFields(body);
  },
  async beforeDelete({ tx, ids }) {
    await revokeSessions(
      tx,
      `SELECT id FROM "oauth_application_authorization" WHERE is_for__oauth_application = ANY($1::int[])`,
      ids,
    );
  },
};

/** Revoking a grant (the user's data API DELETE) ends the application's sessions of it. */
export const oauthApplicationAuthorizationHooks: ResourceHooks = {
  async beforeDelete({ tx, ids }) {
    await revokeSessions(tx, `SELECT unnest($1::int[])`, ids);
  },
};

type Application = { id: number; client_id: string; name: string; description: string | null; redirect_uri: string };

const authorizeBody = z.object({
  client_id: z.string({ error: "is required" }).min(1, "is required").max(200),
  response_type: z.string({ error: "is required" }).max(100),
  state: z.string().max(2000).optional(),
  // Optional in the request (the registered one is used); if given it must be the registered one.
  redirect_uri: z.string().max(2000).optional(),
});

/** RFC 6749 §5.2 error answers of the token endpoint (its clients are OAuth libraries, not the dashboard). */
function tokenError(reply: FastifyReply, status: number, error: string, description: string) {
  reply.header("cache-control", "no-store");
  if (status === 401) reply.header("www-authenticate", 'Basic realm="oauth"');
  return reply.code(status).send({ error, error_description: description });
}

export async function oauthRoutes(app: FastifyInstance, { db, tokens }: AppContext) {
  // The token endpoint takes the form encoding of RFC 6749 §4.1.3 (and JSON).
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: 16_384 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  const findApplication = async (clientId: string): Promise<Application | undefined> => {
    const { rows } = await db.query<Application>(
      `SELECT id, client_id, name, description, redirect_uri FROM "oauth_application" WHERE client_id = $1`,
      [clientId],
    );
    return rows[0];
  };

  // A new client secret (the first, or a replacement): shown once, only its hash is kept.
  app.post("/oauth/applications/:id/secret", async (request) => {
    const caller = requireUser(request);
    if (!caller.caller.globalRoles.includes("balena_admin")) throw new FlotillaError("forbidden");
    const { id } = parseInput(z.object({ id: z.coerce.number().int().positive() }), request.params);
    const secret = crypto.randomBytes(32).toString("base64url");
    const { rows } = await db.query<{ client_id: string }>(
      `UPDATE "oauth_application" SET client_secret_hash = $2 WHERE id = $1 RETURNING client_id`,
      [id, sha256(secret)],
    );
    if (!rows[0]) throw new FlotillaError("not_found");
    return { client_id: rows[0].client_id, client_secret: secret };
  });

  // The consent screen's application (`/login/oauth/{clientId}`).
  app.get("/oauth/applications/:clientId", async (request) => {
    requireUser(request);
    const { clientId } = parseInput(z.object({ clientId: z.string().max(200) }), request.params);
    const application = await findApplication(clientId);
    if (!application) throw new FlotillaError("oauth_application_unknown", undefined, { params: { clientId } });
    return application;
  });

  // Granting (spec 1 §7): records the user's authorization and returns a one-time code. A
  // sensitive action: a sign-in of the last 20 minutes (else 403 auth_expired, and the consent
  // page asks for the password), never an API key or another application's token.
  app.post("/oauth/authorize", async (request) => {
    const user = requireUser(request);
    const body = parseInput(authorizeBody, request.body);
    const session = requireFreshAuth(request);
    if (body.response_type !== "code") throw new FlotillaError("oauth_unsupported_response_type");
    const application = await findApplication(body.client_id);
    if (!application) {
      throw new FlotillaError("oauth_application_unknown", undefined, { params: { clientId: body.client_id } });
    }
    if (body.redirect_uri !== undefined && body.redirect_uri !== application.redirect_uri) {
      throw new FlotillaError("bad_request", "redirect_uri: not the application's registered redirect URI");
    }
    const code = crypto.randomBytes(32).toString("base64url");
    await db.transaction(async (tx) => {
      await tx.query(`DELETE FROM "oauth_authorization_code" WHERE expires_at < now()`);
      const { rows } = await tx.query<{ id: number }>(
        `INSERT INTO "oauth_application_authorization" (belongs_to__user, is_for__oauth_application) VALUES ($1, $2)
         ON CONFLICT (belongs_to__user, is_for__oauth_application) DO UPDATE SET belongs_to__user = EXCLUDED.belongs_to__user
         RETURNING id`,
        [user.id, application.id],
      );
      await tx.query(
        `INSERT INTO "oauth_authorization_code" (code_hash, expires_at, is_for__oauth_application_authorization, redirect_uri, auth_time)
         VALUES ($1, $2, $3, $4, $5)`,
        [
          sha256(code),
          new Date(Date.now() + CODE_TTL_MS),
          rows[0]?.id,
          application.redirect_uri,
          new Date(session.authTime),
        ],
      );
    });
    const redirect = new URL(application.redirect_uri);
    redirect.searchParams.set("code", code);
    if (body.state !== undefined) redirect.searchParams.set("state", body.state);
    return { code, redirect_uri: redirect.href };
  });

  // The application's code exchange (RFC 6749 §4.1.3): client_secret_post or client_secret_basic.
  app.post(
    "/oauth/token",
    { config: { public: true, rateLimit: { max: 60, timeWindow: "1 minute" } } },
    async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const text = (key: string) => (typeof body[key] === "string" ? (body[key] as string) : undefined);
      let clientId = text("client_id");
      let clientSecret = text("client_secret");
      const basic = request.headers.authorization?.match(/^Basic\s+(\S+)$/i)?.[1];
      if (basic) {
        const decoded = Buffer.from(basic, "base64").toString();
        const colon = decoded.indexOf(":");
        if (colon > 0) {
          clientId = decodeURIComponent(decoded.slice(0, colon));
          clientSecret = decodeURIComponent(decoded.slice(colon + 1));
        }
      }
      if (text("grant_type") !== "authorization_code") {
        return tokenError(reply, 400, "unsupported_grant_type", "Only grant_type=authorization_code is supported.");
      }
      const code = text("code");
      const redirectUri = text("redirect_uri");
      if (!code || !redirectUri || !clientId) {
        return tokenError(reply, 400, "invalid_request", "code, redirect_uri and client_id are required.");
      }
      const { rows: apps } = await db.query<{ id: number; client_secret_hash: string | null }>(
        `SELECT id, client_secret_hash FROM "oauth_application" WHERE client_id = $1`,
        [clientId],
      );
      const application = apps[0];
      if (
        !application?.client_secret_hash ||
        !clientSecret ||
        !sameHash(sha256(clientSecret), application.client_secret_hash)
      ) {
        return tokenError(reply, 401, "invalid_client", "Invalid client credentials.");
      }
      // One use: the code goes whatever happens next; only this application's codes are taken.
      const { rows } = await db.query<{ authorization: number; user: number; redirect_uri: string; auth_time: Date }>(
        `DELETE FROM "oauth_authorization_code" c USING "oauth_application_authorization" a
          WHERE c.code_hash = $1 AND c.expires_at > now()
            AND a.id = c.is_for__oauth_application_authorization AND a.is_for__oauth_application = $2
          RETURNING a.id AS "authorization", a.belongs_to__user AS "user", c.redirect_uri, c.auth_time`,
        [sha256(code), application.id],
      );
      const grant = rows[0];
      if (!grant || grant.redirect_uri !== redirectUri) {
        return tokenError(
          reply,
          400,
          "invalid_grant",
          "The code is invalid, expired, already used or for another redirect_uri.",
        );
      }
      const user = await findUserById(db.orm, grant.user);
      if (!user) return tokenError(reply, 400, "invalid_grant", "The user of this code no longer exists.");
      const { token, session } = await tokens.startDelegated(user, new Date(grant.auth_time).getTime(), application.id);
      await db.query(`INSERT INTO "oauth_session" (session, is_for__oauth_application_authorization) VALUES ($1, $2)`, [
        session,
        grant.authorization,
      ]);
      reply.header("cache-control", "no-store");
      reply.header("pragma", "no-cache");
      return {
        access_token: token,
        token_type: "Bearer",
        expires_in: Math.floor(SESSION_TOKEN_LIFETIME_MS / 1000),
      };
    },
  );
}
