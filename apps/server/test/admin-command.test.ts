import { execFile, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPglite, openPostgres, pgliteDir } from "../src/db/connection.ts";
import { holdDataDir, lockSocketOf } from "../src/db/data-dir-lock.ts";
import { type Database, wrapDriver } from "../src/db/index.ts";
import { grantGlobalRole } from "../src/features/users/service.ts";
import { createFactories } from "./factories.ts";
import { adminQuery, withDatabase } from "./global-setup.ts";

/**
 * `flotilla-server admin grant-role|revoke-role|list-roles` (issue #34, docs/support.md "Platform
 * staff"): the real command, spawned as an operator runs it on the server host, against a test
 * database of its own (an embedded data directory, or a PostgreSQL database when DATABASE_URL is
 * set). Changes are audited as made from the server host; the last platform administrator stays;
 * with the embedded database held by a running server the command refuses and says what to do.
 */
const BIN = path.resolve(import.meta.dirname, "../bin/flotilla-server.mjs");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-admin-cmd-"));
const databaseUrl = process.env.DATABASE_URL;
let env: Record<string, string>;
let dropDatabase: (() => Promise<void>) | undefined;

async function openTestDatabase(): Promise<Database> {
  if (databaseUrl) return wrapDriver(await openPostgres(env.DATABASE_URL ?? "", 2));
  return wrapDriver(await openPglite({ dataDir: pgliteDir(dataDir) }));
}

/** Runs the command like an operator, with the server's environment; its exit code and output. */
function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, "admin", ...args],
      { env: { PATH: process.env.PATH ?? "", HOME: os.homedir(), ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, out: stdout.trim(), err: stderr.trim() });
      },
    );
  });
}

let users: { alice: number; bob: number };

