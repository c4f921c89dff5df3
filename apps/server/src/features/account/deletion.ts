import type { Tx } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { sensitiveActionError } from "../../lib/delegation.ts";
import type { ResourceHooks } from "../../odata/index.ts";

/**
 * Account deletion through the data API (`DELETE /v7/user({id})`, spec 1 §4): a recent sign-in
 * (never an OAuth application's token);
 * refused while an organization the user administers has a custom (not self-serve) plan; the
 * subscriptions of the organizations the user alone administers go back to the free plan (monthly)
 * and those organizations are deleted; then the user row goes, and with it (by cascade) sessions,
 * memberships, SSH keys, recovery codes, and (afterDelete) the actor with its API keys.
 */
export const userHooks: ResourceHooks = {
  async beforeDelete({ tx, ids, actorId, authTime, delegated }) {
    const error = sensitiveActionError({ authTime, delegated });
    if (error) throw error;
    for (const id of ids) await prepareDeletion(tx, id, actorId);
  },
  async afterDelete({ tx, rows }) {
    const actors = rows.map((row) => Number(row.actor));
    await tx.query('DELETE FROM "actor" WHERE id = ANY($1::int[])', [actors]);
  },
};

async function prepareDeletion(tx: Tx, userId: number, actorId: number | undefined) {
  const { rows: self } = await tx.query<{ actor: number }>('SELECT actor FROM "user" WHERE id = $1', [userId]);
  // The permission filter lets users delete only themselves; this is the belt to those braces.
  if (self[0]?.actor !== actorId) throw new FlotillaError("unauthorized");

  const { rows: administered } = await tx.query<{ id: number; sole: boolean; custom: boolean }>(
    `SELECT o.id,
            (SELECT count(*) FROM "organization_membership" a
               JOIN "organization_membership_role" ar ON ar.id = a.organization_membership_role
              WHERE a.is_member_of__organization = o.id AND ar.name = 'administrator') = 1 AS sole,
            EXISTS (SELECT 1 FROM "subscription" s JOIN "plan" p ON p.id = s.is_for__plan
                     WHERE s.is_for__organization = o.id AND NOT p.can_self_serve
                       AND (s.ends_on__date IS NULL OR s.ends_on__date > now())) AS custom
       FROM "organization" o
       JOIN "organization_membership" m ON m.is_member_of__organization = o.id
       JOIN "organization_membership_role" r ON r.id = m.organization_membership_role
      WHERE m.user = $1 AND r.name = 'administrator'
      ORDER BY o.id`,
    [userId],
  );
  if (administered.some((org) => org.custom)) {
    throw new FlotillaError("account_deletion_blocked");
  }
  const sole = administered.filter((org) => org.sole).map((org) => org.id);
  if (sole.length === 0) return;
  // Cancel: the open subscription ends today and the free plan (monthly) starts, as "Account Deletion".
  await tx.query(
    `UPDATE "subscription" SET ends_on__date = greatest(starts_on__date, now())
      WHERE is_for__organization = ANY($1::int[]) AND ends_on__date IS NULL
        AND is_for__plan <> (SELECT id FROM "plan" WHERE billing_code = 'free')`,
    [sole],
  );
  await tx.query(
    `INSERT INTO "subscription" (is_for__organization, is_for__plan, billing_cycle, origin)
     SELECT o, p.id, 'monthly', 'Account Deletion' FROM unnest($1::int[]) AS o, "plan" p
      WHERE p.billing_code = 'free'
        AND NOT EXISTS (SELECT 1 FROM "subscription" s WHERE s.is_for__organization = o AND s.ends_on__date IS NULL)`,
    [sole],
  );
  await tx.query('DELETE FROM "organization" WHERE id = ANY($1::int[])', [sole]);
}
