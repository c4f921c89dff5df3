import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppContext } from "../context.ts";
import { FlotillaError } from "../errors.ts";
import type { SessionClaims } from "../features/auth/sessions.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The caller's session; set on every route that is not marked `config: { public: true }`. */
    auth: SessionClaims | undefined;
  }
  interface FastifyContextConfig {
    /** Routes are authenticated unless they opt out with `public: true`. */
    public?: boolean;
  }
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const [scheme, token] = header.split(" ");
  return scheme?.toLowerCase() === "bearer" && token ? token : undefined;
}

/** Authentication is on for every API route and switched off per route, never the other way round. */
export function registerAuthentication(app: FastifyInstance, ctx: AppContext) {
  app.decorateRequest("auth", undefined);
  const authenticate = async (request: FastifyRequest) => {
    const token = bearerToken(request);
    if (!token) throw new FlotillaError("not_logged_in");
    request.auth = await ctx.tokens.verify(token);
  };
  // Added per route, after the rate limiter's own hook, so floods are refused before any token check.
  app.addHook("onRoute", (route) => {
    if (route.config?.public) return;
    const existing = route.onRequest ? [route.onRequest].flat() : [];
    route.onRequest = [...existing, authenticate];
  });
}

/** The session of an authenticated route (registerAuthentication guarantees it). */
export function requireAuth(request: FastifyRequest): SessionClaims {
  if (!request.auth) throw new FlotillaError("not_logged_in");
  return request.auth;
}
