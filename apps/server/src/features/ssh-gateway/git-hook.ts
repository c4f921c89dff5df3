import fs from "node:fs";
import path from "node:path";

/**
 * The pre-receive hook of the fleets' repositories (docs/releases.md "Git push"). git runs it
 * once the pushed objects arrived (still in quarantine) and before any ref moves; it hands the
 * ref updates and the quarantine's object directory to the server on file descriptor 3 (a socket
 * the server gave `git receive-pack`, which git's children inherit), prints every line the
 * server answers (git shows them to the pusher as `remote:` lines, as they come) and exits with
 * the status the server names last: 0 lets the refs move, anything else refuses the push as a
 * whole ("pre-receive hook declined"). It works as a CommonJS script and as an ES module alike.
 */
const HOOK_BODY = `// Written by the Flotilla server (apps/server/src/features/ssh-gateway/git-hook.ts); do not edit.
import("node:net").then(({ Socket }) => {
  const input = [];
  process.stdin.on("data", (chunk) => input.push(chunk));
  process.stdin.on("end", () => {
    process.exitCode = 1;
    let pending = "";
    const server = new Socket({ fd: 3, readable: true, writable: true });
    server.on("error", () => server.destroy());
    server.on("data", (chunk) => {
      pending += chunk;
      for (let end = pending.indexOf("\\n"); end >= 0; end = pending.indexOf("\\n")) {
        const message = JSON.parse(pending.slice(0, end));
        pending = pending.slice(end + 1);
        if (typeof message.line === "string") process.stdout.write(message.line + "\\n");
        if (typeof message.exit === "number") {
          process.exitCode = message.exit;
          server.destroy();
          return;
        }
      }
    });
    server.write(
      JSON.stringify({
        updates: Buffer.concat(input).toString("utf8"),
        objects: process.env.GIT_OBJECT_DIRECTORY || null,
      }) + "\\n",
    );
  });
});
`;

/** The interpreter line: this very Node.js, or `env node` when its path cannot be one. */
function interpreter(): string {
  const node = process.execPath;
  return /^\/\S+$/.test(node) && node.length < 120 ? `#!${node}` : "#!/usr/bin/env node";
}

/**
 * Writes the hook into `{dir}/pre-receive` (the directory `core.hooksPath` names), replacing it
 * at once when it differs, so instances sharing the data directory never see half a file.
 */
export function writePreReceiveHook(dir: string): string {
  const file = path.join(dir, "pre-receive");
  const text = `${interpreter()}\n${HOOK_BODY}`;
  fs.mkdirSync(dir, { recursive: true });
  const current = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined;
  if (current !== text || (fs.statSync(file).mode & 0o111) === 0) {
    const temporary = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, text, { mode: 0o755 });
    fs.chmodSync(temporary, 0o755);
    fs.renameSync(temporary, file);
  }
  return file;
}
