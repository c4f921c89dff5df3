// biome-ignore-all lint/style/noRestrictedImports: the integration tests boot the real API through the server's test harness, which reads the snapshot made here.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openPglite, openPostgres } from "../../server/src/db/connection.ts";
import { migrate } from "../../server/src/db/migrate.ts";
import { adminQuery, withDatabase } from "../../server/test/global-setup.ts";

/**
 * The server's test setup (one migrated database per run, copied per test file) under names of
 * the CLI's own: both projects run in one vitest process, and the server's names carry only
 * the process id, so sharing them would let one project's setup or teardown pull the database
 * from under the other's tests.
 */
export default async function setup({ provide }: { provide: (key: string, value: string) => void }) {
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    const template = `flotilla_cli_test_template_${process.pid}`;
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
  const file = path.join(os.tmpdir(), `flotilla-cli-test-${process.pid}.tar.gz`);
  const dump = await driver.dump?.();
  if (!dump) throw new Error("PGlite cannot dump its data directory");
  fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  await driver.close();
  provide("pgliteSnapshot", file);
  return () => fs.rmSync(file, { force: true });
}
