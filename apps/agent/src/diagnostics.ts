import { type CheckReport, type CheckResult, type DiagnosticsAction, emptyReport } from "@flotilla/domain";
import type { ActionAnswer } from "./protocol/cloudlink.ts";

/** What a host checks and prints; the real host reads this machine, the simulator its model. */
export type DiagnosticsProbe = {
  checks(): Promise<CheckResult[]> | CheckResult[];
  diagnose(): Promise<string> | string;
};

/**
 * Health checks and diagnostics of one device (packages/domain/src/diagnostics.ts): the last
 * report of each, and runs started over cloudlink. A run answers at once with `in_progress`
 * (the dashboard shows its overlay and polls); the report becomes `done` or `error`.
 */
export class DiagnosticsRunner {
  private readonly reports: Record<DiagnosticsAction, CheckReport>;

  constructor(
    private readonly probe: DiagnosticsProbe,
    private readonly version: string,
    private readonly options: { delayMs?: number; setTimeout?: (run: () => void, ms: number) => unknown } = {},
  ) {
    this.reports = { checks: emptyReport(version), diagnose: emptyReport(version) };
  }

  report(action: DiagnosticsAction): CheckReport {
    return this.reports[action];
  }

  /** `data.run === true` starts a run (unless one is going); otherwise the last report. */
  answer(action: DiagnosticsAction, data: Record<string, unknown>): ActionAnswer {
    if (data.run !== true) return { status: 200, body: this.reports[action] };
    if (this.reports[action].status !== "in_progress") {
      this.reports[action] = { ...this.reports[action], status: "in_progress", error: null };
      const schedule = this.options.setTimeout ?? setTimeout;
      schedule(() => void this.run(action), this.options.delayMs ?? 0);
    }
    return { status: 202, body: this.reports[action] };
  }

  private async run(action: DiagnosticsAction) {
    const lastRun = () => new Date().toISOString();
    try {
      const report =
        action === "checks"
          ? { checks: await this.probe.checks(), stdout: "" }
          : { checks: [], stdout: await this.probe.diagnose() };
      this.reports[action] = {
        status: "done",
        diagnose_version: this.version,
        lastRun: lastRun(),
        error: null,
        ...report,
      };
    } catch (error) {
      this.reports[action] = {
        ...this.reports[action],
        status: "error",
        lastRun: lastRun(),
        error: error instanceof Error ? error.message : String(error),
      };
    }
  }
}

/** A check that passes or fails with a status line. */
export const check = (name: string, success: boolean, status: string): CheckResult => ({ name, success, status });
