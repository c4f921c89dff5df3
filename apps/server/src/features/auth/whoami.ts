import type { Queryable } from "../../db/index.ts";

/**
 * `/actor/v1/whoami` for the actors that are no users, as balena answers them: a device key is
 * its device (`uuid`), a provisioning key its fleet (`slug`).
 */
export type ActorIdentity =
  | { id: number; actorType: "device"; actorTypeId: number; uuid: string }
  | { id: number; actorType: "application"; actorTypeId: number; slug: string };

export async function deviceOrFleetActor(
  db: Pick<Queryable, "query">,
  actor: number,
): Promise<ActorIdentity | undefined> {
  const { rows } = await db.query<{ kind: "device" | "application"; id: number; name: string }>(
    `SELECT 'device' AS kind, id, uuid AS name FROM "device" WHERE actor = $1
     UNION ALL
     SELECT 'application' AS kind, id, slug AS name FROM "application" WHERE actor = $1
     LIMIT 1`,
    [actor],
  );
  const row = rows[0];
  if (!row) return undefined;
  return row.kind === "device"
    ? { id: actor, actorType: "device", actorTypeId: row.id, uuid: row.name }
    : { id: actor, actorType: "application", actorTypeId: row.id, slug: row.name };
}
