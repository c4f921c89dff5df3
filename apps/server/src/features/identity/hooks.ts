import { isHttpUrl, normalizeCertificate, SAML_PLAN_FEATURE, ssoIdentifierProblem } from "@flotilla/domain";
import type { Database, Tx } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import type { WriteValues } from "../../odata/compile-write.ts";
import type { ResourceHooks } from "../../odata/index.ts";
import { planProvides } from "../organizations/queries.ts";
import { planProvidesSql } from "./queries.ts";

/** A provider nobody gave an organization within this time is removed (it frees its SSO identifier). */
export const ORPHAN_TTL_MS = 60 * 60 * 1000;
/** How often each instance looks for such providers (one instance at a time does the work). */
export const ORPHAN_SWEEP_INTERVAL_MS = 5 * 60 * 1000;
const ORPHAN_SWEEP_LOCK = 0x69647073; // "idps"

/**
 * Removes the identity providers that have had no organization for ORPHAN_TTL_MS since their
 * creation: one whose creator never gave it one (an SSO identifier must not stay taken by a
 * provider nobody can use), or whose last organization was deleted. Such a provider signs
 * nobody in (queries.ts usableProvider), so its SAML accounts, links nobody can use, go with it.
 * Answers the ids removed.
 */
export async function deleteOrphanProviders(tx: Pick<Tx, "query">, now = Date.now()): Promise<number[]> {
  const orphans = `SELECT i.id FROM "identity_provider" i WHERE i.created_at < $1
      AND NOT EXISTS (SELECT 1 FROM "identity_provider_membership" m WHERE m.is_authorized_by__identity_provider = i.id)`;
  const cutoff = new Date(now - ORPHAN_TTL_MS);
  await tx.query(`DELETE FROM "saml_account" WHERE was_generated_by__identity_provider IN (${orphans})`, [cutoff]);
  const { rows } = await tx.query<{ id: number }>(
    `DELETE FROM "identity_provider" WHERE id IN (${orphans}) RETURNING id`,
    [cutoff],
  );
  return rows.map((row) => Number(row.id));
}

/**
 * The periodic sweep of orphan providers: under an advisory lock in its own transaction, so with
 * several instances one does it and the others skip this round. Answers the ids removed.
 */
export async function sweepOrphanProviders(db: Database, now = Date.now()): Promise<number[]> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [
      ORPHAN_SWEEP_LOCK,
    ]);
    if (!rows[0]?.locked) return [];
    return deleteOrphanProviders(tx, now);
  });
}

/** The form's rules (spec 1 §5; spec 3 §5), as the data API applies them; the certificate is stored as PEM. */
function checkProviderFields(body: WriteValues) {
  if (typeof body.sso_identifier === "string") {
    const problem = ssoIdentifierProblem(body.sso_identifier);
    if (problem) throw new FlotillaError("bad_request", `sso_identifier: ${problem}`);
  }
  if (body.entry_point !== undefined && (typeof body.entry_point !== "string" || !isHttpUrl(body.entry_point))) {
    throw new FlotillaError("bad_request", "entry_point: Invalid URL");
  }
  if (body.issuer !== undefined && (typeof body.issuer !== "string" || body.issuer.trim() === "")) {
    throw new FlotillaError("bad_request", "issuer: This field is required");
  }
  if (body.certificate !== undefined) {
    const pem = typeof body.certificate === "string" ? normalizeCertificate(body.certificate) : undefined;
    if (!pem) throw new FlotillaError("invalid_certificate_format");
    body.certificate = pem;
  }
}

async function refuseWithoutSaml(tx: Tx, organization: number) {
  if (await planProvides(tx, organization, SAML_PLAN_FEATURE)) return;
  const { rows } = await tx.query<{ handle: string }>(`SELECT handle FROM "organization" WHERE id = $1`, [
    organization,
  ]);
  // An organization the caller cannot name is left to the permission check.
  if (rows[0]) throw new FlotillaError("saml_not_in_plan", undefined, { params: { organization: rows[0].handle } });
}

