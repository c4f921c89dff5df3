import crypto from "node:crypto";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { parseInput } from "../../lib/validation.ts";
import { recordAudit, signInEntry } from "../audit/record.ts";
import { authorizationUrl, finishSignIn, newFlowSecrets } from "./social.ts";
import { resolveSocialAccount } from "./social-accounts.ts";

/** From the redirect to the provider until its callback: long enough for a password manager and 2FA. */
const FLOW_TTL_MS = 10 * 60_000;

const hash = (value: string) => crypto.createHash("sha256").update(value).digest("hex");

const sameHash = (a: string, b: string) =>
  a.length === b.length && crypto.timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"));

const providerParams = z.object({ provider: z.string().max(100) });
const startQuery = z.object({
  // The dashboard's random value, kept in its sessionStorage until the callback (login-CSRF guard).
  client_state: z.string().min(16).max(200).optional(),
});

/**
 * Social sign-in (spec 1 §2.1, §7): the dashboard's provider button sends the browser to
 * `GET /auth/{provider}?client_state=…`, here to the provider; the provider sends it back to the
 * dashboard's `/auth/{provider}/callback`, which passes its query (and the same client_state) on
 * to `GET /auth/{provider}/callback` here and gets the session token as text. A social sign-in
 * starts a session like a password login (authTime now), so it counts as re-authentication
 * (spec 1 §4). Failures of the start redirect to the dashboard's login page with `social_error`;
 * the callback (a fetch) answers with the error.
 */
export async function socialRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, config, tokens } = ctx;
  const providers = new Map(config.socialProviders.map((p) => [p.slug, p]));
  const publicRoute = { config: { public: true, rateLimit: { max: 60, timeWindow: "1 minute" } } };
  const redirectUri = (slug: string) => `${config.publicUrl}/auth/${slug}/callback`;
  const known = (slug: string) => {
    const provider = providers.get(slug);
    if (!provider) throw new FlotillaError("social_provider_unknown", undefined, { params: { provider: slug } });
    return provider;
  };

  // For the login and sign-up pages' buttons.
  app.get("/auth/providers", publicRoute, async () =>
    config.socialProviders.map((provider) => ({ slug: provider.slug, name: provider.name })),
  );

  app.get("/auth/:provider", publicRoute, async (request, reply) => {
    const { provider: slug } = parseInput(providerParams, request.params);
    try {
      const provider = known(slug);
      const { client_state: clientState } = parseInput(startQuery, request.query);
      if (!clientState) {
        throw new FlotillaError("social_state_mismatch", undefined, { params: { provider: provider.name } });
      }
      const secrets = newFlowSecrets();
      const url = await authorizationUrl(provider, redirectUri(slug), secrets, request.log);
      await db.query(`DELETE FROM "social_login_state" WHERE expires_at < now()`);
      await db.query(
        `INSERT INTO "social_login_state" (state_hash, expires_at, provider, client_state_hash, code_verifier, nonce)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [
          hash(secrets.state),
          new Date(Date.now() + FLOW_TTL_MS),
          slug,
          hash(clientState),
          secrets.codeVerifier,
          secrets.nonce,
        ],
      );
      return reply.redirect(url);
    } catch (error) {
      if (!(error instanceof FlotillaError)) throw error;
      const query = new URLSearchParams({ social_error: error.code, provider: slug });
      return reply.redirect(`${config.publicUrl}/login?${query}`);
    }
  });

  app.get("/auth/:provider/callback", publicRoute, async (request, reply) => {
    const { provider: slug } = parseInput(providerParams, request.params);
    const provider = known(slug);
    const params = { provider: provider.name };
    const query = Object.entries((request.query ?? {}) as Record<string, unknown>).filter(
      (entry): entry is [string, string] => typeof entry[1] === "string",
    );
    const signIn = async () => {
      const state = query.find(([key]) => key === "state")?.[1];
      const clientState = query.find(([key]) => key === "client_state")?.[1];
      if (!state) throw new FlotillaError("social_login_expired", undefined, { params });
      // One use per flow: the row goes whatever happens next (a replayed callback finds nothing).
      const { rows } = await db.query<{ client_state_hash: string; code_verifier: string; nonce: string }>(
        `DELETE FROM "social_login_state" WHERE state_hash = $1 AND provider = $2 AND expires_at > now()
         RETURNING client_state_hash, code_verifier, nonce`,
        [hash(state), slug],
      );
      const flow = rows[0];
      if (!flow) throw new FlotillaError("social_login_expired", undefined, { params });
      if (!clientState || !sameHash(hash(clientState), flow.client_state_hash)) {
        throw new FlotillaError("social_state_mismatch", undefined, { params });
      }
      // The URL the provider redirected to, as the provider saw it (the redirect_uri of the code).
      const callbackUrl = new URL(redirectUri(slug));
      for (const [key, value] of query) if (key !== "client_state") callbackUrl.searchParams.append(key, value);
      const identity = await finishSignIn(
        provider,
        callbackUrl,
        { state, codeVerifier: flow.code_verifier, nonce: flow.nonce },
        request.log,
      );
      return db.transaction(async (tx) => {
        const found = await resolveSocialAccount(tx, provider, identity);
        await recordAudit(
          tx,
          { user: found.id, clientAddress: request.ip },
          signInEntry(found.id, { method: "social", provider: slug }),
        );
        return found;
      });
    };
    const user = await signIn().catch(async (error: unknown) => {
      // A refused social sign-in: the provider and why, never the provider's answer.
      if (error instanceof FlotillaError) {
        await recordAudit(
          db,
          { clientAddress: request.ip },
          {
            action: "sign_in.failed",
            details: { method: "social", provider: slug, reason: error.code },
          },
        );
      }
      throw error;
    });
    reply.header("cache-control", "no-store");
    reply.type("text/plain; charset=utf-8");
    return tokens.start(user);
  });
}
