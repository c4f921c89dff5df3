import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../context.ts";
import { requireUser } from "../../lib/authenticate.ts";
import { fetchAllowList } from "../../lib/outbound-fetch.ts";
import { loadDeployContract } from "./contract.ts";

/**
 * Deploy with button / from URL (spec 2 §4 "Deploy configuration", §8, §9):
 * `GET /deploy/v1/contract?repoUrl=https://github.com/{owner}/{repo}[.git]`, for signed-in users →
 * 200 `{repoUrl, defaultBranch, contract: {name, type, description?, defaultDeviceType?,
 * supportedDeviceTypes?, applicationEnvironmentVariables: [{name, value}], applicationConfigVariables: [{name, value}]}}`.
 * Errors (JSON `{error, message}`, code in X-Flotilla-Error-Code): 400 `deploy_url_required`,
 * 404 `deploy_repository_not_found`, 422 `deploy_contract_invalid`, 502 `deploy_config_load_failed`.
 */
export async function deployRoutes(app: FastifyInstance, { config }: AppContext) {
  const hosts = {
    apiUrl: config.repositoryApiUrl,
    rawUrl: config.repositoryRawUrl,
    allow: fetchAllowList(config.fetchAllow),
  };
  app.get("/deploy/v1/contract", async (request) => {
    requireUser(request);
    const { repoUrl } = (request.query ?? {}) as { repoUrl?: unknown };
    return loadDeployContract(repoUrl, hosts);
  });
}
