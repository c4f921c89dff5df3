import { describe, expect, it } from "vitest";
import { type FollowDeps, followRun, RECONNECT_MS } from "./follow.ts";
import type { RunDetail, RunEvent } from "./model.ts";

const run = (status: RunDetail["status"]): RunDetail =>
  ({ id: 1, status, devices: [], summary: { total: 0 } }) as unknown as RunDetail;
const summary: RunEvent = {
  event: "summary",
  data: {
    run: 1,
    status: "finished",
    summary: { total: 0, succeeded: 0, failed: 0, timed_out: 0, offline: 0, refused: 0, cancelled: 0, pending: 0 },
  },
};

/** Streams that behave as scripted, one per attempt, and a record of what the page was told. */
function harness(
  streams: Array<(emit: (event: RunEvent) => void) => Promise<boolean>>,
  reads: Array<RunDetail | Error>,
) {
  const log: string[] = [];
  const abort = new AbortController();
  const deps: FollowDeps = {
    stream: (emit) => {
      log.push("stream");
      const next = streams.shift();
      if (!next) throw new Error("no more streams");
      return next(emit);
    },
    read: async () => {
      log.push("read");
      const next = reads.shift();
      if (!next || next instanceof Error) throw next ?? new Error("no more reads");
      return next;
    },
    wait: async (ms) => {
      log.push(`wait ${ms}`);
    },
    signal: abort.signal,
  };
  const callbacks = {
    onEvent: (event: RunEvent) =>
      log.push(`event ${event.event}${event.event === "snapshot" ? ` ${event.data.status}` : ""}`),
    onLive: (live: boolean) => log.push(live ? "live" : "not live"),
    onError: () => log.push("error"),
  };
  return { log, deps, callbacks, abort };
}

describe("following a run", () => {
  it("stops at the stream's summary", async () => {
    const { log, deps, callbacks } = harness(
      [
        async (emit) => {
          emit({ event: "snapshot", data: run("running") });
          emit(summary);
          return true;
        },
      ],
      [],
    );
    await followRun(deps, callbacks);
    expect(log).toEqual(["live", "stream", "event snapshot running", "event summary", "not live"]);
  });

  it("re-reads the run when the stream drops, and listens again while it runs", async () => {
    const { log, deps, callbacks } = harness(
      [
        async () => false,
        async (emit) => {
          emit(summary);
          return true;
        },
      ],
      [run("running")],
    );
    await followRun(deps, callbacks);
    expect(log).toEqual([
      "live",
      "stream",
      "not live",
      "read",
      "event snapshot running",
      `wait ${RECONNECT_MS}`,
      "live",
      "stream",
      "event summary",
      "not live",
    ]);
  });

  it("ends with the re-read run when it is over", async () => {
    const { log, deps, callbacks } = harness([async () => false], [run("finished")]);
    await followRun(deps, callbacks);
    expect(log.slice(-2)).toEqual(["event snapshot finished", "not live"]);
    expect(log.filter((entry) => entry === "stream")).toHaveLength(1);
  });

  it("reports a run it cannot read at all, but rides out later failures", async () => {
    const refused = harness([() => Promise.reject(new Error("404"))], []);
    await followRun(refused.deps, refused.callbacks);
    expect(refused.log).toEqual(["live", "stream", "error"]);

    const flaky = harness(
      [async () => false, () => Promise.reject(new Error("network")), async () => true],
      [run("running")],
    );
    await followRun(flaky.deps, flaky.callbacks);
    expect(flaky.log).not.toContain("error");
    expect(flaky.log.filter((entry) => entry === "stream")).toHaveLength(3);
  });

  it("stops quietly once the page is left", async () => {
    const { log, deps, callbacks, abort } = harness(
      [
        async () => {
          abort.abort();
          throw new Error("aborted");
        },
      ],
      [],
    );
    await followRun(deps, callbacks);
    expect(log).toEqual(["live", "stream"]);
  });
});
