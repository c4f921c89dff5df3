import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { deviceTypeJsons } from "../device-types/routes.ts";
import { configVarsAnswer } from "./config-var-schema.ts";
import { publicConfig } from "./public-config.ts";

/**
 * `GET /config`: balena-sdk's `config.getAll()`.
 * `GET /config/vars[?deviceType=slug]`: balena-sdk's `config.getConfigVarSchema(deviceType)`
 * (spec 2 §7): the variable name rules of this server and the configuration variables' schema for
 * the device type (an alias names its type). Public, like balena's: it holds no tenant data.
 */
export async function variableRoutes(app: FastifyInstance, ctx: AppContext) {
  const { db, config } = ctx;
  // balena-sdk `config.getAll()`: the public settings a client may show (no secrets here), with
  // balena's keys (features/variables/public-config.ts).
  app.get("/config", { config: { public: true } }, async (_request, reply) => {
    reply.header("cache-control", "public, max-age=300");
    return publicConfig(config, await deviceTypeJsons(ctx, undefined));
  });

  app.get("/config/vars", { config: { public: true } }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const requested = query.deviceType;
    if (requested !== undefined && (typeof requested !== "string" || requested === "")) {
      throw new FlotillaError("invalid_device_type", undefined, { params: { type: String(requested) } });
    }
    let slug: string | undefined;
    if (requested !== undefined) {
      const { rows } = await db.query<{ slug: string }>(
        `SELECT dt.slug FROM "device_type" dt WHERE dt.slug = $1
         UNION ALL SELECT dt.slug FROM "device_type_alias" a JOIN "device_type" dt ON dt.id = a.device_type
          WHERE a.is_referenced_by__alias = $1 LIMIT 1`,
        [requested],
      );
      slug = rows[0]?.slug;
      if (slug === undefined)
        throw new FlotillaError("invalid_device_type", undefined, { params: { type: requested } });
    }
    reply.header("cache-control", "public, max-age=300");
    return configVarsAnswer(config.variableRules, slug);
  });
}
