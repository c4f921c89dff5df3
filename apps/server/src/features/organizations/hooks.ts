import { handleFromName } from "@flotilla/domain";
import { FlotillaError, inBalenaWords } from "../../errors.ts";
import type { ResourceHooks } from "../../odata/index.ts";
import {
  administersAnOrganization,
  idIn,
  isOrganizationMember,
  type Q,
  refuseOrganizationsWithoutAdmin,
  userByUsername,
  userOfActor,
} from "./queries.ts";

/** Organization and team names: required, trimmed, at most 100 characters (spec 3 §5). */
function requiredName(value: unknown): string {
  const name = typeof value === "string" ? value.trim() : "";
  if (name === "") throw new FlotillaError("name_required");
  if (name.length > 100) throw new FlotillaError("bad_request", "The name should not be more than 100 characters long");
  return name;
}

/** Organization names are unique case-insensitively among the user's organizations (spec 3 §5, fields_errors.already_used). */
async function refuseTakenOrganizationName(tx: Q, userId: number | undefined, name: string, exceptId?: number) {
  if (userId === undefined) return;
  const { rows } = await tx.query(
    `SELECT 1 FROM "organization" o JOIN "organization_membership" m ON m.is_member_of__organization = o.id
      WHERE m."user" = $1 AND lower(o.name) = lower($2) AND o.id IS DISTINCT FROM $3`,
    [userId, name, exceptId ?? null],
  );
  // "unique" in the API, as balena's clients look for; the dashboard shows the spec's text.
  if (rows.length > 0) throw inBalenaWords("already_used", '"name" must be unique.', { type: "organization" });
}

/**
 * Organizations created through the data API: a unique handle from the name when none is given,
 * and the creator becomes its administrator in the same transaction. Only a sole administrator
 * deletes one (spec 3 §6); platform administrators may always.
 */
export const organizationHooks: ResourceHooks = {
  async beforeCreate({ tx, body, actorId, permissions }) {
    const userId = await userOfActor(tx, actorId);
    // Administrators (of some organization) and platform administrators create organizations;
    // other roles only read them (spec 1 §6.2).
    if (
      permissions.filter("organization", "update") !== "all" &&
      !(userId && (await administersAnOrganization(tx, userId)))
    ) {
      throw new FlotillaError("organization_create_not_admin");
    }
    body.name = requiredName(body.name);
    await refuseTakenOrganizationName(tx, userId, String(body.name));
    const base = body.handle === undefined ? handleFromName(String(body.name)) : String(body.handle);
    if (!/^[a-z0-9_-]+$/.test(base)) {
      throw new FlotillaError(
        "bad_request",
        "The handle can only contain lowercase letters, digits, hyphens or underscores",
      );
    }
    if (body.handle === undefined) {
      const { rows } = await tx.query<{ handle: string }>(
        'SELECT lower(handle) AS handle FROM "organization" WHERE lower(handle) LIKE $1',
        [`${base.replace(/[_%\\]/g, "\\$&")}%`],
      );
      const taken = new Set(rows.map((r) => r.handle));
      let handle = base;
      for (let n = 1; taken.has(handle); n++) handle = `${base}${n}`;
      body.handle = handle;
    }
  },

  async afterCreate({ tx, actorId, id }) {
    const { rowCount } = await tx.query(
      `INSERT INTO "organization_membership" ("user", is_member_of__organization, organization_membership_role)
       SELECT u.id, $2, r.id FROM "user" u, "organization_membership_role" r WHERE u.actor = $1 AND r.name = 'administrator'`,
      [actorId, id],
    );
    if (rowCount !== 1) throw new FlotillaError("forbidden", "Only users can create organizations");
  },

  async beforeUpdate({ tx, ids, body, actorId }) {
    if (body.name === undefined) return;
    body.name = requiredName(body.name);
    if (ids.length !== 1) throw new FlotillaError("bad_request", "Rename one organization at a time");
    await refuseTakenOrganizationName(tx, await userOfActor(tx, actorId), String(body.name), ids[0]);
  },

  async beforeDelete({ tx, ids, permissions }) {
    if (permissions.filter("organization", "delete") === "all") return;
    const { rows } = await tx.query(
      `SELECT m.is_member_of__organization FROM "organization_membership" m
         JOIN "organization_membership_role" r ON r.id = m.organization_membership_role AND r.name = 'administrator'
        WHERE m.is_member_of__organization = ANY($1::int[])
        GROUP BY m.is_member_of__organization HAVING count(*) > 1`,
      [ids],
    );
    if (rows.length > 0) throw new FlotillaError("organization_delete_not_sole_admin");
  },
};

/**
 * Organization memberships: only the role changes (administrator ↔ member); removing a member or
 * leaving also ends their team memberships and fleet memberships in that organization; no change
 * may leave an organization without an administrator (cannot_delete_last_organization_admin).
 */
