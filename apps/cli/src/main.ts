import { main } from "./cli.ts";

// The flotilla CLI (DESIGN §2, docs/releases.md): login, whoami, logout, push, deploy, releases.
const code = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  cwd: process.cwd(),
});
process.exitCode = code;
// Once the output is flushed, keep-alive sockets, SDK timers or a stdin reader must not hold the
// command open: it has answered.
process.stdout.write("", () => process.stderr.write("", () => setTimeout(() => process.exit(code), 100).unref()));
