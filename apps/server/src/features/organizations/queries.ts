import type { Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";

/** What the hooks and routes of this area query with: a transaction or the database. */
export type Q = Pick<Queryable, "query">;

/** The user behind an actor, or undefined (fleets, devices). */
export async function userOfActor(tx: Q, actorId: number | undefined): Promise<number | undefined> {
  if (actorId === undefined) return undefined;
  const { rows } = await tx.query<{ id: number }>('SELECT id FROM "user" WHERE actor = $1', [actorId]);
  return rows[0]?.id;
}

/** A user by username, case-insensitively; a 400 naming it when there is none. */
export async function userByUsername(tx: Q, username: string): Promise<number> {
  const name = username.trim();
  if (name === "") throw new FlotillaError("bad_request", '"username" is required');
  const { rows } = await tx.query<{ id: number }>('SELECT id FROM "user" WHERE lower(username) = lower($1)', [name]);
  const id = rows[0]?.id;
  if (id === undefined) throw new FlotillaError("user_not_found", undefined, { params: { username: name } });
  return id;
}

/** Whether the user administers at least one organization (what creating one needs: docs/decisions.md). */
export async function administersAnOrganization(tx: Q, userId: number): Promise<boolean> {
  const { rows } = await tx.query(
    `SELECT 1 FROM "organization_membership" m
       JOIN "organization_membership_role" r ON r.id = m.organization_membership_role AND r.name = 'administrator'
      WHERE m."user" = $1 LIMIT 1`,
    [userId],
  );
  return rows.length > 0;
}

export async function isOrganizationMember(tx: Q, userId: number, organizationId: number): Promise<boolean> {
  const { rows } = await tx.query(
    'SELECT 1 FROM "organization_membership" WHERE "user" = $1 AND is_member_of__organization = $2',
    [userId, organizationId],
  );
  return rows.length > 0;
}

/** An organization is on a paid plan when its active subscription's plan is not `free`. */
export async function isPaidOrganization(tx: Q, organizationId: number): Promise<boolean> {
  const { rows } = await tx.query(
    `SELECT 1 FROM "subscription" s JOIN "plan" p ON p.id = s.is_for__plan
      WHERE s.is_for__organization = $1 AND s.starts_on__date <= now()
        AND (s.ends_on__date IS NULL OR s.ends_on__date > now()) AND p.billing_code IS DISTINCT FROM 'free'`,
    [organizationId],
  );
  return rows.length > 0;
}

/** The plan of the organization's active subscription; without one, the free plan. */
const ACTIVE_PLAN = `coalesce(
  (SELECT s.is_for__plan FROM "subscription" s
    WHERE s.is_for__organization = $1 AND s.starts_on__date <= now() AND (s.ends_on__date IS NULL OR s.ends_on__date > now())
    ORDER BY s.starts_on__date DESC LIMIT 1),
  (SELECT id FROM "plan" WHERE billing_code = 'free'))`;

/** The slugs of the features the organization's plan provides (`plan__provides__feature`). */
export async function planFeatures(tx: Q, organizationId: number): Promise<string[]> {
  const { rows } = await tx.query<{ slug: string }>(
    `SELECT f.slug FROM "plan_feature" pf JOIN "feature" f ON f.id = pf.feature WHERE pf.plan = ${ACTIVE_PLAN}`,
    [organizationId],
  );
  return rows.map((row) => row.slug);
}

/** Whether the organization's plan provides a feature (`preview:safe-roles`, `saml`, …). */
export async function planProvides(tx: Q, organizationId: number, featureSlug: string): Promise<boolean> {
  const { rows } = await tx.query(
    `SELECT 1 FROM "plan_feature" pf JOIN "feature" f ON f.id = pf.feature
      WHERE pf.plan = ${ACTIVE_PLAN} AND f.slug = $2`,
    [organizationId, featureSlug],
  );
  return rows.length > 0;
}

export async function organizationRoleId(tx: Q, name: string): Promise<number> {
  const { rows } = await tx.query<{ id: number }>('SELECT id FROM "organization_membership_role" WHERE name = $1', [
    name,
  ]);
  const id = rows[0]?.id;
  if (id === undefined) throw new Error(`organization role ${name} is missing`);
  return id;
}

export async function fleetRoleId(tx: Q, name: string): Promise<number> {
  const { rows } = await tx.query<{ id: number }>('SELECT id FROM "application_membership_role" WHERE name = $1', [
    name,
  ]);
  const id = rows[0]?.id;
  if (id === undefined) throw new Error(`fleet role ${name} is missing`);
  return id;
}

export async function fleetRoleName(tx: Q, id: number): Promise<string | undefined> {
  const { rows } = await tx.query<{ name: string }>('SELECT name FROM "application_membership_role" WHERE id = $1', [
    id,
  ]);
  return rows[0]?.name;
}

/** Organizations among `organizationIds` left without an administrator. */
export async function refuseOrganizationsWithoutAdmin(tx: Q, organizationIds: number[]) {
  if (organizationIds.length === 0) return;
  const { rows } = await tx.query(
    `SELECT o.id FROM "organization" o WHERE o.id = ANY($1::int[]) AND NOT EXISTS (
       SELECT 1 FROM "organization_membership" m JOIN "organization_membership_role" r ON r.id = m.organization_membership_role
        WHERE m.is_member_of__organization = o.id AND r.name = 'administrator')`,
    [organizationIds],
  );
  if (rows.length > 0) throw new FlotillaError("cannot_delete_last_organization_admin");
}

/** A body's id value as an integer, or undefined (missing or malformed: the engine's checks answer 400). */
export function idIn(...values: unknown[]): number | undefined {
  for (const value of values) {
    if (typeof value === "number" && Number.isSafeInteger(value)) return value;
  }
  return undefined;
}
