import { FlotillaError } from "../../errors.ts";
import type { HookContext, ResourceHooks } from "../../odata/index.ts";

/** Stamps when a release became final, once (spec 2 §5: finalizing is one way). */
async function stampFinalized(tx: HookContext["tx"], ids: number[]) {
  await tx.query(
    `UPDATE "release" SET "is_finalized_at__date" = now()
      WHERE "id" = ANY($1::bigint[]) AND "is_final" AND "is_finalized_at__date" IS NULL`,
    [ids],
  );
}

export const releaseHooks: ResourceHooks = {
  async afterCreate({ tx, id, body }) {
    if (body.is_final === true) await stampFinalized(tx, [id]);
  },
  async beforeUpdate({ tx, ids, body }) {
    if (body.is_final !== false) return;
    const { rows } = await tx.query(`SELECT 1 FROM "release" WHERE "id" = ANY($1::bigint[]) AND "is_final" LIMIT 1`, [
      ids,
    ]);
    if (rows.length > 0) throw new FlotillaError("bad_request", "A final release cannot be made a draft again");
  },
  async afterUpdate({ tx, ids, body }) {
    if (body.is_final === true) await stampFinalized(tx, ids);
  },
};
