import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../../test/harness.ts";
import type { Database } from "../db/index.ts";
import { overallStatusSql } from "./devices.ts";
import { model } from "./index.ts";

let db: Database;
let drop: () => Promise<void>;
beforeAll(async () => {
  ({ db, drop } = await createTestDatabase());
});
afterAll(() => drop());

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

describe("the data model", () => {
  it.each(model.resources().map((r) => [r.name, r] as const))(
    "%s reads its columns and computed fields",
    async (_name, resource) => {
      const columns = resource.fields.map((f) =>
        f.computed ? `${f.computed("t")} AS ${quote(f.name)}` : `t.${quote(f.column ?? f.name)} AS ${quote(f.name)}`,
      );
      await expect(
        db.query(`SELECT ${columns.join(", ")} FROM ${quote(resource.table)} AS t LIMIT 1`),
      ).resolves.toBeDefined();
    },
  );

  it("points every foreign key and navigation at a resource that exists, with a valid join", async () => {
    for (const resource of model.resources()) {
      for (const f of resource.fields) {
        if (f.references) expect(model.resource(f.references), `${resource.name}.${f.name}`).toBeDefined();
      }
      for (const nav of resource.navigations ?? []) {
        const target = model.resource(nav.target);
        expect(target, `${resource.name}/${nav.name}`).toBeDefined();
        if (!target) continue;
        await db.query(
          `SELECT 1 FROM ${quote(resource.table)} AS a JOIN ${quote(target.table)} AS b ON ${nav.join("a", "b")} LIMIT 1`,
        );
      }
    }
  });

  it("answers the SDK's names and aliases", () => {
    for (const name of [
      "device_environment_variable",
      "device__has__env_var_name",
      "organization_membership",
      "service_install",
      "release_image",
    ]) {
      expect(model.resource(name), name).toBeDefined();
    }
  });

  it("never exposes password hashes", () => {
    const user = model.resource("user");
    expect(user?.fields.map((f) => f.column ?? f.name)).not.toContain("password_hash");
  });

  it("keeps the overall status expression the one its indexes are built on (migrations 0007, 0025, 0033)", async () => {
    // PostgreSQL uses an expression index only for the very same expression: lists by status
    // would scan every device of a fleet if the model and the migration drifted apart.
    const plan = await db.transaction(async (tx) => {
      await tx.query("SET LOCAL enable_seqscan = off");
      const { rows } = await tx.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT d.id FROM "device" AS d WHERE d."belongs_to__application" = 1 AND ${overallStatusSql("d")} = 'inactive'`,
      );
      return rows.map((row) => row["QUERY PLAN"]).join("\n");
    });
    expect(plan).toContain("device_application_status_name_idx");
    // The status condition is answered by the index (an Index Cond), not filtered row by row.
    expect(plan).toMatch(/Index Cond: .*CASE WHEN/);
  });
});
