import { describe, expect, it } from "vitest";
import { check, DiagnosticsRunner } from "./diagnostics.ts";
import { realChecks, realDiagnose } from "./real/diagnostics.ts";

describe("DiagnosticsRunner", () => {
  it("answers the last report, starts one run at a time, and records failures as error", async () => {
    const queued: (() => void)[] = [];
    let fail = false;
    const runner = new DiagnosticsRunner(
      {
        checks: () => {
          if (fail) throw new Error("probe broke");
          return [check("check_a", true, "fine")];
        },
        diagnose: () => "text",
      },
      "v1",
      { setTimeout: (run) => queued.push(run) },
    );
    expect(runner.answer("checks", {})).toMatchObject({
      status: 200,
      body: { status: "idle", diagnose_version: "v1" },
    });
    expect(runner.answer("checks", { run: true })).toMatchObject({ status: 202, body: { status: "in_progress" } });
    runner.answer("checks", { run: true });
    expect(queued).toHaveLength(1);
    queued.shift()?.();
    await Promise.resolve();
    expect(runner.report("checks")).toMatchObject({ status: "done", checks: [{ name: "check_a", success: true }] });
    fail = true;
    runner.answer("checks", { run: true });
    queued.shift()?.();
    await Promise.resolve();
    expect(runner.report("checks")).toMatchObject({ status: "error", error: "probe broke" });
    expect(runner.report("diagnose").status).toBe("idle");
  });
});

describe("the real host's checks", () => {
  it("reads this machine: every check named, with a status line", () => {
    const results = realChecks();
    expect(results.map((r) => r.name)).toContain("check_disk_space");
    expect(results.find((r) => r.name === "check_memory")?.status).toMatch(/% of memory available$/);
    expect(realDiagnose("1.0.0")).toContain("flotilla-agent 1.0.0");
  });
});
