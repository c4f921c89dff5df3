import { handleFromName } from "@flotilla/domain";
import { z } from "zod";
import { FlotillaError } from "../../errors.ts";
import { parseInput } from "../../lib/validation.ts";
import type { ResourceHooks } from "../../odata/index.ts";

const organizationName = z.string({ error: "A name is required" }).trim().min(1, "A name is required").max(100);

/**
 * Organizations created through the data API: a unique handle from the name when none is given,
 * and the creator becomes its administrator in the same transaction.
 */
export const organizationHooks: ResourceHooks = {
  async beforeCreate({ tx, body }) {
    body.name = parseInput(organizationName, body.name);
    const base = body.handle === undefined ? handleFromName(String(body.name)) : String(body.handle);
    if (!/^[a-z0-9_-]+$/.test(base)) {
      throw new FlotillaError(
        "bad_request",
        "The handle can only contain lowercase letters, digits, hyphens or underscores",
      );
    }
    if (body.handle === undefined) {
      const { rows } = await tx.query<{ handle: string }>(
        'SELECT lower(handle) AS handle FROM "organization" WHERE lower(handle) LIKE $1',
        [`${base.replace(/[_%\\]/g, "\\$&")}%`],
      );
      const taken = new Set(rows.map((r) => r.handle));
      let handle = base;
      for (let n = 1; taken.has(handle); n++) handle = `${base}${n}`;
      body.handle = handle;
    }
  },

  async afterCreate({ tx, actorId, id }) {
    const { rowCount } = await tx.query(
      `INSERT INTO "organization_membership" ("user", is_member_of__organization, organization_membership_role)
       SELECT u.id, $2, r.id FROM "user" u, "organization_membership_role" r WHERE u.actor = $1 AND r.name = 'administrator'`,
      [actorId, id],
    );
    if (rowCount !== 1) throw new FlotillaError("forbidden", "Only users can create organizations");
  },
};
