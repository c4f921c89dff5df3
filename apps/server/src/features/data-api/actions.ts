import { allows, GLOBAL_ROLE_FLEET_PERMISSIONS, ORGANIZATION_ROLE_PERMISSIONS } from "@flotilla/domain";
import type { Queryable } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import type { Caller } from "../../lib/authenticate.ts";
import { fleetRolesFor } from "./permissions.ts";

/**
 * Custom actions outside the data API's rows (spec 2 §6 "Device action permissions", spec 3 §6):
 * a device's reboot, an OS update, a fleet's transfer, an organization's billing. Checked through
 * the same role tables as /v7, so an endpoint refuses exactly what the dashboard hides.
 * `permission` is `resource.action` (`device.supervisor-proxy-write`, `application.transfer`).
 */
type Target = { fleet: number } | { device: number } | { organization: number };

type Db = Pick<Queryable, "query">;

/** Who acts: hooks know only the actor and (when any) the global roles. */
type Actor = Pick<Caller, "actor" | "globalRoles">;

/** May the caller do `permission` on the fleet, the device's fleet or the organization? */
const GRANTED = `"is_accessible_by_support_until__date" > now()`;

export async function mayDo(db: Db, caller: Actor, permission: string, target: Target): Promise<boolean> {
  if ("organization" in target) return mayDoInOrganization(db, caller, permission, target.organization);
  const { roles, everywhere } = fleetRolesFor(permission, caller.globalRoles);
  const fleet =
    "fleet" in target
      ? { sql: "$1::int", value: target.fleet }
      : { sql: `(SELECT "belongs_to__application" FROM "device" WHERE "id" = $1)`, value: target.device };
  // Platform staff also read what they may act on.
  const staffRead =
    permission.endsWith(".read") && caller.globalRoles.some((role) => role in GLOBAL_ROLE_FLEET_PERMISSIONS);
  if (everywhere || staffRead) {
    // Platform staff act only where support access is granted (spec 2 §5 "Support access").
    const device = "device" in target ? `OR EXISTS (SELECT 1 FROM "device" WHERE "id" = $1 AND ${GRANTED})` : "";
    const { rows } = await db.query(
      `SELECT 1 FROM "application" WHERE "id" = ${fleet.sql} AND (${GRANTED} ${device})`,
      [fleet.value],
    );
    if (rows.length > 0) return true;
  }
  if (roles.length === 0) return false;
  const { rows } = await db.query(
    `SELECT 1 FROM "fleet_access" WHERE "application" = ${fleet.sql} AND "actor" = $2 AND "role" = ANY($3::text[]) LIMIT 1`,
    [fleet.value, caller.actor, roles],
  );
  return rows.length > 0;
}

async function mayDoInOrganization(db: Db, caller: Actor, permission: string, organization: number) {
  const [resource = "", action = ""] = permission.split(".");
  if (
    caller.globalRoles.includes("balena_admin") &&
    (resource === "organization" || resource === "organization_membership")
  ) {
    return true;
  }
  const { rows } = await db.query<{ role: string; administrators: number }>(
    `SELECT r."name" AS "role",
            (SELECT count(*)::int FROM "organization_membership" AS a
               JOIN "organization_membership_role" AS ar ON ar."id" = a."organization_membership_role"
              WHERE a."is_member_of__organization" = m."is_member_of__organization" AND ar."name" = 'administrator') AS "administrators"
       FROM "organization_membership" AS m
       JOIN "organization_membership_role" AS r ON r."id" = m."organization_membership_role"
       JOIN "user" AS u ON u."id" = m."user"
      WHERE m."is_member_of__organization" = $1 AND u."actor" = $2`,
    [organization, caller.actor],
  );
  const [membership] = rows;
  if (!membership) return false;
  const granted = ORGANIZATION_ROLE_PERMISSIONS[membership.role as keyof typeof ORGANIZATION_ROLE_PERMISSIONS] ?? [];
  if (!allows(granted, resource, action)) return false;
  // Only a sole administrator may delete the organization (spec 3 §6); others leave it.
  return permission !== "organization.delete" || membership.administrators === 1;
}

/** Throws 403 unless the caller may do `permission` on the target. */
export async function requireAction(db: Db, caller: Actor, permission: string, target: Target): Promise<void> {
  if (!(await mayDo(db, caller, permission, target))) throw notAllowed(permission);
}

/**
 * A refused action that names the right it needs, as the data API's refusals name theirs
 * (spec 1 §6.2: "A no-permission message lists the actor types that lack rights").
 */
export function notAllowed(permission: string, actorType = "user"): FlotillaError {
  return new FlotillaError(
    "forbidden",
    `You are not allowed to do this: ${actorType} lacks the permission ${permission}.`,
  );
}
