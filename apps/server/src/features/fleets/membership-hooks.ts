import { type ApplicationClass, DEFAULT_FLEET_MEMBERSHIP_ROLE, fleetRoleRefusal } from "@flotilla/domain";
import { FlotillaError } from "../../errors.ts";
import type { ResourceHooks } from "../../odata/index.ts";
import {
  fleetRoleId,
  fleetRoleName,
  idIn,
  isOrganizationMember,
  isPaidOrganization,
  planFeatures,
  type Q,
  userByUsername,
} from "../organizations/queries.ts";

type Fleet = { id: number; organization: number; is_of__class: ApplicationClass };

async function fleetById(tx: Q, id: number): Promise<Fleet | undefined> {
  const { rows } = await tx.query<Fleet>('SELECT id, organization, is_of__class FROM "application" WHERE id = $1', [
    id,
  ]);
  return rows[0];
}

/** Paid-only roles need a paid plan, the limited roles a plan providing them, operator roles a fleet (spec 2 §6, spec 1 §6.2). */
export async function refuseFleetRole(tx: Q, fleet: Fleet, roleId: number) {
  const role = await fleetRoleName(tx, roleId);
  if (role === undefined) return;
  const refusal = fleetRoleRefusal(role, {
    paidPlan: await isPaidOrganization(tx, fleet.organization),
    planFeatures: await planFeatures(tx, fleet.organization),
    applicationClass: fleet.is_of__class,
  });
  if (refusal) throw new FlotillaError(refusal);
}

const fixed = (body: Record<string, unknown>, names: string[], what: string) => {
  for (const name of names) {
    if (body[name] !== undefined) throw new FlotillaError("bad_request", `"${name}" of ${what} cannot change`);
  }
};

/**
 * Fleet members (balena-sdk `application.membership.create` sends `username`): the user must be a
 * member of the fleet's organization; the role defaults to developer (spec 2 §6).
 */
export const userApplicationMembershipHooks: ResourceHooks = {
  async beforeCreate({ tx, body }) {
    if (typeof body.username === "string") body.user = await userByUsername(tx, body.username);
    delete body.username;
    const fleetId = idIn(body.is_member_of__application, body.application);
    const fleet = fleetId === undefined ? undefined : await fleetById(tx, fleetId);
    if (!fleet) return;
    const userId = idIn(body.user, body.includes__user);
    if (userId !== undefined && !(await isOrganizationMember(tx, userId, fleet.organization))) {
      throw new FlotillaError("organization_membership_required");
    }
    body.application_membership_role ??= await fleetRoleId(tx, DEFAULT_FLEET_MEMBERSHIP_ROLE);
    await refuseFleetRole(tx, fleet, Number(body.application_membership_role));
  },
  async beforeUpdate({ tx, ids, body }) {
    fixed(body, ["user", "includes__user", "is_member_of__application", "application"], "a fleet membership");
    if (body.application_membership_role === undefined) return;
    const { rows } = await tx.query<{ app: number }>(
      'SELECT DISTINCT is_member_of__application AS app FROM "user_application_membership" WHERE id = ANY($1::int[])',
      [ids],
    );
    for (const { app } of rows) {
      const fleet = await fleetById(tx, app);
      if (fleet) await refuseFleetRole(tx, fleet, Number(body.application_membership_role));
    }
  },
};

/** A team's access to a fleet: a team of the fleet's organization, with a role the plan allows. */
export const teamApplicationAccessHooks: ResourceHooks = {
  async beforeCreate({ tx, body }) {
    const fleetId = idIn(body.grants_access_to__application, body.application);
    const teamId = idIn(body.team, body.is_accessible_by__team);
    if (fleetId === undefined || teamId === undefined) return;
    const fleet = await fleetById(tx, fleetId);
    const { rows } = await tx.query<{ org: number }>(
      'SELECT belongs_to__organization AS org FROM "team" WHERE id = $1',
      [teamId],
    );
    if (!fleet || !rows[0]) return;
    if (rows[0].org !== fleet.organization) {
      throw new FlotillaError("bad_request", "The team and the fleet must belong to the same organization");
    }
    body.application_membership_role ??= await fleetRoleId(tx, DEFAULT_FLEET_MEMBERSHIP_ROLE);
    await refuseFleetRole(tx, fleet, Number(body.application_membership_role));
  },
  async beforeUpdate({ tx, ids, body }) {
    fixed(body, ["team", "is_accessible_by__team", "grants_access_to__application", "application"], "a team's access");
    if (body.application_membership_role === undefined) return;
    const { rows } = await tx.query<{ app: number }>(
      'SELECT DISTINCT grants_access_to__application AS app FROM "team_application_access" WHERE id = ANY($1::int[])',
      [ids],
    );
    for (const { app } of rows) {
      const fleet = await fleetById(tx, app);
      if (fleet) await refuseFleetRole(tx, fleet, Number(body.application_membership_role));
    }
  },
};
