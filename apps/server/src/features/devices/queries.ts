import type { Queryable } from "../../db/index.ts";
import { isFrozenSql, targetReleaseSql } from "../../model/devices.ts";

/** SQL of the device feature: the device path reads and the batched writes. */

type Db = Pick<Queryable, "query">;

export type DeviceIdentity = { id: number; uuid: string; actor: number; fleet: number };

/** The devices acting through their own keys, by actor. */
export async function devicesByActor(db: Db, actors: readonly number[]): Promise<Map<number, DeviceIdentity>> {
  const { rows } = await db.query<DeviceIdentity>(
    `SELECT id, uuid, actor, belongs_to__application AS fleet FROM "device" WHERE actor = ANY($1::int[])`,
    [actors],
  );
  return new Map(rows.map((row) => [row.actor, row]));
}

export async function deviceByUuid(db: Db, uuid: string): Promise<DeviceIdentity | undefined> {
  const { rows } = await db.query<DeviceIdentity>(
    `SELECT id, uuid, actor, belongs_to__application AS fleet FROM "device" WHERE uuid = $1`,
    [uuid],
  );
  return rows[0];
}

export async function deviceById(db: Db, id: number): Promise<DeviceIdentity | undefined> {
  const { rows } = await db.query<DeviceIdentity>(
    `SELECT id, uuid, actor, belongs_to__application AS fleet FROM "device" WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** The supervisor version the device last reported (null before its first report). */
export async function supervisorVersionOf(db: Db, id: number): Promise<string | null> {
  const { rows } = await db.query<{ supervisor_version: string | null }>(
    `SELECT supervisor_version FROM "device" WHERE id = $1`,
    [id],
  );
  return rows[0]?.supervisor_version ?? null;
}

export type TargetStateFacts = {
  id: number;
  uuid: string;
  device_name: string;
  fleet: number;
  fleet_uuid: string;
  app_name: string;
  is_of__class: string;
  release: number | null;
};

/**
 * The device, its fleet, and the release it should run: pinned, else its wave's in a phased
 * rollout (docs/rollouts.md), else the fleet's, else its latest final one.
 */
export async function targetStateFacts(db: Db, uuid: string): Promise<TargetStateFacts | undefined> {
  const { rows } = await db.query<TargetStateFacts>(
    `SELECT d.id, d.uuid, d.device_name, a.id AS fleet, a.uuid AS fleet_uuid, a.app_name, a.is_of__class,
            ${targetReleaseSql("d", "a")} AS release
       FROM "device" d JOIN "application" a ON a.id = d.belongs_to__application WHERE d.uuid = $1`,
    [uuid],
  );
  return rows[0];
}

export type FleetStateFacts = {
  id: number;
  uuid: string;
  actor: number;
  app_name: string;
  is_of__class: string;
  is_host: boolean;
  release: number | null;
};

/**
 * A fleet and a release for its default state (balena's `GET /device/v3/fleet/{uuid}/state`):
 * the successful release with that commit when one is asked for, else the release the fleet's
 * devices run (the fleet's, else its latest final one when it tracks the latest).
 */
export async function fleetStateFacts(db: Db, uuid: string, commit?: string): Promise<FleetStateFacts | undefined> {
  const { rows } = await db.query<FleetStateFacts>(
    `SELECT a.id, a.uuid, a.actor, a.app_name, a.is_of__class, a.is_host,
            CASE WHEN $2::text IS NOT NULL THEN (
              SELECT r.id FROM "release" r WHERE r.belongs_to__application = a.id AND r."commit" = $2 AND r.status = 'success')
            ELSE COALESCE(a.should_be_running__release,
              CASE WHEN a.should_track_latest_release THEN (
                SELECT r.id FROM "release" r WHERE r.belongs_to__application = a.id AND r.status = 'success'
                   AND r.is_final AND NOT r.is_invalidated ORDER BY r.created_at DESC, r.id DESC LIMIT 1) END) END AS release
       FROM "application" a WHERE a.uuid = $1`,
    [uuid, commit ?? null],
  );
  return rows[0];
}

/** Is the actor a device of this fleet (a device key reading its fleet's default state)? */
export async function isDeviceOfFleet(db: Db, actor: number, fleet: number): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM "device" WHERE actor = $1 AND belongs_to__application = $2`, [
    actor,
    fleet,
  ]);
  return rows.length > 0;
}

type Pair = { name: string; value: string };

/** Fleet then device config variables: the device's win. */
export async function configVariables(db: Db, fleet: number, device: number): Promise<Pair[]> {
  const { rows } = await db.query<Pair>(
    `SELECT name, value FROM (
       SELECT name, value, 0 AS o FROM "application_config_variable" WHERE application = $1
       UNION ALL SELECT name, value, 1 AS o FROM "device_config_variable" WHERE device = $2) v ORDER BY o, name`,
    [fleet, device],
  );
  return rows;
}

