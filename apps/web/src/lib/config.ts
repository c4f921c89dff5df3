/** The runtime configuration the server hands the dashboard at `/config.json` (one build, any deployment). */
export interface RuntimeConfig {
  apiUrl: string;
  publicUrl: string;
  appVersion: string;
  /** Base domain of device public URLs (spec 2 §2); null when the deployment has none. */
  deviceUrlsBaseDomain: string | null;
  /** Host of the device-actions service (spec 2 §7); null when not configured. */
  deviceActionsHost: string | null;
  /** A statuspage.io-style summary JSON (spec 1 §7, §9); null when the deployment has no status page. */
  statusPageUrl: string | null;
  /** The support drawer's community forum and feature-request links (server FLOTILLA_SUPPORT_FORUM_URL, …). */
  supportForumUrl: string;
  featureRequestsUrl: string;
  /** The support drawer's docs search: an http(s) URL template with `{query}`; null: no search box. */
  docsSearchUrl: string | null;
  /** The device map's tile URL template (server FLOTILLA_MAP_TILES); null: no tiles, markers only. */
  mapTilesUrl: string | null;
  /** Where "Contact sales" buttons lead (server FLOTILLA_SALES_URL): an http(s) or mailto: address. */
  salesUrl: string;
  /** Stripe's publishable key when Stripe takes the payments; null: the built-in test provider. */
  stripePublishableKey: string | null;
  /** The SSH gateway for git pushes (server FLOTILLA_SSH_HOST, FLOTILLA_SSH_PORT); null: the server has none. */
  sshGateway: { host: string; port: number } | null;
}

/** The community links of a server that does not say (balena's forums, as the header's help links were). */
export const DEFAULT_SUPPORT_FORUM_URL = "https://forums.balena.io/";
export const DEFAULT_FEATURE_REQUESTS_URL = "https://forums.balena.io/c/product-support/feature-requests/";

/** The tiles of a server that does not say (older than FLOTILLA_MAP_TILES): OpenStreetMap's, as before. */
export const DEFAULT_MAP_TILES_URL = "https://tile.openstreetmap.org/{z}/{x}/{y}.png";

/** A failed `/config.json` load, carrying the HTTP status so the failure can say what happened. */
export class RuntimeConfigError extends Error {
  readonly statusCode: number | undefined;
  constructor(message: string, statusCode?: number) {
    super(message);
    this.name = "RuntimeConfigError";
    this.statusCode = statusCode;
  }
}

const isHttpUrl = (value: unknown): value is string => {
  if (typeof value !== "string") return false;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
};

/** A tile template (http(s) with {z}/{x}/{y}); null means none; absent means the old default. */
function mapTilesUrl(value: unknown): string | null {
  if (value === undefined) return DEFAULT_MAP_TILES_URL;
  if (typeof value !== "string" || !["{z}", "{x}", "{y}"].every((part) => value.includes(part))) return null;
  return /^https?:\/\//.test(value) ? value : null;
}

/** An http(s) or mailto: link; anything else: a mail with no address filled in. */
const salesUrl = (value: unknown) =>
  typeof value === "string" && (isHttpUrl(value) || /^mailto:\S*$/.test(value)) ? value : "mailto:";

const optionalString = (value: unknown) => (typeof value === "string" && value !== "" ? value : null);

/** The SSH gateway, when the server names both its host (a name or an address) and its port. */
function sshGateway(host: unknown, port: unknown): RuntimeConfig["sshGateway"] {
  if (typeof host !== "string" || !/^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/.test(host)) return null;
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) return null;
  return { host, port };
}

export function parseRuntimeConfig(value: unknown): RuntimeConfig {
  if (typeof value !== "object" || value === null) throw new RuntimeConfigError("/config.json is not a JSON object");
  const raw = value as Record<string, unknown>;
  if (!isHttpUrl(raw.apiUrl)) throw new RuntimeConfigError("/config.json has no valid apiUrl");
  return {
    apiUrl: raw.apiUrl.replace(/\/+$/, ""),
    publicUrl: isHttpUrl(raw.publicUrl) ? raw.publicUrl.replace(/\/+$/, "") : (globalThis.location?.origin ?? ""),
    appVersion: typeof raw.appVersion === "string" ? raw.appVersion : "",
    deviceUrlsBaseDomain: optionalString(raw.deviceUrlsBaseDomain),
    deviceActionsHost: optionalString(raw.deviceActionsHost),
    statusPageUrl: isHttpUrl(raw.statusPageUrl) ? raw.statusPageUrl : null,
    supportForumUrl: isHttpUrl(raw.supportForumUrl) ? raw.supportForumUrl : DEFAULT_SUPPORT_FORUM_URL,
    featureRequestsUrl: isHttpUrl(raw.featureRequestsUrl) ? raw.featureRequestsUrl : DEFAULT_FEATURE_REQUESTS_URL,
    docsSearchUrl: isHttpUrl(raw.docsSearchUrl) && raw.docsSearchUrl.includes("{query}") ? raw.docsSearchUrl : null,
    mapTilesUrl: mapTilesUrl(raw.mapTilesUrl),
    salesUrl: salesUrl(raw.salesUrl),
    stripePublishableKey:
      typeof raw.stripePublishableKey === "string" && /^pk_(test|live)_\w+$/.test(raw.stripePublishableKey)
        ? raw.stripePublishableKey
        : null,
    sshGateway: sshGateway(raw.sshHost, raw.sshPort),
  };
}

export async function loadRuntimeConfig(
  fetchImpl: typeof fetch = (input, init) => fetch(input, init),
): Promise<RuntimeConfig> {
  const response = await fetchImpl("/config.json", { cache: "no-store", credentials: "same-origin" });
  if (!response.ok) {
    throw new RuntimeConfigError(
      `/config.json answered ${response.status} ${response.statusText}`.trim(),
      response.status,
    );
  }
  return parseRuntimeConfig(await response.json());
}
