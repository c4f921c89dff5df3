import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { type Caller, identify, tokenHashOf } from "../../lib/authenticate.ts";
import { parseInput } from "../../lib/validation.ts";
import { grantAccess } from "./access.ts";
import { loadRegistryKeys } from "./keys.ts";
import { parseScopes } from "./scopes.ts";
import { BUILDER_USERNAME, builderAccess, signRegistryToken } from "./tokens.ts";

const query = z.object({
  service: z.string().max(255, "must be at most 255 characters").optional(),
  scope: z.union([z.string(), z.array(z.string())]).optional(),
  // Sent by docker and podman; the credentials say who calls.
  account: z.string().optional(),
  client_id: z.string().optional(),
  offline_token: z.string().optional(),
});

/** The registry's token auth (docs/operations.md "Image registry"); no routes without FLOTILLA_REGISTRY_URL. */
export async function registryRoutes(app: FastifyInstance, ctx: AppContext) {
  const registry = ctx.config.registry;
  const keys = registry && loadRegistryKeys(ctx.config);

  // The Docker token protocol's realm: docker, podman and balena-engine send the registry
  // credentials as Basic auth (any username, the password a device key, API key or session token).
  app.get("/auth/v1/token", { config: { public: true } }, async (request, reply) => {
    if (!registry || !keys)
      throw new FlotillaError("not_found", "No image registry is configured (FLOTILLA_REGISTRY_URL).");
    const input = parseInput(query, withScopeList(request.query));
    const service = input.service ?? registry.host;
    if (service !== registry.host) {
      throw new FlotillaError(
        "bad_request",
        `service: this server issues tokens for the registry ${registry.host} only`,
      );
    }
    const requested = parseScopes(input.scope);
    reply.header("cache-control", "no-store");
    const basic = basicCredentials(request.headers.authorization);
    if (basic?.username === BUILDER_USERNAME) {
      // The builder pushing a release's image: exactly what its credential names.
      const allowed = await builderAccess(keys, basic.password);
      if (!allowed) throw new FlotillaError("not_logged_in", "This builder credential is not valid (or has expired).");
      const access = requested.flatMap((want) => {
        const grant = allowed.find((have) => have.type === want.type && have.name === want.name);
        const actions = want.actions.filter((action) => grant?.actions.includes(action));
        return actions.length > 0 ? [{ ...want, actions }] : [];
      });
      return signRegistryToken(keys, { subject: BUILDER_USERNAME, service, access });
    }
    const caller = await callerOf(ctx, request);
    const access = await grantAccess(ctx.db, caller, requested);
    return signRegistryToken(keys, { subject: caller.user?.username ?? `actor-${caller.actor}`, service, access });
  });

  // The certificate the registry trusts (its `auth.token.rootcertbundle`); public by nature.
  app.get("/auth/v1/registry-cert", { config: { public: true } }, async (_request, reply) => {
    if (!keys) throw new FlotillaError("not_found", "No image registry is configured (FLOTILLA_REGISTRY_URL).");
    reply.type("application/x-pem-file");
    return keys.certificatePem;
  });
}

/**
 * `scope` as docker sends it (repeated) and as balena-cli's request library does (`qs`:
 * `scope[0]=…&scope[1]=…`): one list either way.
 */
function withScopeList(raw: unknown): unknown {
  if (!raw || typeof raw !== "object") return raw;
  const rest: Record<string, unknown> = {};
  const scopes: unknown[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (/^scope(\[\d{0,4}\])?$/.test(key)) scopes.push(...(Array.isArray(value) ? value : [value]));
    else rest[key] = value;
  }
  return scopes.length > 0 ? { ...rest, scope: scopes } : rest;
}

/** The token (Basic password or Bearer) behind a token request; no or bad credentials are a 401. */
async function callerOf(ctx: AppContext, request: FastifyRequest): Promise<Caller> {
  const challenge = { headers: { "www-authenticate": 'Basic realm="Flotilla registry token"' } };
  const token = credentialOf(request.headers.authorization);
  if (!token) {
    throw new FlotillaError(
      "not_logged_in",
      "Registry tokens need credentials: a device key, an API key or a session token as the password.",
      challenge,
    );
  }
  let caller: Caller;
  try {
    caller = await identify(ctx, token, () => tokenHashOf(request, token));
  } catch (error) {
    if (error instanceof FlotillaError && error.statusCode === 401) {
      throw new FlotillaError(error.code, error.message, challenge);
    }
    throw error;
  }
  // A session whose second factor is pending has not logged in yet.
  if (caller.session?.twoFactorRequired === true) throw new FlotillaError("two_factor_required");
  return caller;
}

function credentialOf(header: string | undefined): string | undefined {
  const [scheme, value] = schemeOf(header);
  if (scheme === "bearer") return value;
  return basicCredentials(header)?.password;
}

function basicCredentials(header: string | undefined): { username: string; password: string } | undefined {
  const [scheme, value] = schemeOf(header);
  if (scheme !== "basic" || !value) return undefined;
  const decoded = Buffer.from(value, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 && colon < decoded.length - 1
    ? { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
    : undefined;
}

function schemeOf(header: string | undefined): [string, string] | [] {
  const space = header?.indexOf(" ") ?? -1;
  if (!header || space <= 0) return [];
  const value = header.slice(space + 1).trim();
  return value ? [header.slice(0, space).toLowerCase(), value] : [];
}
