import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { delegatedRefusal } from "../../lib/delegation.ts";
import { parseInput } from "../../lib/validation.ts";
import { recordAudit, signInEntry } from "../audit/record.ts";
import { ORPHAN_SWEEP_INTERVAL_MS, sweepOrphanProviders } from "./hooks.ts";
import { providerBySso, usableProvider } from "./queries.ts";
import { authorizeUrl, loadServiceProviderKeys, serviceProviderMetadata, validateResponse } from "./saml.ts";
import { afterSamlResponse, finalizeSamlSignIn } from "./saml-accounts.ts";

const ssoParams = z.object({ ssoId: z.string().max(200) });
const finalizeBody = z.object({
  code: z.string({ error: "is required" }).min(1, "is required").max(200),
  jwt: z.string().max(10_000).optional(),
});
/** A SAML response of a few certificates and attributes is kilobytes; Azure's can reach ~100 KB. */
const ACS_BODY_LIMIT = 1_000_000;

/**
 * Enterprise sign-in through SAML (spec 1 §2.1, §7): the dashboard's `/saml/{ssoIdentifier}`
 * sends the browser here, here to the identity provider, the provider posts its answer back, and
 * the browser lands on the dashboard with a one-time code that POST /auth/saml/finalize turns
 * into a session token. Failures on the way land on the dashboard's login page with `saml_error`.
 */
export async function samlRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, config, tokens } = ctx;
  const keys = loadServiceProviderKeys(config.dataDir);
  const toDashboard = (path: string) => `${config.publicUrl}${path}`;
  const publicRoute = { config: { public: true, rateLimit: { max: 60, timeWindow: "1 minute" } } };

  // Providers left without an organization an hour after their creation go (hooks.ts).
  const sweep = setInterval(() => {
    sweepOrphanProviders(db).catch((error) =>
      app.log.warn({ err: error }, "identity providers: removing those without an organization failed"),
    );
  }, ORPHAN_SWEEP_INTERVAL_MS);
  sweep.unref();
  app.addHook("onClose", () => clearInterval(sweep));

  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: ACS_BODY_LIMIT },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  app.get("/auth/saml/:ssoId", publicRoute, async (request, reply) => {
    const { ssoId } = parseInput(ssoParams, request.params);
    const found = await providerBySso(db, ssoId);
    if (!found?.usable) {
      // A provider whose organizations lost SAML with their plan says so, not "unknown".
      const code = found ? "saml_provider_not_in_plan" : "unknown_sso_identifier";
      return reply.redirect(toDashboard(`/saml?${new URLSearchParams({ saml_error: code, sso: ssoId })}`));
    }
    return reply.redirect(await authorizeUrl(found.usable, config.apiUrl, keys, db));
  });

  // What the identity provider's administrator needs: entity id, ACS URL and signing certificate.
  app.get("/auth/saml/:ssoId/metadata", publicRoute, async (request, reply) => {
    const { ssoId } = parseInput(ssoParams, request.params);
    const provider = await usableProvider(db, ssoId);
    if (!provider) throw new FlotillaError("unknown_sso_identifier", undefined, { params: { ssoIdentifier: ssoId } });
    reply.type("application/samlmetadata+xml; charset=utf-8");
    return serviceProviderMetadata(provider, config.apiUrl, keys, db);
  });

  // The assertion consumer service: the identity provider's answer, posted by the browser.
  app.post("/auth/saml/:ssoId/callback", publicRoute, async (request, reply) => {
    const { ssoId } = parseInput(ssoParams, request.params);
    const body = (request.body ?? {}) as Record<string, unknown>;
    try {
      const provider = await usableProvider(db, ssoId);
      if (!provider) throw new FlotillaError("unknown_sso_identifier", undefined, { params: { ssoIdentifier: ssoId } });
      if (typeof body.SAMLResponse !== "string") throw new FlotillaError("saml_login_failed");
      const identity = await validateResponse(provider, body.SAMLResponse, config.apiUrl, keys, db, request.log);
      const next = await db.transaction((tx) => afterSamlResponse(tx, provider.id, identity));
      return reply.redirect(toDashboard(next));
    } catch (error) {
      if (!(error instanceof FlotillaError)) throw error;
      // A refused domain is named on the dashboard's page (saml_domain_not_verified).
      const domain = typeof error.extra.domain === "string" ? error.extra.domain : undefined;
      // No user is known: the entry names the provider and why (never the assertion).
      await recordAudit(
        db,
        { clientAddress: request.ip },
        {
          action: "sign_in.failed",
          details: { method: "saml", sso: ssoId, reason: error.code, ...(domain ? { domain } : {}) },
        },
      );
      const query = new URLSearchParams({ saml_error: error.code, ...(domain ? { domain } : {}) });
      return reply.redirect(toDashboard(`/login?${query}`));
    }
  });

  app.post("/auth/saml/finalize", publicRoute, async (request, reply) => {
    const { code, jwt } = parseInput(finalizeBody, request.body);
    const claims = jwt ? await tokens.verify(jwt) : undefined;
    // Linking an identity to the account is a credential change: never by an application's token.
    if (claims?.delegatedTo !== undefined) throw delegatedRefusal();
    const signedIn = claims?.id;
    const user = await db.transaction(async (tx) => {
      const found = await finalizeSamlSignIn(tx, code, signedIn);
      await recordAudit(tx, { user: found.id, clientAddress: request.ip }, signInEntry(found.id, { method: "saml" }));
      return found;
    });
    reply.type("text/plain; charset=utf-8");
    return tokens.start(user);
  });
}
