import { STATUS_PAGE_FIRST_CHECK_MS, STATUS_PAGE_INTERVAL_MS } from "@flotilla/domain";

/**
 * The deployment's status page (spec 1 §7, §9; spec 2 §7): when `/config.json` names one
 * (`statusPageUrl`, a statuspage.io-style summary JSON), the first check runs 3000 ms after the
 * app starts and the summary is re-fetched every 60 s, skipped while the tab is hidden (a check
 * skipped that way runs as soon as the tab is visible again). An indicator other than "none"
 * shows a banner with the description and the ongoing incidents. A summary that cannot be
 * fetched or read counts as "no news": no banner, nothing reported — the status page is a
 * third-party service and its outages are not the dashboard's.
 */

export type StatusIndicator = "none" | "minor" | "major" | "critical" | "maintenance";

const INDICATORS: readonly StatusIndicator[] = ["none", "minor", "major", "critical", "maintenance"];

export interface StatusIncident {
  name: string;
  /** investigating, identified, monitoring, … as the status page says. */
  status: string;
  /** The incident's own page (its shortlink), when the summary gives one. */
  url: string | undefined;
}

export interface StatusSummary {
  indicator: StatusIndicator;
  /** "Partial System Outage", "All Systems Operational", … (empty when the summary has none). */
  description: string;
  incidents: readonly StatusIncident[];
  /** The human-readable status page, when the summary names it (`page.url`). */
  pageUrl: string | undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const httpUrl = (value: unknown): string | undefined => {
  if (typeof value !== "string") return undefined;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
};

/** Incidents that are over (statuspage.io keeps them in some answers) are not shown. */
const FINISHED_INCIDENT = new Set(["resolved", "postmortem", "completed"]);

/** Reads a summary; undefined when it does not have the statuspage.io shape. */
export function parseStatusSummary(value: unknown): StatusSummary | undefined {
  if (!isRecord(value) || !isRecord(value.status)) return undefined;
  const indicator = value.status.indicator;
  if (typeof indicator !== "string" || !INDICATORS.includes(indicator as StatusIndicator)) return undefined;
  const incidents: StatusIncident[] = [];
  if (Array.isArray(value.incidents)) {
    for (const incident of value.incidents) {
      if (!isRecord(incident) || typeof incident.name !== "string" || incident.name.trim() === "") continue;
      const status = typeof incident.status === "string" ? incident.status : "";
      if (FINISHED_INCIDENT.has(status)) continue;
      incidents.push({ name: incident.name.trim(), status, url: httpUrl(incident.shortlink) });
    }
  }
  return {
    indicator: indicator as StatusIndicator,
    description: typeof value.status.description === "string" ? value.status.description.trim() : "",
    incidents,
    pageUrl: isRecord(value.page) ? httpUrl(value.page.url) : undefined,
  };
}

/**
 * The human-readable page behind a summary URL: statuspage.io serves the summary at
 * `{page}/api/v2/summary.json`; any other URL links to its origin.
 */
export function statusPageHomeUrl(summaryUrl: string): string {
  const url = new URL(summaryUrl);
  const api = url.pathname.indexOf("/api/v2/");
  return `${url.origin}${api > 0 ? url.pathname.slice(0, api) : ""}/`;
}

/** Summary answers slower than this count as failed. */
export const STATUS_PAGE_FETCH_TIMEOUT_MS = 10_000;

/** Fetches and reads the summary; undefined on any failure (network, HTTP error, bad JSON, bad shape). */
export async function fetchStatusSummary(
  summaryUrl: string,
  fetchImpl: typeof fetch = (input, init) => fetch(input, init),
): Promise<StatusSummary | undefined> {
  try {
    const response = await fetchImpl(summaryUrl, {
      cache: "no-store",
      credentials: "omit",
      referrerPolicy: "no-referrer",
      signal: AbortSignal.timeout(STATUS_PAGE_FETCH_TIMEOUT_MS),
    });
    if (!response.ok) return undefined;
    return parseStatusSummary(await response.json());
  } catch {
    return undefined;
  }
}

/** Whether a summary calls for the banner: anything but "none". */
export const hasDisruption = (summary: StatusSummary | undefined): summary is StatusSummary =>
  summary !== undefined && summary.indicator !== "none";

export interface StatusPageState {
  /** The latest summary; undefined before the first check and after a failed one. */
  readonly summary: StatusSummary | undefined;
  /** The user closed the banner for this very disruption (it comes back when the disruption changes). */
  readonly dismissed: boolean;
}

export interface StatusPageMonitor {
  /** Whether the deployment has a status page at all. */
  readonly configured: boolean;
  /** Where the header's "Service status" link leads (the summary's own page once known). */
  pageUrl(): string | undefined;
  start(): void;
  stop(): void;
  checkNow(): Promise<void>;
  /** A stable snapshot (a new object only on change), for useSyncExternalStore. */
  getState(): StatusPageState;
  subscribe(listener: () => void): () => void;
  /** Hide the banner until the indicator, description or incidents change. */
  dismiss(): void;
}

export interface StatusPageTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The tab's visibility (document.visibilityState), injectable for tests. */
export interface TabVisibility {
  isHidden(): boolean;
  /** Calls back whenever the visibility changes; returns the unsubscribe. */
  onChange(callback: () => void): () => void;
}

const browserTimers: StatusPageTimers = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export const documentVisibility: TabVisibility = {
  isHidden: () => globalThis.document?.visibilityState === "hidden",
  onChange(callback) {
    globalThis.document?.addEventListener("visibilitychange", callback);
    return () => globalThis.document?.removeEventListener("visibilitychange", callback);
  },
};

/** What identifies one disruption, so a dismissed banner returns when something changes. */
const disruptionKey = (summary: StatusSummary | undefined) =>
  hasDisruption(summary)
    ? JSON.stringify([summary.indicator, summary.description, summary.incidents.map((incident) => incident.name)])
    : "";

export function createStatusPageMonitor(options: {
  /** The summary URL from /config.json; null: no status page, the monitor does nothing. */
  summaryUrl: string | null;
  fetchSummary?: (summaryUrl: string) => Promise<StatusSummary | undefined>;
  timers?: StatusPageTimers;
  visibility?: TabVisibility;
  firstCheckMs?: number;
  intervalMs?: number;
}): StatusPageMonitor {
  const {
    summaryUrl,
    fetchSummary = (url) => fetchStatusSummary(url),
    timers = browserTimers,
    visibility = documentVisibility,
    firstCheckMs = STATUS_PAGE_FIRST_CHECK_MS,
    intervalMs = STATUS_PAGE_INTERVAL_MS,
  } = options;
  let state: StatusPageState = { summary: undefined, dismissed: false };
  let dismissedKey = "";
  let timer: unknown;
  let running = false;
  let checking: Promise<void> | undefined;
  /** A scheduled check fell in a hidden period: run it when the tab shows again. */
  let missed = false;
  let stopWatchingVisibility: (() => void) | undefined;
  const listeners = new Set<() => void>();

  const setState = (summary: StatusSummary | undefined) => {
    const key = disruptionKey(summary);
    const next = { summary, dismissed: key !== "" && key === dismissedKey };
    if (JSON.stringify(next) === JSON.stringify(state)) return;
    state = next;
    for (const listener of listeners) listener();
  };

  const schedule = (ms: number) => {
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = timers.setTimeout(() => {
      timer = undefined;
      tick();
    }, ms);
  };

  function tick() {
    if (!running) return;
    schedule(intervalMs);
    if (visibility.isHidden()) {
      missed = true;
      return;
    }
    void checkNow();
  }

  function checkNow(): Promise<void> {
    if (summaryUrl === null) return Promise.resolve();
    missed = false;
    checking ??= (async () => {
      let summary: StatusSummary | undefined;
      try {
        summary = await fetchSummary(summaryUrl);
      } catch {
        summary = undefined;
      }
      setState(summary);
    })().finally(() => {
      checking = undefined;
    });
    return checking;
  }

  return {
    configured: summaryUrl !== null,
    pageUrl: () => (summaryUrl === null ? undefined : (state.summary?.pageUrl ?? statusPageHomeUrl(summaryUrl))),
    start() {
      if (running || summaryUrl === null) return;
      running = true;
      stopWatchingVisibility = visibility.onChange(() => {
        if (!running || !missed || visibility.isHidden()) return;
        schedule(intervalMs);
        void checkNow();
      });
      schedule(firstCheckMs);
    },
    stop() {
      running = false;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      stopWatchingVisibility?.();
      stopWatchingVisibility = undefined;
    },
    checkNow,
    getState: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    dismiss() {
      dismissedKey = disruptionKey(state.summary);
      setState(state.summary);
    },
  };
}
