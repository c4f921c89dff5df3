import type { Queryable } from "../../db/index.ts";

type Db = Pick<Queryable, "query">;

/**
 * True when `keyHash` is the device's own key or a live provisioning key of its fleet: balenaOS
 * connects with its provisioning key until the Supervisor has exchanged it for a device key
 * (meta-balena's prepare-openvpn), as openBalena's VPN allows.
 */
export async function deviceForVpn(db: Db, uuid: string, keyHash: string): Promise<boolean> {
  if (!uuid) return false;
  const { rows } = await db.query(
    `SELECT 1 FROM "device" d
       JOIN "application" a ON a.id = d.belongs_to__application
       JOIN "api_key" k ON k.key_hash = $2 AND (k.expiry_date IS NULL OR k.expiry_date > now())
      WHERE d.uuid = $1
        AND ((k.role = 'device-api-key' AND k.is_of__actor = d.actor)
          OR (k.role = 'provisioning-api-key' AND k.is_of__actor = a.actor))
      LIMIT 1`,
    [uuid, keyHash],
  );
  return rows.length > 0;
}

export async function vpnDeviceByUuid(db: Db, uuid: string): Promise<{ id: number; fleet: number } | undefined> {
  const { rows } = await db.query<{ id: number; fleet: number }>(
    `SELECT id, belongs_to__application AS fleet FROM "device" WHERE uuid = $1`,
    [uuid],
  );
  return rows[0];
}

/** A user's actor and stored SSH public keys, by username. */
export async function userKeysByUsername(
  db: Db,
  username: string,
): Promise<{ actor: number; keys: string[] } | undefined> {
  const { rows } = await db.query<{ actor: number; keys: string[] }>(
    `SELECT u.actor, COALESCE(array_agg(k.public_key ORDER BY k.id) FILTER (WHERE k.id IS NOT NULL), '{}') AS keys
       FROM "user" u LEFT JOIN "user_public_key" k ON k.user = u.id
      WHERE u.username = $1
      GROUP BY u.actor`,
    [username],
  );
  return rows[0];
}
