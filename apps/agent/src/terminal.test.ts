import { describe, expect, it } from "vitest";
import { type Shell, ShellRefused, TerminalSessions } from "./terminal.ts";

type Frame = { type: string } & Record<string, unknown>;

function sessions(start: ConstructorParameters<typeof TerminalSessions>[1]) {
  const sent: Frame[] = [];
  const terminals = new TerminalSessions((frame) => {
    sent.push(frame);
    return true;
  }, start);
  return { terminals, sent };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("terminal sessions of a device", () => {
  it("opens a shell, answers terminal-open before its first output, relays data, resize and close", async () => {
    const typed: string[] = [];
    const sizes: string[] = [];
    let closed = 0;
    const { terminals, sent } = sessions((_request, events) => {
      events.output("prompt$ ");
      return {
        write: (data) => {
          typed.push(data);
          events.output(data);
        },
        resize: (cols, rows) => sizes.push(`${cols}x${rows}`),
        close: () => (closed += 1),
      } satisfies Shell;
    });
    terminals.handle({ type: "terminal-open", session: "s1", target: "host", cols: 100, rows: 30 });
    await flush();
    expect(sent).toEqual([
      { type: "terminal-open", session: "s1" },
      { type: "terminal-data", session: "s1", data: "prompt$ " },
    ]);
    terminals.handle({ type: "terminal-data", session: "s1", data: "ls" });
    terminals.handle({ type: "terminal-resize", session: "s1", cols: 120, rows: 40 });
    terminals.handle({ type: "terminal-resize", session: "s1", cols: -1, rows: 40 });
    expect(typed).toEqual(["ls"]);
    expect(sizes).toEqual(["120x40"]);
    terminals.handle({ type: "terminal-close", session: "s1" });
    expect(closed).toBe(1);
    expect(terminals.size).toBe(0);
  });

  it("tells the server when the shell exits, and why a shell was refused", async () => {
    const { terminals, sent } = sessions((request, events) => {
      if (request.target !== "host")
        throw new ShellRefused("service_not_running", `Service not found: ${request.target}`);
      setTimeout(() => events.exit(), 0);
      return { write: () => {}, resize: () => {}, close: () => {} };
    });
    terminals.handle({ type: "terminal-open", session: "a", target: "worker" });
    terminals.handle({ type: "terminal-open", session: "b", target: "host" });
    await flush();
    await flush();
    expect(sent).toContainEqual({
      type: "terminal-close",
      session: "a",
      reason: "service_not_running",
      message: "Service not found: worker",
    });
    expect(sent).toContainEqual({ type: "terminal-close", session: "b", reason: "exited" });
  });

  it("refuses more than 8 sessions and closes all when the socket goes", async () => {
    let closed = 0;
    const { terminals, sent } = sessions(() => ({ write: () => {}, resize: () => {}, close: () => (closed += 1) }));
    for (let i = 0; i < 9; i++) terminals.handle({ type: "terminal-open", session: `s${i}`, target: "host" });
    await flush();
    expect(terminals.size).toBe(8);
    expect(sent).toContainEqual(expect.objectContaining({ session: "s8", reason: "too_many_sessions" }));
    terminals.closeAll();
    expect(closed).toBe(8);
    expect(terminals.size).toBe(0);
  });
});
