import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const CLI_BIN = path.resolve(import.meta.dirname, "../../apps/cli/bin/flotilla.mjs");

/**
 * The real `flotilla` CLI in a throwaway home (its login is kept there), and project folders to
 * push from. `remove()` deletes both.
 */
export function cliWorkspace(prefix: string) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  /** Runs the CLI; resolves with its exit code and output (never rejects on a non-zero exit). */
  const cli = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [CLI_BIN, ...args],
        { env: { PATH: process.env.PATH ?? "", HOME: work, FLOTILLA_CONFIG_DIR: path.join(work, "config") } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  /** A project folder with these files (paths may name sub-folders). */
  const project = (name: string, files: Record<string, string>) => {
    const dir = path.join(work, name);
    fs.mkdirSync(dir, { recursive: true });
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
    }
    return dir;
  };
  const remove = () => fs.rmSync(work, { recursive: true, force: true });
  return { cli, project, remove };
}
