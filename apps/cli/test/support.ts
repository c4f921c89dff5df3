// biome-ignore-all lint/style/noRestrictedImports: the CLI's integration tests run the real API in-process through the server's own test harness (no mock of our server).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createTestApp, type TestApp } from "../../server/test/harness.ts";

export { createTestApp, type TestApp };

const BIN = path.resolve(import.meta.dirname, "../bin/flotilla.mjs");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A temporary directory, removed by `cleanUp`. */
export function tempDir(prefix: string, made: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A project directory holding `files` (path → content). */
export function writeProject(dir: string, files: Record<string, string>): string {
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/**
 * The real CLI as a process (`node apps/cli/bin/flotilla.mjs …`) with its config in `configDir`.
 * `input` is written to its stdin; `onStdout` sees the output as it comes (to act on a printed URL).
 */
export function runCli(
  args: string[],
  options: { configDir: string; cwd?: string; input?: string; onStdout?: (soFar: string) => void },
): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, FLOTILLA_CONFIG_DIR: options.configDir, FLOTILLA_NO_BROWSER: "1" };
  delete env.FLOTILLA_TOKEN;
  delete env.FLOTILLA_API_URL;
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? options.configDir,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    options.onStdout?.(stdout);
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  child.stdin.end(options.input ?? "");
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
