import os from "node:os";
import type { Shell, ShellEvents, ShellRequest } from "../terminal.ts";
import { ShellRefused } from "../terminal.ts";

type Pty = typeof import("@lydell/node-pty");
let pty: Promise<Pty> | undefined;

/**
 * node-pty is loaded on the first Host OS terminal only: the simulator never needs it.
 * @lydell/node-pty is node-pty with prebuilt binaries (node-pty itself has none for Linux).
 */
async function loadPty(): Promise<Pty> {
  pty ??= import("@lydell/node-pty").then((module) => (module as Pty & { default?: Pty }).default ?? module);
  return pty.catch(() => {
    pty = undefined;
    throw new ShellRefused("unsupported", "This agent has no pseudo-terminal support (node-pty is missing)");
  });
}

/** The login shell of this host: $SHELL when set, else /bin/sh. */
function hostShell(): string {
  return process.env.SHELL || "/bin/sh";
}

/**
 * The real host's terminal: the Host OS target runs the user's shell in a pseudo-terminal as
 * the agent's user; a service has no container here (no Docker engine), so it is refused with
 * the supervisor's words.
 */
export async function openHostShell(request: ShellRequest, events: ShellEvents): Promise<Shell> {
  if (request.target !== "host") throw new ShellRefused("service_not_running", `Service not found: ${request.target}`);
  const { spawn } = await loadPty();
  const child = spawn(hostShell(), [], {
    name: "xterm-256color",
    cols: request.cols,
    rows: request.rows,
    cwd: os.homedir(),
    env: { ...process.env, TERM: "xterm-256color" } as Record<string, string>,
  });
  let open = true;
  child.onData((data) => events.output(data));
  child.onExit(() => {
    if (!open) return;
    open = false;
    events.exit();
  });
  return {
    write: (data) => {
      if (open) child.write(data);
    },
    resize: (cols, rows) => {
      if (open) child.resize(cols, rows);
    },
    close: () => {
      if (!open) return;
      open = false;
      child.kill();
    },
  };
}
