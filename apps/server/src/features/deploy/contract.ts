import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { FlotillaError } from "../../errors.ts";
import { type FetchAllowList, OutboundFetchError, outboundFetch, readBody } from "../../lib/outbound-fetch.ts";

/** What `GET /deploy/v1/contract` answers (spec 2 §4 "Deploy configuration", §8 texts). */
export interface DeployContract {
  repoUrl: string;
  defaultBranch: string;
  contract: {
    name: string;
    type: string;
    description?: string;
    defaultDeviceType?: string;
    supportedDeviceTypes?: string[];
    applicationEnvironmentVariables: { name: string; value: string }[];
    applicationConfigVariables: { name: string; value: string }[];
  };
}

/** A balena.yml larger than this is refused as invalid. */
export const CONTRACT_MAX_BYTES = 256 * 1024;
/** Spec 2 §9: "A balena.yml config file is fetched as raw text with a 10 s timeout." */
export const CONTRACT_FETCH_TIMEOUT_MS = 10_000;

const segment = /^[A-Za-z0-9_.-]{1,100}$/;

/** owner and repo from `https://github.com/{owner}/{repo}[.git][/...]`; 400 when it is not one. */
export function parseRepositoryUrl(raw: unknown): { owner: string; repo: string } {
  if (typeof raw !== "string" || raw.trim() === "") throw new FlotillaError("deploy_url_required");
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new FlotillaError("deploy_url_required", `Not a repository URL: ${raw.slice(0, 200)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new FlotillaError("deploy_url_required", `Not a repository URL: ${raw.slice(0, 200)}`);
  }
  const [owner, rawRepo] = url.pathname.split("/").filter(Boolean);
  const repo = rawRepo?.replace(/\.git$/, "");
  if (!owner || !repo || !segment.test(owner) || !segment.test(repo) || repo === "." || repo === "..") {
    throw new FlotillaError(
      "deploy_url_required",
      `The repository URL must name an owner and a repository (https://github.com/{owner}/{repo}): ${raw.slice(0, 200)}`,
    );
  }
  return { owner, repo };
}

const scalar = z.union([z.string(), z.number(), z.boolean()]).transform((v) => String(v));
/** balena.yml lists variables as one-key maps: `- GREETING: hello`. */
const variables = z
  .array(z.record(z.string().min(1), scalar.nullable()))
  .nullish()
  .transform((list) =>
    (list ?? []).flatMap((entry) => Object.entries(entry).map(([name, value]) => ({ name, value: value ?? "" }))),
  );

const balenaYml = z.object({
  name: z.string().trim().min(1),
  // Decision: a contract without `type` is an application, the only kind deployed from a URL.
  type: z.string().min(1).default("sw.application"),
  description: z.string().optional(),
  data: z
    .object({
      defaultDeviceType: z.string().min(1).optional(),
      supportedDeviceTypes: z.array(z.string().min(1)).optional(),
      applicationEnvironmentVariables: variables,
      applicationConfigVariables: variables,
    })
    .nullish(),
});

/** Parses and normalises a balena.yml text; 422 when it is not YAML or not a contract. */
export function parseContract(text: string): DeployContract["contract"] {
  let document: unknown;
  try {
    document = parseYaml(text, { maxAliasCount: 100 });
  } catch {
    throw new FlotillaError("deploy_contract_invalid");
  }
  const parsed = balenaYml.safeParse(document);
  if (!parsed.success) throw new FlotillaError("deploy_contract_invalid");
  const { name, type, description, data } = parsed.data;
  return {
    name,
    type,
    ...(description !== undefined && { description }),
    ...(data?.defaultDeviceType !== undefined && { defaultDeviceType: data.defaultDeviceType }),
    ...(data?.supportedDeviceTypes !== undefined && { supportedDeviceTypes: data.supportedDeviceTypes }),
    applicationEnvironmentVariables: data?.applicationEnvironmentVariables ?? [],
    applicationConfigVariables: data?.applicationConfigVariables ?? [],
  };
}

const loadFailed = (cause: unknown) => new FlotillaError("deploy_config_load_failed", undefined, { cause });

/**
 * The repository host is the operator's (FLOTILLA_REPOSITORY_*_URL), not the user's: the pasted
 * URL only gives owner and repository names. So the configured hosts are trusted as configured,
 * while a redirect to any other host goes through the outbound checks like a user's URL.
 */
export type RepositoryHosts = { apiUrl: string; rawUrl: string; allow: FetchAllowList };

async function get(url: string, accept: string, hosts: RepositoryHosts, timeoutMs: number, maxBytes: number) {
  try {
    const response = await outboundFetch(url, {
      allow: hosts.allow,
      trustedOrigins: [new URL(hosts.apiUrl).origin, new URL(hosts.rawUrl).origin],
      timeoutMs,
      maxBytes,
      accept,
    });
    if (response.status < 200 || response.status > 299) {
      response.body.destroy();
      return { status: response.status, text: null };
    }
    return { status: response.status, text: (await readBody(response)).toString("utf8") };
  } catch (error) {
    if (error instanceof OutboundFetchError && /^body larger|^body of/.test(error.detail)) {
      return { status: 200, text: null, tooLarge: true };
    }
    throw loadFailed(error);
  }
}

/**
 * Loads the deploy contract of a repository: the default branch from the host's API
 * (`GET {apiUrl}/repos/{owner}/{repo}` → `default_branch`, no token), then
 * `{rawUrl}/{owner}/{repo}/{branch}/balena.yml`, both within one 10 s budget.
 */
export async function loadDeployContract(
  repoUrl: unknown,
  hosts: RepositoryHosts,
  timeoutMs = CONTRACT_FETCH_TIMEOUT_MS,
): Promise<DeployContract> {
  const { owner, repo } = parseRepositoryUrl(repoUrl);
  const url = String(repoUrl).trim();
  const deadline = Date.now() + timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  const notFound = () => new FlotillaError("deploy_repository_not_found", undefined, { params: { url } });
  const path = `${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;

  const api = await get(`${hosts.apiUrl}/repos/${path}`, "application/vnd.github+json", hosts, left(), 1024 * 1024);
  if (api.status === 404) throw notFound();
  if (api.text === null) throw loadFailed(new Error(`repository API answered ${api.status}`));
  let defaultBranch: unknown;
  try {
    defaultBranch = (JSON.parse(api.text) as { default_branch?: unknown }).default_branch;
  } catch (error) {
    throw loadFailed(error);
  }
  if (typeof defaultBranch !== "string" || defaultBranch === "") {
    throw loadFailed(new Error("repository API answered no default_branch"));
  }

  const branch = defaultBranch.split("/").map(encodeURIComponent).join("/");
  const raw = await get(
    `${hosts.rawUrl}/${path}/${branch}/balena.yml`,
    "text/plain",
    hosts,
    left(),
    CONTRACT_MAX_BYTES,
  );
  if (raw.status === 404) throw notFound();
  if ("tooLarge" in raw) throw new FlotillaError("deploy_contract_invalid");
  if (raw.text === null) throw loadFailed(new Error(`raw file host answered ${raw.status}`));
  return { repoUrl: url, defaultBranch, contract: parseContract(raw.text) };
}
