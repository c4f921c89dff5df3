import { eq } from "drizzle-orm";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppContext } from "../context.ts";
import { user } from "../db/schema/index.ts";
import { FlotillaError } from "../errors.ts";
import { hashApiKey } from "../features/api-keys/service.ts";
import type { SessionClaims } from "../features/auth/sessions.ts";
import { globalRolesOf } from "../features/users/service.ts";
import { delegatedRefusal, isDelegated, isRefusedToDelegated, sensitiveActionError } from "./delegation.ts";

/** Who is calling: an actor (user, fleet or device), through a session token or an API key. */
export type Caller = {
  actor: number;
  /** The user behind the call (a session, or a personal API key). */
  user: { id: number; username: string; email: string | null } | undefined;
  /** Global roles such as `balena_admin`, `support_agent`. */
  globalRoles: string[];
  session: SessionClaims | undefined;
  apiKey: { id: number; role: string } | undefined;
};

declare module "fastify" {
  interface FastifyRequest {
    /** The caller; set on every route that is not marked `config: { public: true }`. */
    auth: Caller | undefined;
  }
  interface FastifyContextConfig {
    /** Routes are authenticated unless they opt out with `public: true`. */
    public?: boolean;
    /** Also answers without a token (`request.auth` unset); a token sent is still checked. */
    guest?: boolean;
  }
}

/** Session-token permissions that stand for global roles (spec 1 §3). */
const ROLE_OF_PERMISSION: Record<string, string> = { "admin.home": "balena_admin", "support.home": "support_agent" };

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const [scheme, token] = header.split(" ");
  return scheme?.toLowerCase() === "bearer" && token ? token : undefined;
}

/** balena-sdk's rule: a token that looks like a JWT is a session token, anything else an API key. */
const looksLikeJwt = (token: string) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);

/**
 * The hash of the request's bearer token, computed once per request: the rate limiter keys device
 * calls by it and the device-key cache looks keys up by it (the report path's hot spot).
 */
const tokenHashes = new WeakMap<FastifyRequest, string>();
export function tokenHashOf(request: FastifyRequest, token: string): string {
  let hash = tokenHashes.get(request);
  if (hash === undefined) {
    hash = hashApiKey(token);
    tokenHashes.set(request, hash);
  }
  return hash;
}

/** `hashOf` is only called for API keys: a session token (JWT) needs no hash. */
export async function identify(ctx: AppContext, token: string, hashOf = () => hashApiKey(token)): Promise<Caller> {
  if (looksLikeJwt(token)) {
    const claims = await ctx.tokens.verify(token);
    return {
      actor: claims.actor,
      user: { id: claims.id, username: claims.username, email: claims.email },
      globalRoles: claims.permissions.flatMap((p) => ROLE_OF_PERMISSION[p] ?? []),
      session: claims,
      apiKey: undefined,
    };
  }
  const cache = ctx.devices.deviceKeys;
  // Held by hash: the process keeps no device key in the clear.
  const hash = hashOf();
  const cached = cache.get(hash);
  if (cached && cached.until > Date.now()) return cached.caller;
  const unknown = ctx.devices.unknownKeys;
  const until = unknown.get(hash);
  if (until !== undefined && until > Date.now()) throw new FlotillaError("unauthorized", "Invalid API key.");
  const key = await ctx.devices.apiKeyByHash(hash);
  if (!key) {
    unknown.delete(hash);
    unknown.set(hash, Date.now() + UNKNOWN_KEY_CACHE_MS);
    if (unknown.size > UNKNOWN_KEY_CACHE_SIZE) unknown.delete(unknown.keys().next().value as string);
    throw new FlotillaError("unauthorized", "Invalid API key.");
  }
  if (key.role !== "user") {
    const caller: Caller = {
      actor: key.is_of__actor,
      user: undefined,
      globalRoles: [],
      session: undefined,
      apiKey: { id: key.id, role: key.role },
    };
    if (key.role === "device-api-key") {
      if (cache.size >= DEVICE_KEY_CACHE_SIZE) cache.clear();
      const expires = key.expiry_date ? new Date(key.expiry_date).getTime() : Number.POSITIVE_INFINITY;
      const trustedUntil = Math.min(Date.now() + DEVICE_KEY_CACHE_MS, expires);
      cache.set(hash, { caller, until: trustedUntil });
      const verified = ctx.devices.verifiedKeys;
      verified.delete(hash);
      verified.set(hash, trustedUntil);
      if (verified.size > DEVICE_KEY_CACHE_SIZE) verified.delete(verified.keys().next().value as string);
    }
    return caller;
  }
  const [owner] = await ctx.db.orm
    .select({ id: user.id, username: user.username, email: user.email })
    .from(user)
    .where(eq(user.actor, key.is_of__actor));
  return {
    actor: key.is_of__actor,
    user: owner,
    globalRoles: owner ? await globalRolesOf(ctx.db.orm, owner.id) : [],
    session: undefined,
    apiKey: { id: key.id, role: key.role },
  };
}

