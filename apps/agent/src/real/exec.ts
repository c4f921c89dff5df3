import { spawn } from "node:child_process";
import os from "node:os";
import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import type { ExecEvents, Execution } from "../exec.ts";

/** A killed command gets SIGTERM, then SIGKILL this much later if it is still there. */
const KILL_GRACE_MS = 5000;

/**
 * A bulk command on the real host (exec.ts): `sh -c COMMAND` as the agent's user, in its own
 * process group so a kill reaches what the command started too.
 */
export function execOnHost(command: string, events: ExecEvents): Execution {
  const child = spawn("/bin/sh", ["-c", command], {
    cwd: os.homedir(),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let exited = false;
  let killTimer: NodeJS.Timeout | undefined;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  };
  child.stdout.on("data", (chunk: Buffer) => events.output(chunk.toString("utf8"), "stdout"));
  child.stderr.on("data", (chunk: Buffer) => events.output(chunk.toString("utf8"), "stderr"));
  child.on("error", (error) => {
    if (exited) return;
    exited = true;
    events.output(`${error.message}\n`, "stderr");
    events.exit(127);
  });
  // "close": the output pipes are drained too, so no output follows the exit.
  child.on("close", (code, signal) => {
    if (exited) return;
    exited = true;
    if (killTimer) clearTimeout(killTimer);
    events.exit(code, signal ?? undefined);
  });
  return {
    kill: () => {
      if (exited || killTimer) return;
      signalGroup("SIGTERM");
      killTimer = setTimeout(() => signalGroup("SIGKILL"), KILL_GRACE_MS);
      killTimer.unref();
    },
  };
}

/**
 * A bulk command in a service's container: the engine's exec (as service terminals use), with
 * separate stdout and stderr. A kill ends the exec's process (SIGTERM, then SIGKILL) by its pid
 * in the container, through a second exec.
 */
export async function execInContainer(
  docker: Docker,
  containerId: string,
  command: string,
  events: ExecEvents,
): Promise<Execution> {
  const container = docker.getContainer(containerId);
  // The shell prints its pid first (on stderr, one line) so a kill can find it.
  const exec = await container.exec({
    Cmd: ["/bin/sh", "-c", 'echo "flotilla-pid:$$" >&2; exec /bin/sh -c "$0"', command],
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  let pid: string | undefined;
  let exited = false;
  let killTimer: NodeJS.Timeout | undefined;
  const stdout = { write: (chunk: Buffer) => events.output(chunk.toString("utf8"), "stdout") };
  const stderr = {
    write: (chunk: Buffer) => {
      let text = chunk.toString("utf8");
      if (pid === undefined) {
        const match = /^flotilla-pid:(\d+)\n/.exec(text);
        if (match) {
          pid = match[1];
          text = text.slice(match[0].length);
        }
      }
      if (text) events.output(text, "stderr");
    },
  };
  docker.modem.demuxStream(
    stream,
    stdout as unknown as NodeJS.WritableStream,
    stderr as unknown as NodeJS.WritableStream,
  );
  const end = async () => {
    if (exited) return;
    exited = true;
    if (killTimer) clearTimeout(killTimer);
    const info = await exec.inspect().catch(() => undefined);
    events.exit(typeof info?.ExitCode === "number" ? info.ExitCode : null);
  };
  stream.on("end", () => void end());
  stream.on("close", () => void end());
  stream.on("error", () => void end());
  const signal = (name: "TERM" | "KILL") => {
    if (!pid) return stream.destroy();
    void container
      .exec({ Cmd: ["kill", `-${name}`, pid], AttachStdout: false, AttachStderr: false })
      .then((killer) => killer.start({ Detach: true }))
      .catch(() => stream.destroy());
  };
  return {
    kill: () => {
      if (exited || killTimer) return;
      signal("TERM");
      killTimer = setTimeout(() => signal("KILL"), KILL_GRACE_MS);
      killTimer.unref();
    },
  };
}
