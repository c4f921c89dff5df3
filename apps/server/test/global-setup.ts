import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { openPglite, openPostgres } from "../src/db/connection.ts";
import { migrate } from "../src/db/migrate.ts";

type Provide = (key: string, value: string) => void;

/**
 * Migrates one database once per run; every test file then starts from a copy of it:
 * a PGlite data-dir tarball, or a PostgreSQL template database when DATABASE_URL is set.
 * `project` (letters and underscores: it is part of a database name) names them: the server, agent and CLI projects run in one vitest process and each
 * must keep its own (one project's teardown would pull another's database from under it).
 */
export function snapshotSetup(project: string) {
  return async function setup({ provide }: { provide: Provide }) {
    const databaseUrl = process.env.DATABASE_URL;
    if (databaseUrl) {
      const template = `flotilla_${project}_template_${process.pid}`;
      await adminQuery(databaseUrl, `DROP DATABASE IF EXISTS ${template}`);
      await adminQuery(databaseUrl, `CREATE DATABASE ${template}`);
      const driver = await openPostgres(withDatabase(databaseUrl, template), 1);
      await migrate(driver);
      await driver.close();
      provide("templateDatabase", template);
      return async () => {
        await adminQuery(databaseUrl, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
      };
    }
    const driver = await openPglite({});
    await migrate(driver);
    const file = path.join(os.tmpdir(), `flotilla-${project}-${process.pid}.tar.gz`);
    const dump = await driver.dump?.();
    if (!dump) throw new Error("PGlite cannot dump its data directory");
    fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    await driver.close();
    provide("pgliteSnapshot", file);
    return () => fs.rmSync(file, { force: true });
  };
}

export default snapshotSetup("test");

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function adminQuery(url: string, text: string) {
  const client = new pg.Client({ connectionString: withDatabase(url, "postgres") });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