export const organizationMembershipHooks: ResourceHooks = {
  async beforeUpdate({ tx, ids, body, actorId, permissions }) {
    for (const name of ["user", "includes__user", "is_member_of__organization", "organization"]) {
      if (body[name] !== undefined) throw new FlotillaError("bad_request", `"${name}" of a membership cannot change`);
    }
    if (body.organization_membership_role === undefined) return;
    if (permissions.filter("organization_membership", "update") !== "all") {
      // Outside the organizations they administer, a user only demotes themselves (the permission
      // lets them change their own membership; promoting oneself would pass the check afterwards).
      const { rows: foreign } = await tx.query(
        `SELECT 1 FROM "organization_membership" m WHERE m.id = ANY($1::int[]) AND NOT EXISTS (
           SELECT 1 FROM "organization_membership" c JOIN "organization_membership_role" r ON r.id = c.organization_membership_role
            WHERE c.is_member_of__organization = m.is_member_of__organization AND c."user" = $2 AND r.name = 'administrator')`,
        [ids, (await userOfActor(tx, actorId)) ?? null],
      );
      if (foreign.length > 0) throw new FlotillaError("unauthorized");
    }
    // Checked before the write: after it, the caller may no longer be allowed to see the result.
    const { rows } = await tx.query(
      `SELECT 1 FROM "organization_membership" m WHERE m.id = ANY($1::int[])
          AND NOT EXISTS (SELECT 1 FROM "organization_membership_role" r WHERE r.id = $2 AND r.name = 'administrator')
          AND NOT EXISTS (SELECT 1 FROM "organization_membership" o JOIN "organization_membership_role" r ON r.id = o.organization_membership_role
                WHERE o.is_member_of__organization = m.is_member_of__organization AND r.name = 'administrator' AND o.id <> ALL($1::int[]))`,
      [ids, body.organization_membership_role],
    );
    if (rows.length > 0) throw new FlotillaError("cannot_delete_last_organization_admin");
  },
  async afterDelete({ tx, rows }) {
    const organizations = [...new Set(rows.map((r) => Number(r.is_member_of__organization)))];
    await refuseOrganizationsWithoutAdmin(tx, organizations);
    for (const row of rows) {
      await tx.query(
        `DELETE FROM "team_membership" tm USING "team" t
          WHERE tm.is_member_of__team = t.id AND tm."user" = $1 AND t.belongs_to__organization = $2`,
        [row.user, row.is_member_of__organization],
      );
      await tx.query(
        `DELETE FROM "user_application_membership" uam USING "application" a
          WHERE uam.is_member_of__application = a.id AND uam."user" = $1 AND a.organization = $2`,
        [row.user, row.is_member_of__organization],
      );
    }
  },
};

async function refuseTakenTeamName(tx: Q, organization: number, name: string, exceptId?: number) {
  const { rows } = await tx.query(
    'SELECT 1 FROM "team" WHERE belongs_to__organization = $1 AND lower(name) = lower($2) AND id IS DISTINCT FROM $3',
    [organization, name, exceptId ?? null],
  );
  if (rows.length > 0) {
    throw inBalenaWords("already_used", '"belongs_to__organization" and "name" must be unique.', { type: "team" });
  }
}

/** Teams: a required name, unique case-insensitively within the organization (spec 3 §5). */
export const teamHooks: ResourceHooks = {
  async beforeCreate({ tx, body }) {
    body.name = requiredName(body.name);
    const organization = idIn(body.belongs_to__organization);
    if (organization !== undefined) await refuseTakenTeamName(tx, organization, String(body.name));
  },
  async beforeUpdate({ tx, ids, body }) {
    if (body.belongs_to__organization !== undefined) {
      throw new FlotillaError("bad_request", 'The "belongs_to__organization" of a team cannot change');
    }
    if (body.name === undefined) return;
    body.name = requiredName(body.name);
    if (ids.length !== 1) throw new FlotillaError("bad_request", "Rename one team at a time");
    const { rows } = await tx.query<{ org: number }>(
      'SELECT belongs_to__organization AS org FROM "team" WHERE id = $1',
      [ids[0]],
    );
    if (rows[0]) await refuseTakenTeamName(tx, rows[0].org, String(body.name), ids[0]);
  },
};

/** Team members are added by `username` (balena-sdk) or `user`, and must belong to the team's organization. */
export const teamMembershipHooks: ResourceHooks = {
  async beforeCreate({ tx, body }) {
    if (typeof body.username === "string") body.user = await userByUsername(tx, body.username);
    delete body.username;
    const userId = idIn(body.user, body.includes__user);
    const team = idIn(body.is_member_of__team, body.team);
    if (userId === undefined || team === undefined) return;
    const { rows } = await tx.query<{ org: number }>(
      'SELECT belongs_to__organization AS org FROM "team" WHERE id = $1',
      [team],
    );
    const organization = rows[0]?.org;
    if (
      organization !== undefined &&
      Number.isInteger(userId) &&
      !(await isOrganizationMember(tx, userId, organization))
    ) {
      throw new FlotillaError(
        "organization_membership_required",
        "It is necessary that each user that is member of a team, is member of the organization of the team",
      );
    }
  },
  beforeUpdate() {
    throw new FlotillaError("bad_request", "A team membership cannot change; remove it and add another");
  },
};
