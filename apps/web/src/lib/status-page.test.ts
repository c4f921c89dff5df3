import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createStatusPageMonitor,
  fetchStatusSummary,
  hasDisruption,
  parseStatusSummary,
  type StatusSummary,
  statusPageHomeUrl,
  type TabVisibility,
} from "./status-page.ts";

const SUMMARY_URL = "https://status.example.com/api/v2/summary.json";

const majorOutage = {
  page: { id: "x", name: "Example", url: "https://status.example.com" },
  status: { indicator: "major", description: "Partial System Outage" },
  incidents: [
    {
      name: "Device logs delayed",
      status: "investigating",
      shortlink: "https://stspg.io/abc",
      incident_updates: [{ body: "We are looking into it." }],
    },
    { name: "Old outage", status: "resolved" },
    { name: "  ", status: "investigating" },
    { name: "Builds queued", status: "identified" },
  ],
};

const allGood = { status: { indicator: "none", description: "All Systems Operational" }, incidents: [] };

describe("parseStatusSummary", () => {
  it("reads the indicator, description, ongoing incidents and the page URL", () => {
    expect(parseStatusSummary(majorOutage)).toEqual({
      indicator: "major",
      description: "Partial System Outage",
      incidents: [
        { name: "Device logs delayed", status: "investigating", url: "https://stspg.io/abc" },
        { name: "Builds queued", status: "identified", url: undefined },
      ],
      pageUrl: "https://status.example.com/",
    });
  });

  it("asks for a banner only when the indicator is not none", () => {
    expect(hasDisruption(parseStatusSummary(majorOutage))).toBe(true);
    expect(hasDisruption(parseStatusSummary(allGood))).toBe(false);
    expect(hasDisruption(undefined)).toBe(false);
  });

  it("rejects answers without a known indicator", () => {
    for (const bad of [null, "major", [], {}, { status: {} }, { status: { indicator: "purple" } }, { status: 3 }]) {
      expect(parseStatusSummary(bad)).toBeUndefined();
    }
  });

  it("keeps only http(s) links", () => {
    const summary = parseStatusSummary({
      status: { indicator: "minor" },
      incidents: [{ name: "x", status: "monitoring", shortlink: "javascript:alert(1)" }],
      page: { url: "data:text/html,hi" },
    });
    expect(summary?.incidents[0]?.url).toBeUndefined();
    expect(summary?.pageUrl).toBeUndefined();
    expect(summary?.description).toBe("");
  });
});

describe("statusPageHomeUrl", () => {
  it("strips statuspage.io's API path, or links to the origin", () => {
    expect(statusPageHomeUrl(SUMMARY_URL)).toBe("https://status.example.com/");
    expect(statusPageHomeUrl("https://example.com/status/api/v2/summary.json")).toBe("https://example.com/status/");
    expect(statusPageHomeUrl("http://127.0.0.1:9000/summary.json")).toBe("http://127.0.0.1:9000/");
  });
});

describe("fetchStatusSummary", () => {
  it("fetches the summary without credentials or cache", async () => {
    const fetchImpl = vi.fn(async (_input: RequestInfo | URL, _init?: RequestInit) => Response.json(majorOutage));
    const summary = await fetchStatusSummary(SUMMARY_URL, fetchImpl);
    expect(summary?.indicator).toBe("major");
    expect(fetchImpl.mock.calls[0]?.[0]).toBe(SUMMARY_URL);
    expect(fetchImpl.mock.calls[0]?.[1]).toMatchObject({ cache: "no-store", credentials: "omit" });
  });

  it("gives undefined for bad JSON, HTTP errors, network failures and wrong shapes — never throws", async () => {
    const answers: Array<() => Promise<Response>> = [
      async () => new Response("<html>not json</html>", { headers: { "content-type": "application/json" } }),
      async () => new Response("down", { status: 503 }),
      async () => {
        throw new TypeError("Failed to fetch");
      },
      async () => Response.json({ status: "ok" }),
    ];
    for (const answer of answers) {
      await expect(fetchStatusSummary(SUMMARY_URL, answer)).resolves.toBeUndefined();
    }
  });
});