/** Fleet then device environment variables, each with its level (the device's win). */
export async function environmentVariables(
  db: Db,
  fleet: number,
  device: number,
): Promise<(Pair & { level: "fleet" | "device" })[]> {
  const { rows } = await db.query<Pair & { level: "fleet" | "device" }>(
    `SELECT name, value, level FROM (
       SELECT name, value, 'fleet' AS level, 0 AS o FROM "application_environment_variable" WHERE application = $1
       UNION ALL SELECT name, value, 'device', 1 AS o FROM "device_environment_variable" WHERE device = $2) v ORDER BY o, name`,
    [fleet, device],
  );
  return rows;
}

export type ReleaseService = {
  service_id: number;
  service_name: string;
  image_id: number;
  image: string | null;
  labels: Record<string, string> | null;
  /** The image's own environment (from the release build). */
  image_environment: Record<string, string> | null;
  /** The fleet's variables of this service. */
  environment: Record<string, string> | null;
  device_environment: Record<string, string> | null;
};

export async function releaseFacts(db: Db, release: number) {
  const { rows } = await db.query<{ id: number; commit: string; composition: unknown }>(
    `SELECT id, "commit", composition FROM "release" WHERE id = $1`,
    [release],
  );
  return rows[0];
}

/**
 * A release's services with their image (by digest once pushed), labels (service then image), the image's environment,
 * the fleet's service variables and the device's own service variables, each as a JSON object.
 */
export async function releaseServices(db: Db, release: number, device: number): Promise<ReleaseService[]> {
  const { rows } = await db.query<ReleaseService>(
    `SELECT s.id AS service_id, s.service_name, i.id AS image_id,
            -- A pushed image is named by its digest: the device runs exactly what was built.
            CASE WHEN i.content_hash ~ '^sha256:[0-9a-f]{64}$' AND position('@' IN i.is_stored_at__image_location) = 0
                 THEN i.is_stored_at__image_location || '@' || i.content_hash
                 ELSE i.is_stored_at__image_location END AS image,
            (SELECT jsonb_object_agg(l.k, l.v) FROM (
               SELECT label_name AS k, value AS v FROM "service_label" WHERE service = s.id
               UNION ALL SELECT label_name, value FROM "image_label" WHERE release_image = ri.id) l) AS labels,
            (SELECT jsonb_object_agg(name, value) FROM "image_environment_variable"
              WHERE release_image = ri.id) AS image_environment,
            (SELECT jsonb_object_agg(name, value) FROM "service_environment_variable"
              WHERE service = s.id) AS environment,
            (SELECT jsonb_object_agg(dv.name, dv.value) FROM "device_service_environment_variable" dv
               JOIN "service_install" si ON si.id = dv.service_install
              WHERE si.device = $2 AND si.installs__service = s.id) AS device_environment
       FROM "release_image" ri JOIN "image" i ON i.id = ri.image JOIN "service" s ON s.id = i.is_a_build_of__service
      WHERE ri.is_part_of__release = $1 ORDER BY s.service_name`,
    [release, device],
  );
  return rows;
}

/** A fleet's release by commit (current state reports name releases by commit). */
export async function releaseByCommit(db: Db, fleet: number, commit: string) {
  const { rows } = await db.query<{ id: number }>(
    `SELECT id FROM "release" WHERE belongs_to__application = $1 AND "commit" = $2`,
    [fleet, commit],
  );
  return rows[0]?.id;
}

/** A release's images by service name (state reports name services, installs are per image). */
export async function releaseImagesByService(
  db: Db,
  release: number,
): Promise<Map<string, { image: number; service: number }>> {
  const { rows } = await db.query<{ service_name: string; image: number; service: number }>(
    `SELECT s.service_name, i.id AS image, s.id AS service FROM "release_image" ri
       JOIN "image" i ON i.id = ri.image JOIN "service" s ON s.id = i.is_a_build_of__service
      WHERE ri.is_part_of__release = $1`,
    [release],
  );
  return new Map(rows.map((r) => [r.service_name, { image: Number(r.image), service: Number(r.service) }]));
}

export type ImageInstallRow = {
  device: number;
  image: number;
  service: number;
  release: number;
  status: string;
  download_progress: number | null;
};

/** Upserts image installs (and the service installs they imply) in one statement each. */
/** Ends the image installs of each device but those of `images` (what it reported last). */
export async function endImageInstalls(db: Db, rows: { device: number; images: number[] }[]) {
  if (rows.length === 0) return;
  await db.query(
    `DELETE FROM "image_install" ii USING jsonb_to_recordset($1::jsonb) AS v(device int, images jsonb)
      WHERE ii.device = v.device AND NOT v.images @> to_jsonb(ii.installs__image)`,
    [JSON.stringify(rows)],
  );
}

