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
}

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

const optionalString = (value: unknown) => (typeof value === "string" && value !== "" ? value : null);

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
