import type { ExecFrame } from "@flotilla/domain";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ExecEvents, type ExecFactory, ExecSessions } from "./exec.ts";
import { execOnHost } from "./real/exec.ts";
import { execSandboxed, type SandboxContext } from "./sim/shell.ts";
import { ShellRefused } from "./terminal.ts";

const UUID = "0123456789abcdef0123456789abcdef";
const sandbox: SandboxContext = {
  uuid: UUID,
  target: "host",
  osVersion: () => "balenaOS 6.1.0",
  uptimeSeconds: () => 60,
  now: () => new Date("2026-03-01T12:34:56Z"),
  environment: {},
  services: [],
};

/** A factory whose commands the test ends by hand; `kills` counts kill() calls. */
function manual() {
  const started: { command: string; target: string; events: ExecEvents; killed: boolean }[] = [];
  const factory: ExecFactory = (request, events) => {
    const entry = { ...request, events, killed: false };
    started.push(entry);
    return {
      kill: () => {
        entry.killed = true;
        events.exit(null, "SIGTERM");
      },
    };
  };
  return { started, factory };
}

function sessions(factory: ExecFactory, limit?: number) {
  const sent: ExecFrame[] = [];
  const execs = new ExecSessions(
    (frame) => {
      sent.push(frame);
      return true;
    },
    factory,
    limit,
  );
  return { sent, execs };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe("ExecSessions", () => {
  it("runs a command and sends its output and exit code", async () => {
    const { started, factory } = manual();
    const { sent, execs } = sessions(factory);
    execs.handle({ type: "exec-start", session: "s1", command: "uname -a", target: "host", timeout_s: 60 });
    await flush();
    expect(started[0]).toMatchObject({ command: "uname -a", target: "host" });
    started[0]?.events.output("hello\n", "stdout");
    started[0]?.events.output("oops\n", "stderr");
    started[0]?.events.exit(0);
    expect(sent).toEqual([
      { type: "exec-output", session: "s1", data: "hello\n", stream: "stdout" },
      { type: "exec-output", session: "s1", data: "oops\n", stream: "stderr" },
      { type: "exec-exit", session: "s1", code: 0 },
    ]);
    expect(execs.size).toBe(0);
  });

  it("runs at most `limit` commands at once; the others wait in order", async () => {
    const { started, factory } = manual();
    const { execs } = sessions(factory, 2);
    for (const session of ["a", "b", "c"]) {
      execs.handle({ type: "exec-start", session, command: session, target: "host", timeout_s: 60 });
    }
    await flush();
    expect(started.map((s) => s.command)).toEqual(["a", "b"]);
    expect(execs.runningCount).toBe(2);
    started[0]?.events.exit(0);
    await flush();
    expect(started.map((s) => s.command)).toEqual(["a", "b", "c"]);
  });

  it("kills a command at its timeout and says so", async () => {
    vi.useFakeTimers();
    const { started, factory } = manual();
    const { sent, execs } = sessions(factory);
    execs.handle({ type: "exec-start", session: "t", command: "sleep 100", target: "host", timeout_s: 2 });
    await vi.advanceTimersByTimeAsync(1999);
    expect(started[0]?.killed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(started[0]?.killed).toBe(true);
    expect(sent.at(-1)).toMatchObject({ type: "exec-exit", session: "t", code: null, reason: "timeout" });
  });

  it("cancels a running command, and a waiting one never starts", async () => {
    const { started, factory } = manual();
    const { execs } = sessions(factory, 1);
    execs.handle({ type: "exec-start", session: "run", command: "a", target: "host", timeout_s: 60 });
    execs.handle({ type: "exec-start", session: "wait", command: "b", target: "host", timeout_s: 60 });
    await flush();
    execs.handle({ type: "exec-cancel", session: "wait" });
    execs.handle({ type: "exec-cancel", session: "run" });
    await flush();
    expect(started.map((s) => [s.command, s.killed])).toEqual([["a", true]]);
    expect(execs.size).toBe(0);
  });

  it("answers refused when the target cannot run commands", async () => {
    const { sent, execs } = sessions(() => {
      throw new ShellRefused("service_not_running", "Service not found: db");
    });
    execs.handle({ type: "exec-start", session: "r", command: "ls", target: "db", timeout_s: 60 });
    await flush();
    expect(sent).toEqual([
      { type: "exec-exit", session: "r", code: null, reason: "refused", message: "Service not found: db" },
    ]);
  });

  it("stops everything when the socket goes", async () => {
    const { started, factory } = manual();
    const { execs } = sessions(factory);
    execs.handle({ type: "exec-start", session: "x", command: "a", target: "host", timeout_s: 60 });
    await flush();
    execs.closeAll();
    expect(started[0]?.killed).toBe(true);
    expect(execs.size).toBe(0);
  });
});

/** Runs a command with an exec function and collects what it told. */
function collect(run: (events: ExecEvents) => { kill(): void }) {
  let stdout = "";
  let stderr = "";
  let execution: { kill(): void } | undefined;
  const done = new Promise<{ code: number | null; signal?: string | undefined; stdout: string; stderr: string }>(
    (resolve) => {
      execution = run({
        output: (data, stream) => {
          if (stream === "stdout") stdout += data;
          else stderr += data;
        },
        exit: (code, signal) => resolve({ code, signal, stdout, stderr }),
      });
    },
  );
  return { done, kill: () => execution?.kill() };
}

describe("the simulator's commands (sandboxed shell)", () => {
  it("answers uname -a with a plausible line and exit code 0", async () => {
    const result = await collect((events) => execSandboxed(sandbox, "uname -a", events)).done;
    expect(result).toMatchObject({ code: 0, stdout: "Linux 0123456 6.1.77 #1 SMP PREEMPT aarch64 GNU/Linux\n" });
  });

  it("gives the last command's status: 127 for an unknown command, exit N", async () => {
    expect((await collect((e) => execSandboxed(sandbox, "nosuch", e)).done).code).toBe(127);
    expect((await collect((e) => execSandboxed(sandbox, "echo hi; exit 4", e)).done).code).toBe(4);
    expect((await collect((e) => execSandboxed(sandbox, "false", e)).done).code).toBe(1);
    expect(await collect((e) => execSandboxed(sandbox, "false; echo $?; true", e)).done).toMatchObject({
      code: 0,
      stdout: "1\n",
    });
  });

  it("waits for sleep, and a kill ends it", async () => {
    const running = collect((e) => execSandboxed(sandbox, "echo a; sleep 30; echo b", e));
    await new Promise((resolve) => setTimeout(resolve, 20));
    running.kill();
    expect(await running.done).toMatchObject({ code: null, signal: "SIGTERM", stdout: "a\n" });
  });
});

describe("the real host's commands", () => {
  it("runs sh -c with separate stdout and stderr and the exit code", async () => {
    const result = await collect((e) => execOnHost("echo out; echo err >&2; exit 3", e)).done;
    expect(result).toEqual({ code: 3, signal: undefined, stdout: "out\n", stderr: "err\n" });
  });

  it("kills the command and what it started", async () => {
    const running = collect((e) => execOnHost("sleep 30 & wait", e));
    await new Promise((resolve) => setTimeout(resolve, 100));
    running.kill();
    expect(await running.done).toMatchObject({ code: null, signal: "SIGTERM" });
  });
});
