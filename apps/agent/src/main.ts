import { main } from "./cli.ts";

// The device agent (DESIGN §4, docs/device-protocol.md): register, run, simulate.
process.exitCode = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
});
