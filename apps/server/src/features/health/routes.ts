import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../context.ts";

export async function healthRoutes(app: FastifyInstance, { db, config }: AppContext) {
  // The dashboard's experiments (feature flags), read at boot with a 4 s timeout (spec 1 §9).
  app.get("/config/v1/feature-flags", { config: { public: true, rateLimit: false } }, async () => ({
    flags: Object.fromEntries(config.featureFlags.map((flag) => [flag, true])),
  }));

  // The dashboard's connectivity check (spec 1 §7): no token, plain "OK".
  app.get("/ping", { config: { public: true, rateLimit: false } }, async (_request, reply) => {
    reply.header("cache-control", "no-store").type("text/plain; charset=utf-8");
    return "OK";
  });

  // For load balancers: also proves the database answers.
  app.get("/health", { config: { public: true, rateLimit: false } }, async (_request, reply) => {
    await db.query("SELECT 1");
    reply.header("cache-control", "no-store").type("text/plain; charset=utf-8");
    return "OK";
  });
}
