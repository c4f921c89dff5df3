import os from "node:os";
import { type AdminUser, GLOBAL_ROLES, type GlobalRole, isGlobalRole } from "@flotilla/domain";
import { ConfigError, loadConfig } from "../../config.ts";
import { type DataDirHold, DataDirInUse, holdDataDir } from "../../db/data-dir-lock.ts";
import { type Database, openDatabase } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { adminUserByLogin, changeGlobalRole, listUsers } from "./global-roles.ts";

/**
 * `flotilla-server admin …` (docs/support.md "Platform staff"): global roles from the server host,
 * without the dashboard and without editing the database. It reads the server's configuration
 * from the same environment (DATABASE_URL, or the embedded database in FLOTILLA_DATA_DIR) and
 * audits each change as made "from the server host". The embedded database admits one process:
 * while the server runs on it, the command refuses and says what to do instead.
 */

export type CommandIo = { out(text: string): void; err(text: string): void; env: NodeJS.ProcessEnv };

export const ADMIN_USAGE = `Usage: flotilla-server admin <command>

Commands:
  grant-role <email|username> <${GLOBAL_ROLES.join("|")}>   give a user a global role
  revoke-role <email|username> <${GLOBAL_ROLES.join("|")}>  remove it
  list-roles                                                 the users holding a global role

Global roles: support_agent (answers support tickets in the support inbox, gets the staff mails)
and balena_admin (platform administrator: everything support agents do, plus Admin → Users, the
audit log of all organizations and "Log in as user").

Run it on the server host with the server's environment: it uses the same database (DATABASE_URL,
or the embedded database in FLOTILLA_DATA_DIR). With the embedded database, stop the server first
or use Admin → Users in the dashboard. A change counts from the user's next request; the dashboard
shows it after their next sign-in or token refresh (within the hour).`;

const ROLE_NAMES: Record<GlobalRole, string> = {
  support_agent: "a support agent (support_agent)",
  balena_admin: "a platform administrator (balena_admin)",
};

const who = (user: AdminUser) => (user.email ? `${user.username} <${user.email}>` : user.username);

export async function adminCommand(args: string[], io: CommandIo): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined) {
    io.err(ADMIN_USAGE);
    return 2;
  }
  if (command === "help" || command === "--help" || command === "-h") {
    io.out(ADMIN_USAGE);
    return 0;
  }
  if (command !== "grant-role" && command !== "revoke-role" && command !== "list-roles") {
    io.err(`flotilla-server admin: unknown command "${command}"\n\n${ADMIN_USAGE}`);
    return 2;
  }
  if (rest.some((arg) => arg === "--help" || arg === "-h")) {
    io.out(ADMIN_USAGE);
    return 0;
  }
  const expected = command === "list-roles" ? 0 : 2;
  if (rest.length !== expected) {
    io.err(
      `flotilla-server admin ${command}: ${expected === 0 ? "takes no arguments" : "needs a user (email or username) and a role"}\n\n${ADMIN_USAGE}`,
    );
    return 2;
  }
  const [login = "", roleName = ""] = rest;
  if (command !== "list-roles" && !isGlobalRole(roleName)) {
    io.err(`flotilla-server admin ${command}: the role must be ${GLOBAL_ROLES.join(" or ")}, not "${roleName}"`);
    return 2;
  }

  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.err(`flotilla-server admin: ${error.message}`);
    return 1;
  }

  let hold: DataDirHold | undefined;
  if (!config.databaseUrl) {
    try {
      hold = await holdDataDir(config.dataDir, `flotilla-server admin (process ${process.pid})`);
    } catch (error) {
      if (!(error instanceof DataDirInUse)) {
        io.err(`flotilla-server admin: cannot open the database (FLOTILLA_DATA_DIR): ${(error as Error).message}`);
        return 1;
      }
      io.err(
        `flotilla-server admin: ${error.holder} is using the embedded database in FLOTILLA_DATA_DIR=${config.dataDir}, ` +
          "and it admits one process at a time. Use Admin → Users in the dashboard (as a platform administrator), " +
          "or stop the server, run this command, and start the server again.",
      );
      return 1;
    }
  }

  let db: Database | undefined;
  try {
    try {
      db = (await openDatabase(config)).db;
    } catch (error) {
      const which = config.databaseUrl ? "DATABASE_URL" : "FLOTILLA_DATA_DIR";
      io.err(`flotilla-server admin: cannot open the database (${which}): ${(error as Error).message}`);
      return 1;
    }
    if (command === "list-roles") return await listRoles(db, io);

    const role = roleName as GlobalRole;
    const user = await adminUserByLogin(db, login);
    if (!user) {
      io.err(`flotilla-server admin ${command}: no user has the username or email "${login}"`);
      return 1;
    }
    const grant = command === "grant-role";
    const change = await changeGlobalRole(db, {
      user: user.id,
      role,
      grant,
      actor: undefined,
      source: "server_host",
      hostUser: hostUser(),
    });
    const name = who(change.user);
    if (grant) {
      io.out(
        change.changed
          ? `${name} is now ${ROLE_NAMES[role]}.`
          : `${name} is already ${ROLE_NAMES[role]}: nothing changed.`,
      );
    } else {
      io.out(
        change.changed
          ? `${name} is no longer ${ROLE_NAMES[role]}.`
          : `${name} is not ${ROLE_NAMES[role]}: nothing changed.`,
      );
    }
    if (change.changed) {
      io.out(
        "It counts from their next request; the dashboard shows it after their next sign-in or token refresh (within the hour).",
      );
    }
    return 0;
  } catch (error) {
    if (error instanceof FlotillaError) {
      io.err(`flotilla-server admin ${command}: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await db?.close();
    await hold?.release();
  }
}

async function listRoles(db: Database, io: CommandIo): Promise<number> {
  const users: AdminUser[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await listUsers(db, { role: "any", limit: 100, offset });
    users.push(...page.users);
    if (page.users.length < 100) break;
  }
  if (users.length === 0) {
    io.out("No user holds a global role.");
    return 0;
  }
  for (const user of users) io.out(`${user.global_roles.join(",").padEnd(27)} ${who(user)}`);
  return 0;
}

/** The operating-system account that ran the command, for the audit log. */
function hostUser(): string | undefined {
  try {
    return os.userInfo().username;
  } catch {
    return undefined;
  }
}
