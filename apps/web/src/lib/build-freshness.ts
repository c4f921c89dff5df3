import { BUILD_FRESHNESS_INTERVAL_MS } from "@flotilla/domain";

/**
 * Notices a newer dashboard bundle (spec 1 §2.5, §7, §9): `/build-info.json` is re-fetched every
 * 600,000 ms; when its buildId differs from the one this bundle was built with, the "dashboard
 * version out of date" banner asks for a refresh.
 */

export const DEV_BUILD_ID = "dev";

export function isOutdated(currentBuildId: string, servedBuildId: unknown): boolean {
  return typeof servedBuildId === "string" && servedBuildId !== "" && servedBuildId !== currentBuildId;
}

export interface BuildFreshness {
  start(): void;
  stop(): void;
  checkNow(): Promise<void>;
  isOutdated(): boolean;
  subscribe(listener: () => void): () => void;
}

/** Reads `/build-info.json` from the dashboard origin, bypassing caches; undefined when unreadable. */
export async function fetchServedBuildId(fetchImpl: typeof fetch = (input, init) => fetch(input, init)) {
  try {
    const response = await fetchImpl("/build-info.json", { cache: "no-store", credentials: "same-origin" });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { buildId?: unknown };
    return typeof body.buildId === "string" ? body.buildId : undefined;
  } catch {
    return undefined;
  }
}

export function createBuildFreshness(options: {
  currentBuildId: string;
  fetchBuildId?: () => Promise<string | undefined>;
  intervalMs?: number;
}): BuildFreshness {
  const {
    currentBuildId,
    fetchBuildId = () => fetchServedBuildId(),
    intervalMs = BUILD_FRESHNESS_INTERVAL_MS,
  } = options;
  let outdated = false;
  let handle: ReturnType<typeof setInterval> | undefined;
  const listeners = new Set<() => void>();

  async function checkNow() {
    if (outdated) return;
    if (isOutdated(currentBuildId, await fetchBuildId())) {
      outdated = true;
      for (const listener of listeners) listener();
    }
  }

  return {
    start() {
      // A dev server rebuilds in place; only real builds are checked.
      if (handle !== undefined || currentBuildId === DEV_BUILD_ID) return;
      handle = setInterval(() => void checkNow(), intervalMs);
    },
    stop() {
      if (handle !== undefined) clearInterval(handle);
      handle = undefined;
    },
    checkNow,
    isOutdated: () => outdated,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
