/**
 * Deploy with a button (`/deploy`, spec 2 §2, §5, §7, §9): the query names a repository (or a
 * tarball) whose balena.yml contract the API reads; the user picks or creates a fleet; the
 * fleet's variables are set from the contract; the pending deploy is remembered for 1 day.
 */
export interface DeploySearch {
  tarballUrl?: string;
  repoUrl?: string;
  configUrl?: string;
  defaultDeviceType?: string;
}

export const DEPLOY_SEARCH_KEYS = ["tarballUrl", "repoUrl", "configUrl", "defaultDeviceType"] as const;

export function deploySearch(search: Record<string, unknown>): DeploySearch {
  const out: DeploySearch = {};
  for (const key of DEPLOY_SEARCH_KEYS) {
    const value = search[key];
    if (typeof value === "string" && value.trim()) out[key] = value.trim();
  }
  return out;
}

export interface NameValue {
  name: string;
  value: string;
}

export interface DeployContract {
  repoUrl: string;
  defaultBranch: string;
  contract: {
    name: string;
    type: string;
    description?: string;
    defaultDeviceType?: string;
    supportedDeviceTypes?: string[];
    applicationEnvironmentVariables: NameValue[];
    applicationConfigVariables: NameValue[];
  };
}

/** The balena.yml fetch gives up after 10 s (spec 2 §9). */
export const DEPLOY_CONFIG_TIMEOUT_MS = 10_000;
/** A saved deploy configuration expires after 1 day (spec 2 §9). */
export const PENDING_DEPLOY_TTL_MS = 24 * 60 * 60 * 1000;
export const PENDING_DEPLOY_KEY = "flotilla.pendingDeploy";

export interface PendingDeploy {
  fleetId: number;
  repoUrl?: string;
  tarballUrl?: string;
  savedAt: number;
}

export function savePendingDeploy(
  storage: Pick<Storage, "setItem">,
  deploy: Omit<PendingDeploy, "savedAt">,
  now = Date.now(),
) {
  storage.setItem(PENDING_DEPLOY_KEY, JSON.stringify({ ...deploy, savedAt: now }));
}

/** The pending deploy, or undefined when there is none, it is unreadable, or older than 1 day (then it is removed). */
export function readPendingDeploy(
  storage: Pick<Storage, "getItem" | "removeItem">,
  now = Date.now(),
): PendingDeploy | undefined {
  const raw = storage.getItem(PENDING_DEPLOY_KEY);
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw) as PendingDeploy;
    if (
      typeof parsed.savedAt === "number" &&
      now - parsed.savedAt < PENDING_DEPLOY_TTL_MS &&
      typeof parsed.fleetId === "number"
    )
      return parsed;
  } catch {
    // Unreadable: dropped below.
  }
  storage.removeItem(PENDING_DEPLOY_KEY);
  return undefined;
}

/** The device type a new fleet gets: the query's, else the contract's, else the first supported, else the default. */
export function deployDeviceType(
  search: DeploySearch,
  contract: DeployContract["contract"] | undefined,
  fallback: string,
): string {
  return search.defaultDeviceType ?? contract?.defaultDeviceType ?? contract?.supportedDeviceTypes?.[0] ?? fallback;
}

/** A fleet name from the contract's name: letters, digits, hyphens and underscores, starting with a letter or digit. */
export function fleetNameFromContract(name: string | undefined): string {
  return (name ?? "")
    .trim()
    .replace(/[^a-zA-Z0-9_-]+/g, "-")
    .replace(/^[-_]+|[-_]+$/g, "")
    .slice(0, 100);
}

/**
 * The archive a release is built from (balena-sdk `release.createFromUrl`, POST /v3/buildFromUrl):
 * the link's tarballUrl. A link that names only a repository gives none: its balena.yml sets
 * the fleet's variables, and the page says plainly that no release is built.
 */
export function deployArchiveUrl(search: DeploySearch): string | undefined {
  return search.tarballUrl;
}
