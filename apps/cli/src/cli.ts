import { APP_VERSION } from "@flotilla/domain";
import { admin } from "./commands/admin.ts";
import { deploy } from "./commands/deploy.ts";
import { exec } from "./commands/exec.ts";
import { login } from "./commands/login.ts";
import { logout } from "./commands/logout.ts";
import { push } from "./commands/push.ts";
import { releases } from "./commands/releases.ts";
import { rollout } from "./commands/rollout.ts";
import { whoami } from "./commands/whoami.ts";
import { currentLogin } from "./config.ts";
import { CliError, describeError, UsageError } from "./errors.ts";
import type { Command, Io } from "./io.ts";

export const COMMANDS: Command[] = [login, whoami, logout, push, deploy, releases, rollout, exec, admin];

export const USAGE = `Usage: flotilla <command> [options]

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(11)}${command.summary}`).join("\n")}
  help       show a command's help: flotilla help push

Options:
  --version   print the version
  --help      print this help

The login is kept in $FLOTILLA_CONFIG_DIR/config.json (default ~/.flotilla/config.json).
FLOTILLA_TOKEN (with FLOTILLA_API_URL) logs in for one command, for scripts and CI.`;

const isHelp = (arg: string) => arg === "--help" || arg === "-h";

/** Runs one command line and answers its exit code: 0 done, 1 failed or refused, 2 bad usage. */
export async function main(args: string[], io: Io): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || isHelp(name)) {
    io.out(USAGE);
    return 0;
  }
  if (name === "--version" || name === "-v" || name === "version") {
    io.out(APP_VERSION);
    return 0;
  }
  if (name === "help") {
    const topic = COMMANDS.find((command) => command.name === rest[0]);
    if (rest[0] !== undefined && !topic) {
      io.err(`flotilla: unknown command "${rest[0]}"\n${USAGE}`);
      return 2;
    }
    io.out(topic ? topic.usage : USAGE);
    return 0;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) {
    io.err(`flotilla: unknown command "${name}"\n${USAGE}`);
    return 2;
  }
  const end = rest.indexOf("--");
  if ((end === -1 ? rest : rest.slice(0, end)).some(isHelp)) {
    io.out(command.usage);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`flotilla ${command.name}: ${error.message}\n\n${command.usage}`);
      return 2;
    }
    if (error instanceof CliError) {
      io.err(`flotilla: ${error.message}`);
      return error.exitCode;
    }
    let apiUrl: string | undefined;
    try {
      apiUrl = currentLogin(io.env)?.apiUrl;
    } catch {
      apiUrl = undefined;
    }
    io.err(`flotilla: ${describeError(error, apiUrl)}`);
    if (io.env.FLOTILLA_DEBUG && error instanceof Error && error.stack) io.err(error.stack);
    return 1;
  }
}