export async function writeImageInstalls(db: Db, rows: ImageInstallRow[]) {
  if (rows.length === 0) return;
  const json = JSON.stringify(rows);
  await db.query(
    `INSERT INTO "image_install" (device, installs__image, is_provided_by__release, status, download_progress)
     SELECT v.device, v.image, v.release, v.status, v.download_progress
       FROM jsonb_to_recordset($1::jsonb) AS v(device int, image int, release int, status text, download_progress int)
      -- A device or release deleted since its report is skipped, not a failed batch.
      WHERE EXISTS (SELECT 1 FROM "device" d WHERE d.id = v.device)
        AND EXISTS (SELECT 1 FROM "release_image" ri WHERE ri.image = v.image AND ri.is_part_of__release = v.release)
     ON CONFLICT (device, installs__image) DO UPDATE SET status = EXCLUDED.status,
       download_progress = EXCLUDED.download_progress, is_provided_by__release = EXCLUDED.is_provided_by__release`,
    [json],
  );
  await db.query(
    `INSERT INTO "service_install" (device, installs__service)
     SELECT DISTINCT v.device, v.service FROM jsonb_to_recordset($1::jsonb) AS v(device int, service int)
      WHERE EXISTS (SELECT 1 FROM "device" d WHERE d.id = v.device)
        AND EXISTS (SELECT 1 FROM "service" s WHERE s.id = v.service)
     ON CONFLICT (device, installs__service) DO NOTHING`,
    [json],
  );
}

export type FleetRelayTarget = { id: number; uuid: string; frozen: boolean; supervisor_version: string | null };

/** A fleet's devices on cloudlink now: those a fleet-wide supervisor action reaches. */
export async function connectedDevicesOf(db: Db, fleetId: number): Promise<FleetRelayTarget[]> {
  const { rows } = await db.query<FleetRelayTarget>(
    `SELECT d.id, d.uuid, ${isFrozenSql("d")} AS frozen, d.supervisor_version
       FROM "device" d WHERE d.belongs_to__application = $1 AND d.is_connected_to_vpn ORDER BY d.id`,
    [fleetId],
  );
  return rows;
}

/** Does the fleet exist? (Whether the caller may see it is the permission check's business.) */
export async function fleetExists(db: Db, fleetId: number): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM "application" WHERE id = $1`, [fleetId]);
  return rows.length > 0;
}

/**
 * `is_connected_to_vpn` and `last_vpn_event` follow the cloudlink socket (and end an `is_online` a
 * user wrote: the device's own connectivity speaks again). Each connect carries the time its
 * socket arrived and answers it (as text: the microseconds survive), which the socket's close
 * names; or null when the device is connected through a socket that arrived later, whose connect
 * was written first (several workers or instances under a connect storm write in any order):
 * that close must not write. `last_vpn_event` is then the arrival of the device's newest socket.
 * Written for many devices at once: a restart reconnects every device together.
 */
export async function vpnConnected(
  db: Db,
  connects: readonly { id: number; at: string }[],
): Promise<(string | null)[]> {
  const { rows } = await db.query<{ i: number; at: string | null }>(
    `WITH input AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(i int, id int, at timestamptz)),
          latest AS (SELECT id, max(at) AS at FROM input GROUP BY id),
          applied AS (
            UPDATE "device" d SET is_connected_to_vpn = true, last_vpn_event = l.at, written_is_online = NULL
              FROM latest l
             WHERE d.id = l.id
               AND (d.is_connected_to_vpn IS NOT TRUE OR d.last_vpn_event IS NULL OR d.last_vpn_event < l.at)
            RETURNING d.id, d.last_vpn_event AS at)
     SELECT input.i, CASE WHEN applied.at = input.at THEN input.at::text END AS at
       FROM input LEFT JOIN applied ON applied.id = input.id`,
    [JSON.stringify(connects.map(({ id, at }, i) => ({ i, id, at })))],
  );
  const answers: (string | null)[] = connects.map(() => null);
  for (const row of rows) answers[row.i] = row.at;
  return answers;
}

/**
 * The sockets that connected at `since` closed: each device is off cloudlink, unless a newer
 * socket of it connected since. With several instances the old socket's close and the new one's
 * connect are written by different instances in any order; the newer connect must win.
 * Without `since` (its connect was not written) the close is written as it comes.
 */
export async function vpnDisconnected(db: Db, closes: readonly { id: number; since: string | undefined }[]) {
  await db.query(
    `UPDATE "device" d SET is_connected_to_vpn = false, last_vpn_event = now(), written_is_online = NULL
       FROM jsonb_to_recordset($1::jsonb) AS v(id int, since text)
      WHERE d.id = v.id AND (v.since IS NULL OR d.last_vpn_event = v.since::timestamptz)`,
    [JSON.stringify(closes.map(({ id, since }) => ({ id, since: since ?? null })))],
  );
}

/** `is_online` as a user wrote it (null: what the heartbeat and cloudlink say again). */
export async function writeUserIsOnline(db: Db, deviceIds: readonly number[], value: boolean | null) {
  await db.query(`UPDATE "device" SET written_is_online = $2 WHERE id = ANY($1::int[])`, [[...deviceIds], value]);
}
