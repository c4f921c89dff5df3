import { describe, expect, it } from "vitest";
import { ShellRefused } from "../terminal.ts";
import { openHostShell } from "./shell.ts";

describe("real host terminal", () => {
  it("runs a real shell in a pseudo-terminal: echo hello prints hello", { timeout: 70_000 }, async () => {
    let output = "";
    let exited = false;
    const shell = await openHostShell(
      { target: "host", cols: 80, rows: 24 },
      { output: (data) => (output += data), exit: () => (exited = true) },
    );
    shell.resize(100, 30);
    // Type as a person does: after the shell's prompt. A line typed before the shell set up its
    // terminal may be echoed by the tty and then discarded by the shell (seen once on a loaded CI).
    const waitFor = async (done: () => boolean) => {
      const until = Date.now() + 30_000;
      while (!done() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await waitFor(() => output.length > 0);
    shell.write("echo hel''lo; exit\r");
    await waitFor(() => exited);
    // The typed line comes back as `hel''lo`; only the shell's output reads `hello` alone on a line.
    // Escape sequences (bracketed paste, window titles) and carriage returns are no text.
    const text = output
      // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
      .replace(/\x1b\][^\x07]*\x07|\x1b\[[?0-9;]*[A-Za-z]|\r/g, "");
    expect(text.split("\n")).toContain("hello");
    expect(exited).toBe(true);
  });

  it("refuses a service: there is no container engine here", async () => {
    await expect(
      openHostShell({ target: "main", cols: 80, rows: 24 }, { output: () => {}, exit: () => {} }),
    ).rejects.toThrow(new ShellRefused("service_not_running", "Service not found: main"));
  });
});
