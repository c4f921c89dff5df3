import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import type { Shell, ShellEvents, ShellRequest } from "../../terminal.ts";

/**
 * A service terminal: `docker exec` of a shell in the container with a pseudo-terminal, as
 * balena's does (bash when the image has it, else sh).
 */
export async function execShell(
  docker: Docker,
  containerId: string,
  request: ShellRequest,
  events: ShellEvents,
): Promise<Shell> {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: ["/bin/sh", "-c", "if [ -x /bin/bash ]; then exec /bin/bash; else exec /bin/sh; fi"],
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: true,
    Env: ["TERM=xterm-256color"],
  });
  const stream = (await exec.start({ hijack: true, stdin: true, Tty: true })) as Duplex;
  let open = true;
  const end = () => {
    if (!open) return;
    open = false;
    events.exit();
  };
  stream.on("data", (chunk: Buffer) => events.output(chunk.toString("utf8")));
  stream.on("end", end);
  stream.on("close", end);
  stream.on("error", end);
  await exec.resize({ h: request.rows, w: request.cols }).catch(() => {});
  return {
    write: (data) => {
      if (open) stream.write(data);
    },
    resize: (cols, rows) => {
      if (open) void exec.resize({ h: rows, w: cols }).catch(() => {});
    },
    close: () => {
      if (!open) return;
      open = false;
      // Ends the shell as a hang-up would: the exec's process gets EOF and exits.
      stream.end();
      stream.destroy();
    },
  };
}