/**
 * Device keys are checked on every poll, report and log stream (the hot path, DESIGN §8): a
 * checked device key is trusted until it expires or for 10 minutes, and every instance forgets
 * them all when an API key changes or a device is deleted (ctx.devices.dropDeviceKeys).
 */
const DEVICE_KEY_CACHE_MS = 10 * 60_000;
const DEVICE_KEY_CACHE_SIZE = 50_000;
/** Unknown tokens are answered from memory for a minute (a flood of one costs no key look-up). */
const UNKNOWN_KEY_CACHE_MS = 60_000;
const UNKNOWN_KEY_CACHE_SIZE = 10_000;

/** Is this token a device key verified recently (so its calls may have their own rate limit)? */
export function isKnownDeviceKey(ctx: AppContext, request: FastifyRequest, token: string): boolean {
  const until = ctx.devices.verifiedKeys.get(tokenHashOf(request, token));
  return until !== undefined && until > Date.now();
}

/**
 * What a token whose second factor is still pending may call (spec 1 §4: authenticated only when
 * two-factor is disabled or passed): complete the second factor, say who it is, or log out.
 */
const TWO_FACTOR_PENDING_ROUTES = new Set([
  "/auth/totp/verify",
  "/auth/v1/2fa-recover/verify",
  "/actor/v1/whoami",
  "/logout",
  "/user/v1/refresh-token",
]);

/**
 * The caller a token stands for on this request, with the rules every authenticated route has: a
 * pending second factor reaches only its own routes, a delegated token never manages credentials.
 * The authentication hook uses it for the bearer header; a route that takes its token elsewhere
 * (balena's dashboard posts the OS download form with `_token`) calls it itself.
 */
export async function callerOf(ctx: AppContext, request: FastifyRequest, token: string): Promise<Caller> {
  const caller = await identify(ctx, token, () => tokenHashOf(request, token));
  if (caller.session?.twoFactorRequired === true) {
    const route = request.routeOptions.url ?? "";
    // The SDK's hourly refresh keeps the pending state; re-authentication does not pass 2FA either.
    const allowed =
      TWO_FACTOR_PENDING_ROUTES.has(route) && !(route === "/user/v1/refresh-token" && request.method !== "GET");
    if (!allowed) throw new FlotillaError("two_factor_required");
  }
  // An OAuth application's token never manages credentials (lib/delegation.ts).
  if (isDelegated(caller) && isRefusedToDelegated(request.method, request.routeOptions.url ?? "")) {
    throw delegatedRefusal();
  }
  return caller;
}

/** Authentication is on for every API route and switched off per route, never the other way round. */
export function registerAuthentication(app: FastifyInstance, ctx: AppContext) {
  app.decorateRequest("auth", undefined);
  const authenticate = async (request: FastifyRequest) => {
    const token = bearerToken(request);
    if (!token && request.routeOptions.config.guest && request.headers.authorization === undefined) return;
    if (!token) throw new FlotillaError("not_logged_in");
    request.auth = await callerOf(ctx, request, token);
  };
  // Added per route, after the rate limiter's own hook, so floods are refused before any token check.
  app.addHook("onRoute", (route) => {
    if (route.config?.public) return;
    const existing = route.onRequest ? [route.onRequest].flat() : [];
    route.onRequest = [...existing, authenticate];
  });
}

/** The caller of an authenticated route (registerAuthentication guarantees it). */
export function requireAuth(request: FastifyRequest): Caller {
  if (!request.auth) throw new FlotillaError("not_logged_in");
  return request.auth;
}

/** The user of an authenticated route; fleets and devices are refused. */
export function requireUser(request: FastifyRequest): NonNullable<Caller["user"]> & { caller: Caller } {
  const caller = requireAuth(request);
  if (!caller.user) throw new FlotillaError("forbidden", "This needs a user's session or personal API key.");
  return { ...caller.user, caller };
}

/** The session of a session-token route (refresh, logout). */
export function requireSession(request: FastifyRequest): SessionClaims {
  const caller = requireAuth(request);
  if (!caller.session) throw new FlotillaError("forbidden", "This needs a session token, not an API key.");
  return caller.session;
}

/**
 * The session of a sensitive action: 403 `auth_expired` unless authenticated in the last 20
 * minutes; 403 `delegated_token_refused` for an OAuth application's token, whatever its age.
 */
export function requireFreshAuth(request: FastifyRequest): SessionClaims {
  const caller = requireAuth(request);
  const error = sensitiveActionError({ authTime: caller.session?.authTime, delegated: isDelegated(caller) });
  if (error || !caller.session) throw error ?? new FlotillaError("auth_expired");
  return caller.session;
}
