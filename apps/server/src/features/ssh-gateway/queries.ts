import type { Queryable } from "../../db/index.ts";

/** SQL of the SSH gateway: who a username is, with the SSH keys they stored, and a device's containers. */

type Db = Pick<Queryable, "query">;

export type SshUser = {
  id: number;
  actor: number;
  username: string;
  email: string | null;
  public_keys: string[];
};

/** The user of an SSH login (usernames are unique regardless of case) and their public keys. */
export async function sshUser(db: Db, username: string): Promise<SshUser | undefined> {
  const { rows } = await db.query<SshUser>(
    `SELECT u.id, u.actor, u.username, u.email,
            COALESCE((SELECT array_agg(k.public_key ORDER BY k.id) FROM "user_public_key" k WHERE k."user" = u.id), '{}') AS public_keys
       FROM "user" u WHERE lower(u.username) = lower($1)`,
    [username],
  );
  return rows[0];
}

export type RunningContainer = { service_name: string; image: number; release: number; commit: string };

/**
 * The containers the device runs now, named as balena's supervisor names them
 * (`{service}_{image}_{release}_{commit}`), for balena-cli's container listing.
 */
export async function runningContainers(db: Db, deviceId: number): Promise<RunningContainer[]> {
  const { rows } = await db.query<RunningContainer>(
    `SELECT DISTINCT s.service_name, i.id AS image, r.id AS release, r.commit
       FROM "image_install" ii
       JOIN "device" d ON d.id = ii.device
       JOIN "image" i ON i.id = ii.installs__image
       JOIN "service" s ON s.id = i.is_a_build_of__service
       JOIN "release" r ON r.id = ii.is_provided_by__release
      WHERE ii.device = $1 AND lower(ii.status) = 'running'
        AND (d.is_running__release IS NULL OR ii.is_provided_by__release = d.is_running__release)
      ORDER BY s.service_name`,
    [deviceId],
  );
  return rows;
}
