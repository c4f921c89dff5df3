import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { CliError } from "../errors.ts";
import type { Command, Io } from "../io.ts";

/**
 * `flotilla admin …`: the server host's administration commands (docs/support.md "Platform
 * staff"). They need the server's own database, not an API login, so this hands over to
 * `flotilla-server admin …` — the server package's command — when it is installed on this machine
 * (on the PATH, as `npx` puts the repository's `node_modules/.bin` there).
 */
export const admin: Command = {
  name: "admin",
  summary: "global roles, on the server host (runs flotilla-server admin)",
  usage: `Usage: flotilla admin <command>

Commands:
  grant-role <email|username> <support_agent|balena_admin>   give a user a global role
  revoke-role <email|username> <support_agent|balena_admin>  remove it
  list-roles                                                 the users holding a global role

Runs on the server host, with the server's environment (DATABASE_URL, or FLOTILLA_DATA_DIR for the
embedded database): it hands over to \`flotilla-server admin\`, which changes the server's database
directly and records each change in the audit log as made from the server host. With the embedded
database, stop the server first, or use Admin → Users in the dashboard. Elsewhere, a platform
administrator uses Admin → Users.`,
  async run(args, io) {
    const server = findOnPath("flotilla-server", io);
    if (!server) {
      throw new CliError(
        "flotilla admin runs on the server host: flotilla-server is not installed here (not on the PATH). " +
          "Run it where the server runs (npx flotilla-server admin … in its directory), or use Admin → Users in the dashboard.",
      );
    }
    return forward(server, ["admin", ...args], io);
  },
};

function findOnPath(name: string, io: Io): string | undefined {
  for (const dir of (io.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(io.cwd, dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** Runs the server's command with this environment, its lines passed on; answers its exit code. */
function forward(command: string, args: string[], io: Io): Promise<number> {
  return new Promise((resolve, reject) => {
    // Through this Node: the script's `#!/usr/bin/env node` would need node on the PATH.
    const child = spawn(process.execPath, [command, ...args], {
      cwd: io.cwd,
      env: io.env as NodeJS.ProcessEnv,
      stdio: ["inherit", "pipe", "pipe"],
    });
    const lines = (stream: NodeJS.ReadableStream | null, write: (text: string) => void) => {
      let buffered = "";
      stream?.setEncoding("utf8");
      stream?.on("data", (chunk: string) => {
        buffered += chunk;
        const parts = buffered.split("\n");
        buffered = parts.pop() ?? "";
        for (const part of parts) write(part);
      });
      stream?.on("end", () => {
        if (buffered) write(buffered);
      });
    };
    lines(child.stdout, io.out);
    lines(child.stderr, io.err);
    child.on("error", reject);
    child.on("close", (code) => resolve(code ?? 1));
  });
}
