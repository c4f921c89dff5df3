#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx: no server build step.
// `flotilla-server` starts the server; `flotilla-server admin …` runs an administration command
// on the server host (docs/support.md "Platform staff").
import { register } from "tsx/esm/api";

register();
if (process.argv[2] === "admin") {
  const { adminCommand } = await import("../src/features/admin/command.ts");
  const code = await adminCommand(process.argv.slice(3), {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
    env: process.env,
  });
  // Database pools and timers must not hold the command open once it has answered.
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
} else {
  await import("../src/main.ts");
}
