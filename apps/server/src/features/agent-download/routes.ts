import fs from "node:fs";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../context.ts";
import { FlotillaError } from "../../errors.ts";
import { agentPackage, nodePtyVersion } from "./package.ts";

const INSTALLER = fs.readFileSync(new URL("./install.sh", import.meta.url), "utf8");

/** The installer with this server's API URL (quotes escaped: it sits in a single-quoted string). */
export const installScript = (apiUrl: string) =>
  INSTALLER.replaceAll("@API_URL@", apiUrl.replaceAll("'", "%27")).replaceAll("@NODE_PTY_VERSION@", nodePtyVersion());

/**
 * A device installs the agent from its server (`curl -fsSL {api}/install.sh | sh -s -- --config
 * config.json`): public routes, since the installer runs before the device has any key, and the
 * agent's code is no secret.
 */
export async function agentDownloadRoutes(app: FastifyInstance, ctx: AppContext) {
  const getPackage = () => servedAgentPackage(app);

  app.get("/install.sh", { config: { public: true } }, async (_request, reply) => {
    reply.type("text/x-shellscript; charset=utf-8").header("cache-control", "no-cache");
    return installScript(ctx.config.apiUrl);
  });

  app.get("/download/agent.tgz", { config: { public: true } }, async (request, reply) => {
    const { tgz, sha256, version } = await getPackage();
    const etag = `"${sha256}"`;
    reply.header("etag", etag).header("cache-control", "no-cache");
    if (request.headers["if-none-match"] === etag) return reply.code(304).send();
    return reply
      .type("application/gzip")
      .header("content-disposition", `attachment; filename="flotilla-agent-${version}.tgz"`)
      .send(tgz);
  });
}

/** The agent package for a response: a bundling failure is logged for the operator and answered 503. */
export function servedAgentPackage(app: Pick<FastifyInstance, "log">) {
  return agentPackage().catch((error: unknown) => {
    app.log.error({ err: error }, "cannot build the agent package");
    throw new FlotillaError("service_unavailable", "The agent package cannot be built on this server.");
  });
}
