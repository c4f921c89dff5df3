import fs from "node:fs";
import path from "node:path";
import type { Driver } from "./connection.ts";

const MIGRATIONS_DIR = new URL("./migrations/", import.meta.url).pathname;
/** Any constant: every Flotilla instance takes the same advisory lock while it migrates. */
const MIGRATION_LOCK_ID = 7_314_205;

type Migration = { name: string; statements: string[] };

/** The checked-in migrations, in the order of drizzle-kit's journal. */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const journal = JSON.parse(fs.readFileSync(path.join(dir, "meta", "_journal.json"), "utf8")) as {
    entries: { tag: string }[];
  };
  return journal.entries.map(({ tag }) => ({
    name: tag,
    statements: fs
      .readFileSync(path.join(dir, `${tag}.sql`), "utf8")
      .split("--> statement-breakpoint")
      .map((s) => s.trim())
      .filter(Boolean),
  }));
}

/**
 * Applies the migrations not yet applied, all in one transaction under an advisory lock, so two
 * instances starting together apply each migration exactly once and a failure leaves nothing half-done.
 */
export async function migrate(db: Driver, migrations = readMigrations()): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_ID]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS flotilla_migration (
        name text PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`,
    );
    const { rows } = await tx.query<{ name: string }>("SELECT name FROM flotilla_migration");
    const applied = new Set(rows.map((r) => r.name));
    const pending = migrations.filter((m) => !applied.has(m.name));
    for (const migration of pending) {
      for (const statement of migration.statements) await tx.query(statement);
      await tx.query("INSERT INTO flotilla_migration (name) VALUES ($1)", [migration.name]);
    }
    return pending.map((m) => m.name);
  });
}
