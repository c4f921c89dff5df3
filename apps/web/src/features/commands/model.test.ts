import { summarizeCommandStates } from "@flotilla/domain";
import { describe, expect, it } from "vitest";
import {
  applyRunEvent,
  defaultRunForm,
  durationText,
  fieldOfMessage,
  formProblems,
  type RunDetail,
  type RunDevice,
  runRequest,
  shownCounts,
  sortedDevices,
  summaryOfStates,
  viewOf,
} from "./model.ts";

const device = (id: number, fields: Partial<RunDevice> = {}): RunDevice => ({
  id,
  uuid: `${id}`.padStart(32, "a"),
  name: `gw-0${id}`,
  state: "queued",
  exit_code: null,
  started_at: null,
  finished_at: null,
  duration_ms: null,
  reason: null,
  truncated: false,
  output: "",
  ...fields,
});

const run = (devices: RunDevice[]): RunDetail => ({
  id: 12,
  organization: 3,
  fleet: 7,
  created_by: 5,
  created_by_username: "ops",
  api_key: null,
  command: "uname -a",
  target: "host",
  timeout_s: 60,
  concurrency: 50,
  queue_window_s: 0,
  status: "running",
  created_at: "2026-11-25T23:00:00.000Z",
  finished_at: null,
  summary: summarizeCommandStates(devices.map((d) => d.state)),
  devices,
});

describe("a run followed live", () => {
  it("starts from the snapshot, appends output by stream, and counts devices as they change state", () => {
    let view = applyRunEvent(undefined, { event: "snapshot", data: run([device(1), device(2, { state: "offline" })]) });
    expect(view?.summary).toMatchObject({ total: 2, offline: 1, pending: 1 });
    const out = (stream: "stdout" | "stderr", data: string) =>
      ({ event: "output", data: { run: 12, device: 1, uuid: "x", stream, data } }) as const;
    view = applyRunEvent(view, out("stdout", "Lin"));
    view = applyRunEvent(view, out("stdout", "ux\n"));
    view = applyRunEvent(view, out("stderr", "warn\n"));
    expect(view?.devices[0]?.pieces).toEqual([
      { stream: "stdout", text: "Linux\n" },
      { stream: "stderr", text: "warn\n" },
    ]);
    view = applyRunEvent(view, {
      event: "state",
      data: {
        run: 12,
        device: 1,
        uuid: "x",
        name: "gw-01",
        state: "succeeded",
        exit_code: 0,
        reason: null,
        started_at: "a",
        finished_at: "b",
        duration_ms: 112,
      },
    });
    expect(view?.devices[0]).toMatchObject({ state: "succeeded", exit_code: 0, duration_ms: 112 });
    expect(view?.summary).toMatchObject({ total: 2, succeeded: 1, offline: 1, pending: 0 });
    const summary = {
      total: 2,
      succeeded: 1,
      failed: 0,
      timed_out: 0,
      offline: 1,
      refused: 0,
      cancelled: 0,
      pending: 0,
    };
    view = applyRunEvent(view, { event: "summary", data: { run: 12, status: "finished", summary } });
    expect(view?.status).toBe("finished");
  });

  it("shows a snapshot's output whole, its stream unknown, and keeps only the last 64 KiB", () => {
    const view = viewOf(run([device(1, { output: "hello\n" })]));
    expect(view.devices[0]?.pieces).toEqual([{ stream: undefined, text: "hello\n" }]);
    const big = applyRunEvent(view, {
      event: "output",
      data: { run: 12, device: 1, uuid: "x", stream: "stdout", data: "x".repeat(70 * 1024) },
    });
    const kept = big?.devices[0]?.pieces ?? [];
    expect(kept.reduce((sum, piece) => sum + piece.text.length, 0)).toBe(64 * 1024);
    expect(kept[0]?.stream).toBe("stdout");
  });

  it("ignores events before the snapshot", () => {
    expect(
      applyRunEvent(undefined, {
        event: "output",
        data: { run: 1, device: 1, uuid: "x", stream: "stdout", data: "a" },
      }),
    ).toBeUndefined();
  });
});

describe("the summary", () => {
  it("always shows the five outcomes, cancelled and running only when there are some", () => {
    const summary = summaryOfStates({ succeeded: 5, offline: 1 });
    expect(summary).toMatchObject({ total: 6, succeeded: 5, offline: 1, pending: 0 });
    expect(shownCounts(summary).map((c) => c.key)).toEqual(["succeeded", "failed", "timed_out", "offline", "refused"]);
    expect(shownCounts(summaryOfStates({ running: 2, cancelled: 1 })).map((c) => c.key)).toContain("pending");
  });

  it("lists open devices first, then failures, then successes, by name", () => {
    const sorted = sortedDevices([
      { name: "b", state: "succeeded" },
      { name: "a", state: "succeeded" },
      { name: "c", state: "offline" },
      { name: "d", state: "running" },
    ] as const);
    expect(sorted.map((d) => d.name)).toEqual(["d", "c", "a", "b"]);
  });

  it("says durations in ms, s or min", () => {
    expect([durationText(null), durationText(850), durationText(1234), durationText(125_000)]).toEqual([
      "–",
      "850 ms",
      "1.2 s",
      "2 min 5 s",
    ]);
  });
});

describe("the form as a request", () => {
  const context = { fleetId: 7, selected: ["aaa1111", "bbb2222"] };
  it("runs on the selected devices' host OS, offline devices reported at once", () => {
    expect(runRequest({ ...defaultRunForm("selected"), command: "uname -a" }, context)).toEqual({
      command: "uname -a",
      target: "host",
      devices: ["aaa1111", "bbb2222"],
      timeout_s: 60,
      concurrency: 50,
      queue_window_s: 0,
    });
  });

  it("runs in a service of the fleet's devices with a tag, waiting minutes for offline ones", () => {
    const form = {
      ...defaultRunForm("tag"),
      command: "ls",
      target: "main",
      offline: "wait" as const,
      waitMinutes: "15",
      tagKey: " role ",
      tagValue: "",
      timeoutS: "5",
      concurrency: "2",
    };
    expect(runRequest(form, context)).toEqual({
      command: "ls",
      target: { service: "main" },
      fleet: 7,
      filter: { tag_key: "role" },
      timeout_s: 5,
      concurrency: 2,
      queue_window_s: 900,
    });
    expect(runRequest({ ...form, scope: "fleet" }, context)).not.toHaveProperty("filter");
  });

  it("asks for a command and a tag key before sending", () => {
    expect(formProblems(defaultRunForm("tag"))).toEqual({ command: "required", tagKey: "required" });
    expect(formProblems({ ...defaultRunForm("fleet"), command: "ls" })).toEqual({});
  });

  it("puts the server's validation message on the field it names, in its words", () => {
    expect(fieldOfMessage("timeout_s: must be at least 1")).toEqual({ field: "timeoutS", text: "Must be at least 1" });
    expect(fieldOfMessage("concurrency: concurrency must be a whole number")).toEqual({
      field: "concurrency",
      text: "Must be a whole number",
    });
    expect(fieldOfMessage("queue_window_s: must be at most 86400")).toMatchObject({ field: "waitMinutes" });
    expect(fieldOfMessage("filter.tag_key: Too small")).toMatchObject({ field: "tagKey" });
    expect(fieldOfMessage("No device matches the selection")).toEqual({
      field: "form",
      text: "No device matches the selection",
    });
  });
});