beforeAll(async () => {
  env = { FLOTILLA_DATA_DIR: dataDir, LOG_LEVEL: "silent" };
  let db: Database;
  if (databaseUrl) {
    const name = `flotilla_cmd_${crypto.randomBytes(6).toString("hex")}`;
    await adminQuery(databaseUrl, `CREATE DATABASE ${name} TEMPLATE ${inject("templateDatabase")}`);
    env.DATABASE_URL = withDatabase(databaseUrl, name);
    dropDatabase = () => adminQuery(databaseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    db = await openTestDatabase();
  } else {
    // The migrated snapshot, as the server's data directory.
    const snapshot = new Blob([fs.readFileSync(inject("pgliteSnapshot"))]);
    db = wrapDriver(await openPglite({ dataDir: pgliteDir(dataDir), loadDataDir: snapshot }));
  }
  const make = createFactories(db.orm);
  const alice = await make.user({ email: "Alice@Example.com", username: "alice" });
  const bob = await make.user({ email: "bob@example.com", username: "bob" });
  await grantGlobalRole(db.orm, bob.id, "balena_admin");
  users = { alice: alice.id, bob: bob.id };
  await db.close();
}, 60_000);

afterAll(async () => {
  await dropDatabase?.();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function inDatabase<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openTestDatabase();
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

const rolesOf = (user: number) =>
  inDatabase(async (db) =>
    (
      await db.query<{ name: string }>(
        `SELECT r.name FROM "user__has__role" h JOIN "role" r ON r.id = h.role WHERE h."user" = $1 ORDER BY r.name`,
        [user],
      )
    ).rows.map((row) => row.name),
  );

const auditOf = (user: number) =>
  inDatabase(
    async (db) =>
      (
        await db.query<{ action: string; actor_user: number | null; client_address: string | null; details: unknown }>(
          `SELECT action, actor_user, client_address, details FROM "audit_event"
            WHERE target_user = $1 AND action LIKE 'global_role.%' ORDER BY id`,
          [user],
        )
      ).rows,
  );

describe("flotilla-server admin", () => {
  it("grants a role by email, audited as done from the server host; granting it again changes nothing", async () => {
    const granted = await run("grant-role", "alice@example.COM", "support_agent");
    expect(granted).toEqual({
      code: 0,
      out: "alice <Alice@Example.com> is now a support agent (support_agent).\nIt counts from their next request; the dashboard shows it after their next sign-in or token refresh (within the hour).",
      err: "",
    });
    expect(await rolesOf(users.alice)).toEqual(["support_agent"]);
    const again = await run("grant-role", "alice", "support_agent");
    expect(again).toMatchObject({
      code: 0,
      out: "alice <Alice@Example.com> is already a support agent (support_agent): nothing changed.",
    });
    expect(await auditOf(users.alice)).toEqual([
      {
        action: "global_role.granted",
        actor_user: null,
        client_address: null,
        details: { role: "support_agent", username: "alice", from: "server host", host_user: os.userInfo().username },
      },
    ]);
  }, 120_000);

  it("lists who holds a global role, and revokes one by username", async () => {
    const listed = await run("list-roles");
    expect(listed.code).toBe(0);
    expect(listed.out.split("\n")).toEqual([
      `${"support_agent".padEnd(27)} alice <Alice@Example.com>`,
      `${"balena_admin".padEnd(27)} bob <bob@example.com>`,
    ]);
    const revoked = await run("revoke-role", "ALICE", "support_agent");
    expect(revoked.code).toBe(0);
    expect(revoked.out).toContain("alice <Alice@Example.com> is no longer a support agent (support_agent).");
    expect(await rolesOf(users.alice)).toEqual([]);
    expect((await auditOf(users.alice)).map((entry) => (entry as { action: string }).action)).toEqual([
      "global_role.granted",
      "global_role.revoked",
    ]);
  }, 120_000);

  it("never removes the last platform administrator, and refuses unknown users and roles clearly", async () => {
    const last = await run("revoke-role", "bob@example.com", "balena_admin");
    expect(last).toEqual({
      code: 1,
      out: "",
      err: "flotilla-server admin revoke-role: bob is the last platform administrator (balena_admin): make another user a platform administrator first, then remove this role.",
    });
    expect(await rolesOf(users.bob)).toEqual(["balena_admin"]);
    expect(await run("grant-role", "carol@example.com", "support_agent")).toEqual({
      code: 1,
      out: "",
      err: 'flotilla-server admin grant-role: no user has the username or email "carol@example.com"',
    });
    const badRole = await run("grant-role", "alice", "administrator");
    expect(badRole).toMatchObject({
      code: 2,
      err: 'flotilla-server admin grant-role: the role must be support_agent or balena_admin, not "administrator"',
    });
    const usage = await run("grant-role", "alice");
    expect(usage.code).toBe(2);
    expect(usage.err).toContain("needs a user (email or username) and a role");
    expect(usage.err).toContain("Usage: flotilla-server admin <command>");
  }, 120_000);

  it.skipIf(Boolean(databaseUrl))(
    "refuses while a server holds the embedded database, saying to stop it or use the dashboard",
    async () => {
      const server = await holdDataDir(dataDir, "the Flotilla server (process 4242)");
      try {
        const refused = await run("grant-role", "alice", "balena_admin");
        expect(refused).toEqual({
          code: 1,
          out: "",
          err: `flotilla-server admin: the Flotilla server (process 4242) is using the embedded database in FLOTILLA_DATA_DIR=${dataDir}, and it admits one process at a time. Use Admin → Users in the dashboard (as a platform administrator), or stop the server, run this command, and start the server again.`,
        });
      } finally {
        await server?.release();
      }
      expect(await rolesOf(users.alice)).toEqual([]);
      // A server that was killed leaves its socket behind: it answers nothing, and the command goes ahead.
      const socket = lockSocketOf(dataDir);
      const killed = spawn(process.execPath, [
        "-e",
        "require('node:net').createServer().listen(process.argv[1]); setInterval(() => {}, 1000)",
        socket,
      ]);
      await expect.poll(() => fs.existsSync(socket)).toBe(true);
      killed.kill("SIGKILL");
      await new Promise((resolve) => killed.once("exit", resolve));
      expect(fs.existsSync(socket)).toBe(true);
      expect((await run("grant-role", "alice", "balena_admin")).code).toBe(0);
      expect(fs.existsSync(socket)).toBe(false);
      expect(await rolesOf(users.alice)).toEqual(["balena_admin"]);
    },
    120_000,
  );
});
