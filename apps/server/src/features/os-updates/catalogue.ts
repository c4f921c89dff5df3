import { OS_CATALOGUE_ORGANIZATION, type OsRelease } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";

/**
 * The public OS catalogue (migration 0013): the host-OS fleets of the system organization per
 * device type, their final successful releases, and the supervisor fleets per CPU architecture.
 * The same rows balena-sdk reads through the data API (os.getAvailableOsVersions,
 * os.getSupervisorReleasesForCpuArchitecture).
 */

type Db = Pick<Queryable, "query">;

const RAW_VERSION = `(r.semver_major || '.' || r.semver_minor || '.' || r.semver_patch
  || CASE WHEN r.semver_prerelease <> '' THEN '-' || r.semver_prerelease ELSE '' END
  || CASE WHEN r.revision IS NOT NULL AND r.revision > 0 THEN '+rev' || r.revision ELSE '' END)`;

export type CatalogueRelease = OsRelease & { id: number };

/** The device type's OS releases (final, successful, not invalidated), with their OS type and base. */
export async function osReleasesOf(db: Db, deviceType: number): Promise<CatalogueRelease[]> {
  const { rows } = await db.query<CatalogueRelease>(
    `SELECT r.id, ${RAW_VERSION} AS raw_version, r.variant,
            COALESCE((SELECT t.value FROM "application_tag" t WHERE t.application = a.id AND t.tag_key = 'release-policy'), 'default') AS "osType",
            (SELECT rt.value FROM "release_tag" rt WHERE rt.release = r.id AND rt.tag_key = 'meta-balena-base') AS "basedOnVersion"
       FROM "release" r
       JOIN "application" a ON a.id = r.belongs_to__application
       JOIN "organization" o ON o.id = a.organization
      WHERE a.is_host AND a.is_public AND o.handle = $2 AND a.is_for__device_type = $1
        AND r.status = 'success' AND r.is_final AND NOT r.is_invalidated`,
    [deviceType, OS_CATALOGUE_ORGANIZATION],
  );
  return rows.map((row) => ({ ...row, basedOnVersion: row.basedOnVersion ?? undefined }));
}

export type SupervisorRelease = {
  id: number;
  raw_version: string;
  status: string | null;
  is_final: boolean;
  is_invalidated: boolean;
  architecture: number;
  commit: string;
  fleet_uuid: string;
  fleet_slug: string;
};

/**
 * A release of a public supervisor fleet (`balena_os/<arch>-supervisor`), with the CPU
 * architecture it is for; undefined for any other release.
 */
export async function supervisorRelease(db: Db, id: number): Promise<SupervisorRelease | undefined> {
  const { rows } = await db.query<SupervisorRelease>(
    `SELECT r.id, ${RAW_VERSION} AS raw_version, r.status, r.is_final, r.is_invalidated, r.commit,
            dt.is_of__cpu_architecture AS architecture, a.uuid AS fleet_uuid, a.slug AS fleet_slug
       FROM "release" r
       JOIN "application" a ON a.id = r.belongs_to__application
       JOIN "organization" o ON o.id = a.organization
       JOIN "device_type" dt ON dt.id = a.is_for__device_type
      WHERE r.id = $1 AND NOT a.is_host AND a.is_public AND o.handle = $2
        AND a.slug LIKE 'balena\\_os/%-supervisor'`,
    [id, OS_CATALOGUE_ORGANIZATION],
  );
  return rows[0];
}

export type UpdateDevice = {
  id: number;
  uuid: string;
  os_version: string | null;
  os_variant: string | null;
  is_connected_to_vpn: boolean;
  device_type: number;
  device_type_slug: string;
  architecture: number;
};

export async function devicesForUpdate(db: Db, ids: number[]): Promise<UpdateDevice[]> {
  const { rows } = await db.query<UpdateDevice>(
    `SELECT d.id, d.uuid, d.os_version, d.os_variant, d.is_connected_to_vpn, dt.id AS device_type,
            dt.slug AS device_type_slug, dt.is_of__cpu_architecture AS architecture
       FROM "device" d JOIN "device_type" dt ON dt.id = d.is_of__device_type WHERE d.id = ANY($1::int[])`,
    [ids],
  );
  return rows;
}

/** An OS update started: the device should run this host OS release. */
export async function setOperatingRelease(db: Db, device: number, release: number): Promise<void> {
  await db.query(`UPDATE "device" SET should_be_operated_by__release = $2 WHERE id = $1`, [device, release]);
}

/** The supervisor app of a device's target state: its supervisor release, when one is set. */
export async function managingRelease(
  db: Db,
  device: number,
): Promise<
  { id: number; commit: string; raw_version: string; fleet: number; fleet_uuid: string; fleet_slug: string } | undefined
> {
  const { rows } = await db.query<{
    id: number;
    commit: string;
    raw_version: string;
    fleet: number;
    fleet_uuid: string;
    fleet_slug: string;
  }>(
    `SELECT r.id, r.commit, ${RAW_VERSION} AS raw_version, a.id AS fleet, a.uuid AS fleet_uuid, a.slug AS fleet_slug
       FROM "device" d JOIN "release" r ON r.id = d.should_be_managed_by__release
       JOIN "application" a ON a.id = r.belongs_to__application WHERE d.id = $1`,
    [device],
  );
  return rows[0];
}
