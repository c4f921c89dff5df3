import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { migrate, readMigrations } from "../src/db/migrate.ts";
import { createTestDatabase } from "./harness.ts";

describe("migrations", () => {
  it("are read in journal order with their statements", () => {
    const migrations = readMigrations();
    expect(migrations[0]?.name).toBe("0000_init");
    expect(migrations[0]?.statements.length).toBeGreaterThan(1);
  });

  it("apply once: a second run (or a second instance) applies nothing", async () => {
    const { db, drop } = await createTestDatabase();
    try {
      // The test database is already migrated; running again, twice at once, must be a no-op.
      const driver = {
        kind: db.kind,
        query: db.query,
        queryArrays: async () => [],
        transaction: db.transaction,
        close: db.close,
      };
      const results = await Promise.all([migrate(driver), migrate(driver)]);
      expect(results).toEqual([[], []]);
      const { rows } = await db.query<{ count: number }>("SELECT count(*)::int AS count FROM flotilla_migration");
      expect(rows[0]?.count).toBe(readMigrations().length);
    } finally {
      await drop();
    }
  });

  it("seed the roles and the device-type catalogue, with raspberrypi4-64 on aarch64", async () => {
    const { db, drop } = await createTestDatabase();
    try {
      const { rows } = await db.query<{ slug: string; arch: string; alias: string }>(
        `SELECT d.slug, a.slug AS arch, al.is_referenced_by__alias AS alias FROM device_type d
         JOIN cpu_architecture a ON a.id = d.is_of__cpu_architecture
         JOIN device_type_alias al ON al.device_type = d.id WHERE d.slug = 'raspberrypi4-64'`,
      );
      expect(rows).toEqual([{ slug: "raspberrypi4-64", arch: "aarch64", alias: "raspberrypi4-64" }]);
      const roles = await db.query<{ name: string }>("SELECT name FROM application_membership_role ORDER BY id");
      expect(roles.rows.map((r) => r.name)).toEqual([
        "observer",
        "safe-operator",
        "operator",
        "safe-developer",
        "developer",
      ]);
      const orgRoles = await db.query<{ name: string }>("SELECT name FROM organization_membership_role ORDER BY id");
      expect(orgRoles.rows.map((r) => r.name)).toEqual(["administrator", "member"]);
    } finally {
      await drop();
    }
  });

  it("roll back entirely when a statement fails", async () => {
    const { db, drop } = await createTestDatabase();
    try {
      const driver = {
        kind: db.kind,
        query: db.query,
        queryArrays: async () => [],
        transaction: db.transaction,
        close: db.close,
      };
      const broken = [
        { name: "9999_broken", statements: ["CREATE TABLE half_done (id int)", "SELECT no_such_function()"] },
      ];
      await expect(migrate(driver, broken)).rejects.toThrow();
      const { rows } = await db.query("SELECT to_regclass('half_done') AS t");
      expect(rows[0]).toEqual({ t: null });
      const applied = await db.query("SELECT 1 FROM flotilla_migration WHERE name = '9999_broken'");
      expect(applied.rows).toEqual([]);
    } finally {
      await drop();
    }
  });

  it("have a snapshot matching the schema: drizzle-kit generates nothing new", async () => {
    // A hand-written migration must also bring the latest snapshot (db:generate, then its SQL
    // dropped), or the next generated migration would repeat it. Checked on a copy.
    const server = path.resolve(import.meta.dirname, "..");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-snapshot-"));
    try {
      fs.cpSync(path.join(server, "src/db/migrations"), path.join(dir, "migrations"), { recursive: true });
      const config = path.join(dir, "drizzle.config.ts");
      fs.writeFileSync(
        config,
        `export default ${JSON.stringify({
          dialect: "postgresql",
          schema: path.join(server, "src/db/schema/index.ts"),
          out: "migrations", // relative: drizzle-kit puts "./" before it
        })};\n`,
      );
      const { stdout, stderr } = await promisify(execFile)(
        path.join(server, "../../node_modules/.bin/drizzle-kit"),
        ["generate", "--config", config, "--name", "drift"],
        { cwd: dir },
      );
      expect(`${stdout}${stderr}`).toContain("No schema changes");
      expect(fs.readdirSync(path.join(dir, "migrations")).filter((name) => name.includes("drift"))).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
