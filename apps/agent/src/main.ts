import { APP_VERSION } from "@flotilla/domain";

// The device agent (DESIGN §4). Registration, the state loop and the simulator arrive with the
// [devices] issue; until then the command says so instead of pretending.
const usage = `Usage: flotilla-agent <command>

Commands:
  register   register this device with a provisioning key   (not available yet)
  run        keep this device in its target state            (not available yet)
  simulate   run N simulated devices                         (not available yet)

Options:
  --version  print the version
  --help     print this help`;

const [command] = process.argv.slice(2);
if (command === "--version") {
  process.stdout.write(`${APP_VERSION}\n`);
} else if (command === undefined || command === "--help") {
  process.stdout.write(`${usage}\n`);
} else {
  process.stderr.write(`flotilla-agent: "${command}" is not available in this version\n${usage}\n`);
  process.exitCode = 2;
}
