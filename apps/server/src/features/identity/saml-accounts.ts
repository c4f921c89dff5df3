import crypto from "node:crypto";
import type { Tx } from "../../db/index.ts";
import { FlotillaError } from "../../errors.ts";
import { createPersonalOrganization } from "../account/service.ts";
import { createUser, findUserById, type User } from "../users/service.ts";
import { requireVouchedAddress } from "./domains.ts";
import type { SamlIdentity } from "./saml.ts";

/** How long the one-time code of a validated sign-in lasts (identity provider → dashboard → finalize). */
const CODE_TTL_MS = 5 * 60_000;

const hash = (code: string) => crypto.createHash("sha256").update(code).digest("hex");

async function issueCode(tx: Tx, providerId: number, identity: SamlIdentity, userId: number | null): Promise<string> {
  const code = crypto.randomBytes(32).toString("base64url");
  await tx.query(`DELETE FROM "saml_login_code" WHERE expires_at < now()`);
  await tx.query(
    `INSERT INTO "saml_login_code" (code_hash, expires_at, identity_provider, "user", remote_id, email, display_name)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      hash(code),
      new Date(Date.now() + CODE_TTL_MS),
      providerId,
      userId,
      identity.remoteId,
      identity.email,
      identity.displayName ?? null,
    ],
  );
  return code;
}

/**
 * Gives the user the organizations the identity provider authorizes (as members) and each one's
 * team, if the provider grants one. Only adds: an administrator removes access in the dashboard
 * (spec 3 §3). Nothing outside the provider's own memberships is ever granted, so a provider can
 * sign nobody into an organization that did not configure it.
 */
async function joinProviderOrganizations(tx: Tx, providerId: number, userId: number) {
  await tx.query(
    `INSERT INTO "organization_membership" ("user", is_member_of__organization, organization_membership_role)
     SELECT $2, ipm.organization, (SELECT id FROM "organization_membership_role" WHERE name = 'member')
       FROM "identity_provider_membership" ipm WHERE ipm.is_authorized_by__identity_provider = $1
     ON CONFLICT DO NOTHING`,
    [providerId, userId],
  );
  await tx.query(
    `INSERT INTO "team_membership" ("user", is_member_of__team)
     SELECT $2, ipm.grants_access_to__team
       FROM "identity_provider_membership" ipm WHERE ipm.is_authorized_by__identity_provider = $1
        AND ipm.grants_access_to__team IS NOT NULL
     ON CONFLICT DO NOTHING`,
    [providerId, userId],
  );
}

/**
 * The account a provider signs in must have an address at a domain the provider's organizations
 * verified, whatever the assertion says now: a provider that learned a NameID linked to someone
 * else's account cannot use it with an address at its own domain.
 */
async function requireVouchedAccount(tx: Tx, providerId: number, userId: number): Promise<User> {
  const user = await findUserById(tx.orm, userId);
  if (!user) throw new FlotillaError("saml_login_failed");
  await requireVouchedAddress(tx, providerId, user.email ?? "");
  return user;
}

/**
 * Where a validated SAML identity goes next, in the dashboard. The asserted address must be at
 * a domain one of the provider's organizations verified (docs/identity.md "Verified domains").
 * A known SAML account signs in; an email nobody has becomes a new SAML-only account (no
 * password, the provider vouches for the email) with its personal organization; an email that
 * an account already has is never linked by itself: that account's owner must sign in and
 * consent (`/saml/callback/merge`).
 */
export async function afterSamlResponse(tx: Tx, providerId: number, identity: SamlIdentity): Promise<string> {
  await requireVouchedAddress(tx, providerId, identity.email);
  const { rows: linked } = await tx.query<{ user: number }>(
    `SELECT belongs_to__user AS "user" FROM "saml_account" WHERE was_generated_by__identity_provider = $1 AND remote_id = $2`,
    [providerId, identity.remoteId],
  );
  let userId = linked[0]?.user;
  if (userId !== undefined) await requireVouchedAccount(tx, providerId, userId);
  if (userId === undefined) {
    const { rows: existing } = await tx.query<{ id: number }>(`SELECT id FROM "user" WHERE lower(email) = lower($1)`, [
      identity.email,
    ]);
    if (existing.length > 0) {
      const code = await issueCode(tx, providerId, identity, null);
      return `/saml/callback/merge?${new URLSearchParams({ code, shouldMergeWith: identity.email })}`;
    }
    const created = await createUser(tx.orm, { email: identity.email, password: null, isVerified: true });
    await createPersonalOrganization(tx.orm, created);
    await linkAccount(tx, providerId, identity, created.id);
    userId = created.id;
  }
  await joinProviderOrganizations(tx, providerId, userId);
  const code = await issueCode(tx, providerId, identity, userId);
  return `/saml/callback/signon?${new URLSearchParams({ code })}`;
}

async function linkAccount(tx: Tx, providerId: number, identity: SamlIdentity, userId: number) {
  await tx.query(
    `INSERT INTO "saml_account" (belongs_to__user, was_generated_by__identity_provider, remote_id, display_name)
     VALUES ($1, $2, $3, $4)`,
    [userId, providerId, identity.remoteId, identity.displayName ?? null],
  );
}

/**
 * POST /auth/saml/finalize: spends a one-time code and returns the user to start a session for.
 * The address and the account's address must still be at a domain the provider's organizations
 * verified. A sign-in code names its user. A merge code links the identity to the signed-in user (`signedIn`,
 * from the `jwt` the dashboard sends) only when that user's email equals the provider's,
 * compared case-insensitively (spec 1 §4), and neither side is linked elsewhere already.
 */
export async function finalizeSamlSignIn(tx: Tx, code: string, signedIn: number | undefined): Promise<User> {
  const { rows } = await tx.query<{
    identity_provider: number;
    user: number | null;
    remote_id: string;
    email: string;
    display_name: string | null;
  }>(`DELETE FROM "saml_login_code" WHERE code_hash = $1 AND expires_at > now() RETURNING *`, [hash(code)]);
  const found = rows[0];
  if (!found) throw new FlotillaError("saml_login_failed");
  // The domain may have been removed since the provider's answer.
  await requireVouchedAddress(tx, found.identity_provider, found.email);
  let userId = found.user;
  if (userId === null) {
    if (signedIn === undefined) throw new FlotillaError("saml_require_login");
    const current = await findUserById(tx.orm, signedIn);
    if (!current) throw new FlotillaError("saml_require_login");
    if ((current.email ?? "").toLowerCase() !== found.email.toLowerCase()) {
      throw new FlotillaError("saml_email_mismatch");
    }
    const { rows: taken } = await tx.query(
      `SELECT 1 FROM "saml_account" WHERE was_generated_by__identity_provider = $1 AND (remote_id = $2 OR belongs_to__user = $3)`,
      [found.identity_provider, found.remote_id, current.id],
    );
    if (taken.length > 0) throw new FlotillaError("saml_account_mismatch");
    const identity = { remoteId: found.remote_id, email: found.email, displayName: found.display_name ?? undefined };
    await linkAccount(tx, found.identity_provider, identity, current.id);
    await joinProviderOrganizations(tx, found.identity_provider, current.id);
    userId = current.id;
  }
  return requireVouchedAccount(tx, found.identity_provider, userId);
}