describe("createStatusPageMonitor", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** A tab whose visibility the test switches. */
  function fakeVisibility(): TabVisibility & { set(hidden: boolean): void } {
    let hidden = false;
    const callbacks = new Set<() => void>();
    return {
      isHidden: () => hidden,
      onChange(callback) {
        callbacks.add(callback);
        return () => callbacks.delete(callback);
      },
      set(next) {
        hidden = next;
        for (const callback of callbacks) callback();
      },
    };
  }

  function scripted(answers: Array<StatusSummary | undefined | Error>) {
    const calls: number[] = [];
    const fetchSummary = vi.fn(async (_url: string) => {
      calls.push(Date.now());
      const answer = answers.length > 1 ? answers.shift() : answers[0];
      if (answer instanceof Error) throw answer;
      return answer;
    });
    return { fetchSummary, calls };
  }

  const major = parseStatusSummary(majorOutage);
  const none = parseStatusSummary(allGood);

  it("checks first 3000 ms after start, then every 60 s", async () => {
    const start = Date.now();
    const { fetchSummary, calls } = scripted([none]);
    const monitor = createStatusPageMonitor({ summaryUrl: SUMMARY_URL, fetchSummary, visibility: fakeVisibility() });
    monitor.start();
    await vi.advanceTimersByTimeAsync(2999);
    expect(fetchSummary).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(fetchSummary).toHaveBeenCalledWith(SUMMARY_URL);
    await vi.advanceTimersByTimeAsync(180_000);
    expect(calls.map((at) => at - start)).toEqual([3000, 63_000, 123_000, 183_000]);
    monitor.stop();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(fetchSummary).toHaveBeenCalledTimes(4);
  });

  it("skips checks while the tab is hidden and catches up when it shows again", async () => {
    const start = Date.now();
    const visibility = fakeVisibility();
    const { fetchSummary, calls } = scripted([none]);
    const monitor = createStatusPageMonitor({ summaryUrl: SUMMARY_URL, fetchSummary, visibility });
    monitor.start();
    await vi.advanceTimersByTimeAsync(3000);
    visibility.set(true);
    await vi.advanceTimersByTimeAsync(180_000);
    expect(calls.map((at) => at - start)).toEqual([3000]);
    // Shown again: the missed check runs at once, then every 60 s from there.
    visibility.set(false);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls.map((at) => at - start)).toEqual([3000, 183_000, 243_000]);
    monitor.stop();
  });

  it("holds the summary for the banner; a failed check leaves no banner and does not stop the schedule", async () => {
    const visibility = fakeVisibility();
    const { fetchSummary } = scripted([major, undefined, new Error("boom"), major]);
    const monitor = createStatusPageMonitor({ summaryUrl: SUMMARY_URL, fetchSummary, visibility });
    const changes: Array<StatusSummary | undefined> = [];
    monitor.subscribe(() => changes.push(monitor.getState().summary));
    monitor.start();
    expect(monitor.getState().summary).toBeUndefined();
    await vi.advanceTimersByTimeAsync(3000);
    expect(hasDisruption(monitor.getState().summary)).toBe(true);
    expect(monitor.getState().summary?.incidents.map((incident) => incident.name)).toEqual([
      "Device logs delayed",
      "Builds queued",
    ]);
    expect(monitor.pageUrl()).toBe("https://status.example.com/");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(monitor.getState().summary).toBeUndefined();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(monitor.getState().summary).toBeUndefined();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(monitor.getState().summary?.indicator).toBe("major");
    expect(changes.map((summary) => summary?.indicator)).toEqual(["major", undefined, "major"]);
    monitor.stop();
  });

  it("keeps a dismissed banner closed until the disruption changes", async () => {
    const worse = parseStatusSummary({
      ...majorOutage,
      status: { indicator: "critical", description: "Major Outage" },
    });
    const { fetchSummary } = scripted([major, major, worse]);
    const monitor = createStatusPageMonitor({ summaryUrl: SUMMARY_URL, fetchSummary, visibility: fakeVisibility() });
    monitor.start();
    await vi.advanceTimersByTimeAsync(3000);
    monitor.dismiss();
    expect(monitor.getState().dismissed).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(monitor.getState().dismissed).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(monitor.getState()).toMatchObject({ dismissed: false, summary: { indicator: "critical" } });
    monitor.stop();
  });

  it("does nothing without a status page", async () => {
    const { fetchSummary } = scripted([major]);
    const monitor = createStatusPageMonitor({ summaryUrl: null, fetchSummary, visibility: fakeVisibility() });
    monitor.start();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(fetchSummary).not.toHaveBeenCalled();
    expect(monitor.configured).toBe(false);
    expect(monitor.pageUrl()).toBeUndefined();
  });

  it("links to the page derived from the summary URL before the first check", () => {
    const monitor = createStatusPageMonitor({ summaryUrl: SUMMARY_URL, visibility: fakeVisibility() });
    expect(monitor.configured).toBe(true);
    expect(monitor.pageUrl()).toBe("https://status.example.com/");
  });
});
