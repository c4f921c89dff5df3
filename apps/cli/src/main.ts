import { APP_VERSION } from "@flotilla/domain";

// The flotilla CLI (DESIGN §2). login, push and deploy arrive with the [releases] issue; until
// then the command says so instead of pretending.
const usage = `Usage: flotilla <command>

Commands:
  login    sign in to a Flotilla server          (not available yet)
  push     build and release a project           (not available yet)
  deploy   release prebuilt images               (not available yet)

Options:
  --version  print the version
  --help     print this help`;

const [command] = process.argv.slice(2);
if (command === "--version") {
  process.stdout.write(`${APP_VERSION}\n`);
} else if (command === undefined || command === "--help") {
  process.stdout.write(`${usage}\n`);
} else {
  process.stderr.write(`flotilla: "${command}" is not available in this version\n${usage}\n`);
  process.exitCode = 2;
}
