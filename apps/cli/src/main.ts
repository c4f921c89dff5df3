import { main } from "./cli.ts";

// The flotilla CLI (DESIGN §2, docs/releases.md): login, whoami, logout, push, deploy, releases.
const code = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  cwd: process.cwd(),
});
// Keep-alive sockets or SDK timers must not hold the command open once it has answered.
process.exit(code);