/**
 * Identity providers (spec 3 §2, §5, §6). Created by a user who administers an organization
 * whose plan includes SAML; the creator then gives it its first organization (the membership
 * hooks), and may edit or remove it until then. One with SAML accounts cannot be removed: they
 * are revoked first. One left without an organization is removed after ORPHAN_TTL_MS.
 */
export const identityProviderHooks: ResourceHooks = {
  async beforeCreate({ tx, body, actorId }) {
    checkProviderFields(body);
    const { rows } = await tx.query(
      `SELECT 1 FROM "organization_membership" m
         JOIN "user" u ON u.id = m."user"
         JOIN "organization_membership_role" r ON r.id = m.organization_membership_role
        WHERE u.actor = $1 AND r.name = 'administrator' AND ${planProvidesSql("m.is_member_of__organization", SAML_PLAN_FEATURE)}`,
      [actorId ?? null],
    );
    if (rows.length === 0) {
      throw new FlotillaError("saml_not_in_plan", undefined, {
        params: { organization: "any organization you administer" },
      });
    }
    // The periodic sweep removes them too; here an SSO identifier an orphan held is free at once.
    await deleteOrphanProviders(tx);
    body.created_by__actor = actorId ?? null;
  },
  beforeUpdate({ body }) {
    checkProviderFields(body);
  },
  async beforeDelete({ tx, ids }) {
    const { rows } = await tx.query(
      `SELECT 1 FROM "saml_account" WHERE was_generated_by__identity_provider = ANY($1::int[]) LIMIT 1`,
      [ids],
    );
    if (rows.length > 0) throw new FlotillaError("idp_has_saml_accounts");
  },
};

async function refuseForeignTeam(tx: Tx, membershipOrganization: unknown, team: unknown) {
  if (team === null || team === undefined) return;
  const { rows } = await tx.query(`SELECT 1 FROM "team" WHERE id = $1 AND belongs_to__organization = $2`, [
    team,
    membershipOrganization,
  ]);
  if (rows.length === 0) {
    throw new FlotillaError(
      "bad_request",
      "grants_access_to__team: the team must belong to the membership's organization",
    );
  }
}

/**
 * An identity provider's organizations: each on a plan with SAML; the first one only from the
 * provider's creator (later ones need an administrator of every organization it has, which the
 * permission checks); a team granted must be the organization's; the last one cannot go.
 */
export const identityProviderMembershipHooks: ResourceHooks = {
  async beforeCreate({ tx, body, actorId }) {
    const organization = body.organization ?? body.authorizes__organization;
    const provider = body.is_authorized_by__identity_provider ?? body.identity_provider;
    await refuseWithoutSaml(tx, Number(organization));
    const { rows } = await tx.query<{ created_by__actor: number | null; organizations: number }>(
      `SELECT i.created_by__actor, (SELECT count(*)::int FROM "identity_provider_membership" m
                                     WHERE m.is_authorized_by__identity_provider = i.id) AS organizations
         FROM "identity_provider" i WHERE i.id = $1`,
      [provider],
    );
    const found = rows[0];
    if (found && found.organizations === 0 && found.created_by__actor !== actorId) {
      throw new FlotillaError("forbidden");
    }
    await refuseForeignTeam(tx, organization, body.grants_access_to__team);
  },
  async beforeUpdate({ tx, ids, body }) {
    if (body.grants_access_to__team === undefined) return;
    for (const id of ids) {
      const { rows } = await tx.query<{ organization: number }>(
        `SELECT organization FROM "identity_provider_membership" WHERE id = $1`,
        [id],
      );
      await refuseForeignTeam(tx, rows[0]?.organization, body.grants_access_to__team);
    }
  },
  async afterDelete({ tx, rows }) {
    const providers = [...new Set(rows.map((r) => Number(r.is_authorized_by__identity_provider)))];
    const { rows: orphaned } = await tx.query(
      `SELECT 1 FROM "identity_provider" i WHERE i.id = ANY($1::int[])
          AND NOT EXISTS (SELECT 1 FROM "identity_provider_membership" m WHERE m.is_authorized_by__identity_provider = i.id)`,
      [providers],
    );
    if (orphaned.length > 0) throw new FlotillaError("idp_must_have_at_least_one_org");
  },
};
