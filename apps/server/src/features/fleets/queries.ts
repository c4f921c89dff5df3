import type { ApplicationClass, ApplicationType } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";

/** The fleets' SQL (spec 2 §5): what the hooks need to know about fleets, types and organizations. */
type Q = Pick<Queryable, "query">;

export type FleetFacts = {
  organization: number;
  handle: string;
  isFrozen: boolean;
  applicationClass: ApplicationClass;
  appName: string;
  isLegacy: boolean;
  repositoryUrl: string | null;
  architecture: number | null;
};

export async function fleetFacts(tx: Q, id: number): Promise<FleetFacts | undefined> {
  const { rows } = await tx.query<FleetFacts>(
    `SELECT a.organization, o.handle, o.is_frozen AS "isFrozen", a.is_of__class AS "applicationClass",
            a.app_name AS "appName", coalesce(t.is_legacy, false) AS "isLegacy",
            a.is_stored_at__repository_url AS "repositoryUrl", dt.is_of__cpu_architecture AS "architecture"
       FROM "application" a
       JOIN "organization" o ON o.id = a.organization
       LEFT JOIN "application_type" t ON t.id = a.application_type
       LEFT JOIN "device_type" dt ON dt.id = a.is_for__device_type
      WHERE a.id = $1`,
    [id],
  );
  return rows[0];
}

export async function organizationFacts(tx: Q, id: number): Promise<{ handle: string; isFrozen: boolean } | undefined> {
  const { rows } = await tx.query<{ handle: string; isFrozen: boolean }>(
    'SELECT handle, is_frozen AS "isFrozen" FROM "organization" WHERE id = $1',
    [id],
  );
  return rows[0];
}

/**
 * Is another fleet, app or block of the organization named `name` (case-insensitively)? Every
 * class counts: the slug `{handle}/{name}` is unique.
 */
export async function isNameTaken(tx: Q, organization: number, name: string, exceptId?: number): Promise<boolean> {
  const { rows } = await tx.query(
    `SELECT 1 FROM "application" WHERE organization = $1 AND lower(app_name) = lower($2) AND id IS DISTINCT FROM $3`,
    [organization, name, exceptId ?? null],
  );
  return rows.length > 0;
}

export async function isOrganizationAdministrator(tx: Q, organization: number, actor: number): Promise<boolean> {
  const { rows } = await tx.query(
    `SELECT 1 FROM "organization_membership" m
       JOIN "organization_membership_role" r ON r.id = m.organization_membership_role AND r.name = 'administrator'
       JOIN "user" u ON u.id = m."user"
      WHERE m.is_member_of__organization = $1 AND u.actor = $2`,
    [organization, actor],
  );
  return rows.length > 0;
}

export async function applicationTypeById(
  tx: Q,
  id: number,
): Promise<(ApplicationType & { isLegacy: boolean; requiresPayment: boolean }) | undefined> {
  const { rows } = await tx.query<ApplicationType & { isLegacy: boolean; requiresPayment: boolean }>(
    `SELECT id, slug, name, description, is_legacy, requires_payment, supports_multicontainer, needs__os_version_range,
            is_legacy AS "isLegacy", requires_payment AS "requiresPayment"
       FROM "application_type" WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** The contract of a fleet's default device type (null when it has none). */
export async function fleetDeviceTypeContract(tx: Q, fleet: number): Promise<unknown> {
  const { rows } = await tx.query<{ contract: unknown }>(
    `SELECT dt.contract FROM "application" a JOIN "device_type" dt ON dt.id = a.is_for__device_type WHERE a.id = $1`,
    [fleet],
  );
  return rows[0]?.contract ?? null;
}

export async function applicationTypeIdBySlug(tx: Q, slug: string): Promise<number | undefined> {
  const { rows } = await tx.query<{ id: number }>('SELECT id FROM "application_type" WHERE slug = $1', [slug]);
  return rows[0]?.id;
}

export async function deviceTypeArchitecture(
  tx: Q,
  id: number,
): Promise<{ slug: string; architecture: number | null; contract: unknown } | undefined> {
  const { rows } = await tx.query<{ slug: string; architecture: number | null; contract: unknown }>(
    'SELECT slug, is_of__cpu_architecture AS "architecture", contract FROM "device_type" WHERE id = $1',
    [id],
  );
  return rows[0];
}

/** Devices of the organization (every fleet, app and block it owns). */
export async function organizationDeviceCount(tx: Q, organization: number): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "device" d JOIN "application" a ON a.id = d.belongs_to__application
      WHERE a.organization = $1`,
    [organization],
  );
  return Number(rows[0]?.n ?? 0);
}

export async function organizationOfFleet(tx: Q, fleet: number): Promise<number | undefined> {
  const { rows } = await tx.query<{ organization: number }>('SELECT organization FROM "application" WHERE id = $1', [
    fleet,
  ]);
  return rows[0]?.organization;
}

export async function newActor(tx: Q): Promise<number | undefined> {
  const { rows } = await tx.query<{ id: number }>('INSERT INTO "actor" DEFAULT VALUES RETURNING id');
  return rows[0]?.id;
}

/** Removes the fleets' devices and the devices' actors (their API keys cascade). */
export async function deleteFleetDevices(tx: Q, fleets: number[]): Promise<void> {
  const { rows } = await tx.query<{ actor: number }>(
    'DELETE FROM "device" WHERE belongs_to__application = ANY($1) RETURNING actor',
    [fleets],
  );
  if (rows.length > 0)
    await deleteActors(
      tx,
      rows.map((r) => r.actor),
    );
}

export async function deleteActors(tx: Q, actors: number[]): Promise<void> {
  await tx.query('DELETE FROM "actor" WHERE id = ANY($1)', [actors]);
}

/**
 * Before a fleet moves to another organization: the source organization's teams lose their
 * access, members who do not belong to the target lose their fleet membership, and pending fleet
 * invitations go (accepting one would join the target organization).
 */
export async function detachFromOrganization(tx: Q, fleet: number, target: number): Promise<void> {
  await tx.query(
    `DELETE FROM "team_application_access" ta USING "team" t
      WHERE ta.team = t.id AND ta.grants_access_to__application = $1 AND t.belongs_to__organization <> $2`,
    [fleet, target],
  );
  await tx.query(
    `DELETE FROM "user_application_membership" m
      WHERE m.is_member_of__application = $1
        AND NOT EXISTS (SELECT 1 FROM "organization_membership" om
                         WHERE om."user" = m."user" AND om.is_member_of__organization = $2)`,
    [fleet, target],
  );
  await tx.query('DELETE FROM "application_invite" WHERE is_invited_to__application = $1', [fleet]);
}

/** The slug of the fleet's default device type when it is private and the organization has no access to it. */
export async function privateDeviceTypeOutOfReach(
  tx: Q,
  fleet: number,
  organization: number,
): Promise<string | undefined> {
  const { rows } = await tx.query<{ slug: string }>(
    `SELECT dt.slug FROM "application" a JOIN "device_type" dt ON dt.id = a.is_for__device_type
      WHERE a.id = $1 AND dt.is_private
        AND NOT EXISTS (SELECT 1 FROM "organization_has_private_access_to_device_type" p
                         WHERE p.organization = $2 AND p.has_private_access_to__device_type = dt.id)`,
    [fleet, organization],
  );
  return rows[0]?.slug;
}
