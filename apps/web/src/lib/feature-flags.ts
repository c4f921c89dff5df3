import { EXPERIMENT_FETCH_TIMEOUT_MS } from "@flotilla/domain";

/**
 * Experiments (feature flags), read once at boot from `GET {api}/config/v1/feature-flags` (no
 * token) with a 4000 ms timeout (spec 1 §9, spec 2 §9). A slow, failed or unreadable answer
 * gives the defaults — every flag off — and the start-up carries on: flags never block or fail
 * the boot.
 */

/** The flags the dashboard knows, all off by default. Unknown flags in the answer are ignored. */
export const DEFAULT_FEATURE_FLAGS = {
  /** Default of the "display apps" option (the user's own stored choice wins). */
  displayApps: false,
} as const;

export type FeatureFlags = { readonly [K in keyof typeof DEFAULT_FEATURE_FLAGS]: boolean };

export interface FeatureFlagsResult {
  flags: FeatureFlags;
  /** "server": the answer was used; otherwise why the defaults are in force. */
  source: "server" | "timeout" | "error";
}

/** Reads `{ flags: { name: true, … } }`; a flag is on only when the answer says `true`. */
export function parseFeatureFlags(value: unknown): FeatureFlags | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const flags = (value as { flags?: unknown }).flags;
  if (typeof flags !== "object" || flags === null || Array.isArray(flags)) return undefined;
  const on = flags as Record<string, unknown>;
  const result: Record<string, boolean> = {};
  for (const name of Object.keys(DEFAULT_FEATURE_FLAGS)) result[name] = on[name] === true;
  return result as FeatureFlags;
}

export interface FlagTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const browserTimers: FlagTimers = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Never rejects: on timeout (the request is aborted) or any failure, the defaults. */
export async function fetchFeatureFlags(
  apiUrl: string,
  options: { fetchImpl?: typeof fetch; timeoutMs?: number; timers?: FlagTimers } = {},
): Promise<FeatureFlagsResult> {
  const {
    fetchImpl = (input, init) => fetch(input, init),
    timeoutMs = EXPERIMENT_FETCH_TIMEOUT_MS,
    timers = browserTimers,
  } = options;
  const controller = new AbortController();
  let timer: unknown;
  const timedOut = new Promise<FeatureFlagsResult>((resolve) => {
    timer = timers.setTimeout(() => {
      resolve({ flags: DEFAULT_FEATURE_FLAGS, source: "timeout" });
      controller.abort();
    }, timeoutMs);
  });
  const fetched = (async (): Promise<FeatureFlagsResult> => {
    try {
      const response = await fetchImpl(`${apiUrl}/config/v1/feature-flags`, {
        cache: "no-store",
        credentials: "omit",
        signal: controller.signal,
      });
      if (!response.ok) return { flags: DEFAULT_FEATURE_FLAGS, source: "error" };
      const flags = parseFeatureFlags(await response.json());
      return flags ? { flags, source: "server" } : { flags: DEFAULT_FEATURE_FLAGS, source: "error" };
    } catch {
      return { flags: DEFAULT_FEATURE_FLAGS, source: "error" };
    }
  })();
  try {
    return await Promise.race([fetched, timedOut]);
  } finally {
    timers.clearTimeout(timer);
  }
}
